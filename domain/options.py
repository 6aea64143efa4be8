"""Table options: named rule choices with types, allowed values and defaults.

The same choice has the same name in every game (``ante``, ``max_raises``,
``all_in``, ``odd_chip`` ...). An option may be an *option set*: each of its
values brings defaults for other options (``rules: casino`` brings blinds and
fixed limits to Five Card Draw); an option the client sets explicitly wins over
the set. A default may also be derived from options resolved before it (the
small blind is half the big blind unless set). Options resolve in the order a
game lists them, so a set must come before the options it fills in.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from domain.errors import DomainError

MAX_AMOUNT = 10**9  # the most chips one amount may name: an option, a buy-in, chips added
# The most chips a table holds in all, and so a stack or a bet (a stack wins its way past
# MAX_AMOUNT when players who bought in for it lose to one another): the largest whole
# number a JSON reader in any language keeps exactly. Chips bought or imported past it are
# refused; it takes millions of the largest buy-ins to come near it.
MAX_CHIPS = 2**53 - 1


@dataclass(frozen=True)
class Option:
    name: str
    type: str  # "integer", "string" or "boolean"
    default: Any
    description: str
    allowed: tuple | None = None  # the only values allowed, for a string option
    minimum: int | None = None
    maximum: int | None = None
    nullable: bool = False  # null allowed (e.g. max_raises: no cap)
    sets: dict = field(default_factory=dict)  # value -> {other option: default it brings}
    derive: Callable[[dict], Any] | None = None  # default from the options resolved before
    derived_from: str = ""  # how ``derive`` works, for the catalog

    def to_dict(self) -> dict[str, Any]:
        described = {"name": self.name, "type": self.type, "default": self.default,
                     "description": self.description, "nullable": self.nullable}
        for key in ("allowed", "minimum", "maximum"):
            if getattr(self, key) is not None:
                described[key] = list(self.allowed) if key == "allowed" else getattr(self, key)
        if self.sets:
            described["sets"] = {value: dict(defaults) for value, defaults in self.sets.items()}
        if self.derive:
            described["default"] = None
            described["derived_default"] = self.derived_from
        return described

    def check(self, value: Any) -> Any:
        if value is None and self.nullable:
            return None
        if self.type == "integer":
            if not isinstance(value, int) or isinstance(value, bool):
                raise _invalid(self, f"must be an integer, not {_json(value)}")
            if self.minimum is not None and value < self.minimum:
                raise _invalid(self, f"must be at least {self.minimum}")
            if self.maximum is not None and value > self.maximum:
                raise _invalid(self, f"must be at most {self.maximum}")
        elif self.type == "boolean":
            if not isinstance(value, bool):
                raise _invalid(self, f"must be true or false, not {_json(value)}")
        elif not isinstance(value, str):
            raise _invalid(self, f"must be a string, not {_json(value)}")
        if self.allowed is not None and value not in self.allowed:
            raise _invalid(self, f"must be one of {', '.join(self.allowed)}")
        return value


def resolve_options(options: tuple[Option, ...], given: dict[str, Any]) -> dict[str, Any]:
    """The full option set of a table: ``given`` checked; option sets, derived defaults and
    plain defaults fill in the rest, in that order of precedence."""
    known = {o.name: o for o in options}
    unknown = sorted(set(given) - set(known))
    if unknown:
        raise DomainError("unknown_option", f"unknown option(s): {', '.join(unknown)}; "
                          f"this game knows {', '.join(sorted(known))}")
    resolved: dict[str, Any] = {}
    implied: dict[str, Any] = {}
    for option in options:
        if option.name in given:
            value = option.check(given[option.name])
        elif option.name in implied:
            value = implied[option.name]
        elif option.derive is not None:
            value = option.derive(resolved)
        else:
            value = option.default
        resolved[option.name] = value
        for name, default in option.sets.get(value, {}).items():
            implied.setdefault(name, default)
    return resolved


def _json(value: Any) -> str:
    """A value as the client wrote it: in JSON (``null``, ``true``), not Python."""
    return json.dumps(value, ensure_ascii=False, default=repr)


def _invalid(option: Option, why: str) -> DomainError:
    return DomainError("invalid_option", f"option {option.name} {why}")


REVEAL = Option(
    "reveal", "string", "auditor", "who gets the seed and every card once a hand has ended: "
    "auditor (casino practice: a mucked hand stays private; players keep what they saw and the "
    "hands shown) or everyone (home games)", allowed=("auditor", "everyone"))
