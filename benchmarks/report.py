"""BENCHMARKS.md holds one top-level section per benchmark; each run replaces its own."""

from __future__ import annotations

import re
from pathlib import Path


def write_section(path: Path, section: str) -> None:
    """Replace the section of ``path`` that starts with ``section``'s first line (up to the
    next top-level heading), or add it at the end; the other sections stay as they are."""
    heading = section.splitlines()[0]
    text = path.read_text() if path.exists() else ""
    pattern = re.compile(rf"^{re.escape(heading)}\n.*?(?=^# |\Z)", re.S | re.M)
    if pattern.search(text):
        text = pattern.sub(lambda _: section.rstrip("\n") + "\n\n", text, count=1)
    else:
        text = text.rstrip("\n") + ("\n\n" if text else "") + section
    path.write_text(text.rstrip("\n") + "\n")
