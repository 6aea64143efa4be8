"""Players' names, as the other players are shown them."""

from __future__ import annotations

import unicodedata

MAX_LENGTH = 40

# bidirectional controls: a name holding one could show as another name, reversed
_BIDI_CONTROLS = set("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
# letters and symbols that show as nothing (Hangul fillers, the blank Braille pattern)
_BLANKS = set("\u115f\u1160\u3164\uffa0\u2800")


def name_problem(name: str) -> str | None:
    """Why ``name`` cannot be shown to the other players as it is, or None: it holds a
    control character (a NUL, a line or paragraph break) or a bidirectional control, or no
    visible character, or begins or ends with one that does not show (a space, a
    zero-width one)."""
    if any(unicodedata.category(c) in ("Cc", "Zl", "Zp") or c in _BIDI_CONTROLS for c in name):
        return "a name may not hold a control character"
    if not any(_shows(c) for c in name):
        return "a name needs a visible character"
    if not (_shows(name[0]) and _shows(name[-1])):
        return ("a name may not begin or end with a space or another character that does "
                "not show")
    return None


def _shows(character: str) -> bool:
    return unicodedata.category(character)[0] not in "ZC" and character not in _BLANKS
