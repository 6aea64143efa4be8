"""Table options: named rule choices with types, allowed values and defaults.

The same choice has the same name in every game (``ante``, ``max_raises``,
``all_in``, ``odd_chip`` ...); see shared/API.md, "Table options".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from domain.errors import DomainError


@dataclass(frozen=True)
class Option:
    name: str
    type: str  # "integer" or "string"
    default: Any
    description: str
    allowed: tuple | None = None  # the only values allowed, for a string option
    minimum: int | None = None
    maximum: int | None = None
    nullable: bool = False  # null allowed (e.g. max_raises: no cap)

    def to_dict(self) -> dict[str, Any]:
        described = {"name": self.name, "type": self.type, "default": self.default,
                     "description": self.description, "nullable": self.nullable}
        for key in ("allowed", "minimum", "maximum"):
            if getattr(self, key) is not None:
                described[key] = list(self.allowed) if key == "allowed" else getattr(self, key)
        return described

    def check(self, value: Any) -> Any:
        if value is None and self.nullable:
            return None
        if self.type == "integer":
            if not isinstance(value, int) or isinstance(value, bool):
                raise _invalid(self, f"must be an integer, not {value!r}")
            if self.minimum is not None and value < self.minimum:
                raise _invalid(self, f"must be at least {self.minimum}")
            if self.maximum is not None and value > self.maximum:
                raise _invalid(self, f"must be at most {self.maximum}")
        elif not isinstance(value, str):
            raise _invalid(self, f"must be a string, not {value!r}")
        if self.allowed is not None and value not in self.allowed:
            raise _invalid(self, f"must be one of {', '.join(self.allowed)}")
        return value


REVEAL = Option(
    "reveal", "string", "auditor", "who gets the seed and every card once a hand has ended: "
    "auditor (casino practice: a mucked hand stays private; players keep what they saw and the "
    "hands shown) or everyone (home games)", allowed=("auditor", "everyone"))


def resolve_options(options: tuple[Option, ...], given: dict[str, Any]) -> dict[str, Any]:
    """The full option set of a table: ``given`` checked, defaults filled in."""
    known = {o.name: o for o in options}
    unknown = sorted(set(given) - set(known))
    if unknown:
        raise DomainError("unknown_option", f"unknown option(s): {', '.join(unknown)}; "
                          f"this game knows {', '.join(sorted(known))}")
    return {name: option.check(given[name]) if name in given else option.default
            for name, option in known.items()}


def _invalid(option: Option, why: str) -> DomainError:
    return DomainError("invalid_option", f"option {option.name} {why}")
