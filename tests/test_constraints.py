"""constraints.txt pins every runtime dependency (and theirs) at the release installed, so
that the Docker image and ``make install`` get what the tests ran on."""

from __future__ import annotations

from importlib import metadata

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.processes import ROOT


def pinned() -> dict[str, str]:
    lines = (ROOT / "constraints.txt").read_text().splitlines()
    pins = [Requirement(line) for line in lines if line.strip() and not line.startswith("#")]
    return {canonicalize_name(pin.name): str(pin.specifier) for pin in pins}


def runtime_dependencies(name: str = "cardroom", extras: tuple[str, ...] = ()) -> set[str]:
    """The installed distributions ``name`` needs at run time, its test extras left out."""
    needed = set()
    for line in metadata.distribution(name).requires or []:
        requirement = Requirement(line)
        marker = requirement.marker
        if marker and not any(marker.evaluate({"extra": e}) for e in extras or ("",)):
            continue
        needed.add(canonicalize_name(requirement.name))
        needed |= runtime_dependencies(requirement.name, tuple(requirement.extras))
    return needed


def test_every_runtime_dependency_is_pinned_at_the_release_installed():
    pins = pinned()
    needed = runtime_dependencies()
    assert {"flask", "redis", "rq", "lupa", "werkzeug"} <= needed  # lupa: fakeredis[lua]
    assert sorted(needed - pins.keys()) == []
    assert {name: f"=={metadata.version(name)}" for name in needed} == {
        name: pins[name] for name in needed}


def test_nothing_is_pinned_that_cardroom_does_not_need():
    assert sorted(pinned().keys() - runtime_dependencies()) == []
