"""Every fact the domain records, as frozen dataclasses.

An event has a stable ``type`` (its class name) and plain-JSON ``to_dict`` /
``event_from_dict``. Events say what happened, never what someone wanted.
Seats are numbered from 1; amounts are integer points.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from functools import cache
from typing import Any, ClassVar

from domain.fairness import JSON_SCALARS
from domain.frozen import made

EVENT_TYPES: dict[str, type[Event]] = {}


@dataclass(frozen=True)
class Event:
    type: ClassVar[str] = "Event"

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls.type = cls.__name__
        EVENT_TYPES[cls.__name__] = cls

    def to_dict(self) -> dict[str, Any]:
        return {name: _plain(getattr(self, name)) for name in _field_names(type(self))}


def event_from_dict(type_name: str, data: dict[str, Any]) -> Event:
    cls = EVENT_TYPES[type_name]
    names = _field_names(cls)
    fields = {}
    for name in names:
        if name in data:
            value = data[name]  # most are scalars: taken with no call
            fields[name] = value if type(value) in JSON_SCALARS else _frozen(value)
    if len(fields) < len(names):  # a field left out: its default, or the TypeError
        return cls(**fields)
    return made(cls, fields)


_KINDS = {"int": int, "str": str, "bool": bool, "tuple": tuple, "dict": dict, "None": type(None)}
_KIND_NAMES = {int: "an integer", str: "a string", bool: "true or false", tuple: "a list",
               dict: "an object", type(None): "null"}


def mistyped(event: Event, unread: str) -> str | None:
    """The first field of ``event`` whose value is not of the kind its class declares (a seat
    written as a string, say), said for a reader; None if none. A string that begins with
    ``unread`` stands for a value its reader may not see, of any kind. Only the outer kind
    is asked: a list's items and an object's values are the rules' to judge."""
    for f in dataclasses.fields(event):
        value = getattr(event, f.name)
        if type(value) is str and value.startswith(unread):
            continue
        kinds = [_KINDS[name.split("[")[0].strip()] for name in str(f.type).split("|")]
        if type(value) not in kinds:
            wanted = " or ".join(_KIND_NAMES[kind] for kind in kinds)
            return f"{event.type}'s {f.name} is {value!r}, not {wanted}"
    return None


@cache
def holds_dicts(cls: type[Event]) -> bool:
    """Whether events of ``cls`` may hold a dict (a field annotated with one). Read back
    from the store, a dict has its keys sorted (canonical JSON writes them so), which a
    decided event's need not: a state kept from such an event may answer the same values
    in other bytes. Every other event reads back as it was decided."""
    return any("dict" in str(f.type) for f in dataclasses.fields(cls))


@cache
def _field_names(cls: type[Event]) -> tuple[str, ...]:
    """The names of an event class's fields (``dataclasses.fields`` builds them anew on
    every call, and every event read or written asks)."""
    return tuple(f.name for f in dataclasses.fields(cls))


def _plain(value):
    if type(value) in JSON_SCALARS:  # most values: no isinstance asked, no call per item
        return value
    if isinstance(value, tuple):
        return [v if type(v) in JSON_SCALARS else _plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): v if type(v) in JSON_SCALARS else _plain(v) for k, v in value.items()}
    return value


def _frozen(value):
    kind = type(value)  # not isinstance: JSON as read holds exactly lists and dicts
    if kind is list:
        return tuple([v if type(v) in JSON_SCALARS else _frozen(v) for v in value])
    if kind is dict:
        return {k: v if type(v) in JSON_SCALARS else _frozen(v) for k, v in value.items()}
    return value


# --- the table -------------------------------------------------------------


@dataclass(frozen=True)
class TableCreated(Event):
    """``next_seed_commitment`` commits to hand 1's server seed (see ``domain.fairness``)."""

    game: str
    options: dict
    max_seats: int
    admin_token_hash: str
    auditor_token_hash: str
    next_seed_commitment: str
    requested: dict = field(default_factory=dict)  # the options as the client gave them
    imports: bool = False  # an import table (``HandImported``)


@dataclass(frozen=True)
class PlayerSeated(Event):
    seat: int
    player_id: str
    name: str
    buy_in: int
    token_hash: str
    client_seed: str = ""


@dataclass(frozen=True)
class ClientSeedChanged(Event):
    """A player's own entropy for the decks of the hands they are dealt into from now on."""

    seat: int
    client_seed: str


@dataclass(frozen=True)
class ChipsAdded(Event):
    seat: int
    amount: int


@dataclass(frozen=True)
class PlayerLeft(Event):
    seat: int
    cashed_out: int


@dataclass(frozen=True)
class HandImported(Event):
    """A hand played elsewhere, imported at an import table (``POST /v1/imports/phh``):
    it takes the table's next hand number; its own events say where its cards came from."""

    hand_no: int
    game: str
    dealt_in: tuple = ()


@dataclass(frozen=True)
class HandOpened(Event):
    """A hand begins at the table: ``dealt_in`` are its seats and ``game`` its game (the
    table's, or the dealer's choice); ``next_seed_commitment`` publishes the commitment of
    the hand after it, so it is fixed before anyone's client seed for that hand is.
    ``blinds``: the small and the big blind's seats where the dead button placed them (the
    small one's seat may be dealt out: a dead small blind), else empty (``domain.table``).
    ``options``: the hand's, where its game is not the table's (dealer's choice), else
    empty (the table's); empty too in a hand opened before they were recorded."""

    hand_no: int
    button: int
    next_seed_commitment: str
    dealt_in: tuple = ()
    game: str = ""
    blinds: tuple = ()
    options: dict = field(default_factory=dict)


@dataclass(frozen=True)
class HandSettled(Event):
    """The stacks a hand left behind, written with the hand's last events."""

    hand_no: int
    stacks: dict  # seat (as str) -> stack after the hand


# --- a poker hand ----------------------------------------------------------


@dataclass(frozen=True)
class HandStarted(Event):
    """``deck`` (top card first) is hidden: it is stored as a commitment and opened to
    whom the table's ``reveal`` option allows once the hand has ended. It is the deck
    ``domain.fairness.deck_order`` derives from the server seed committed to by
    ``seed_commitment`` and the ``client_seeds`` of the seats dealt in.

    An imported hand (``domain.phh``) has no seeds: its ``source`` says where its cards
    came from (``{"format": "phh", "forced": ..., "unknown": [...]}``), its deck is the
    one the document deals, and ``source["forced"]`` holds the document's forced bets
    seat by seat (``{"antes": {seat: amount}, "blinds": {seat: amount}}``).

    ``reshuffle_key`` (hidden as the deck is) is what a reshuffle of the stub mixes in
    (``fairness.reshuffle_key`` of the server seed, with ``reshuffle: seeded``); empty in
    an imported hand, and in one started before the option.

    ``blinds`` are the table's ``HandOpened.blinds``."""

    game: str
    hand_no: int
    options: dict
    button: int
    seats: tuple[dict, ...]  # {"seat", "name", "stack", "player_id"}, in seat order
    seed_commitment: str
    client_seeds: dict  # seat (as str) -> client seed
    deck: tuple
    source: dict = field(default_factory=dict)  # empty: shuffled here from the seeds
    reshuffle_key: str = ""
    blinds: tuple = ()


@dataclass(frozen=True)
class AntePosted(Event):
    seat: int
    amount: int


@dataclass(frozen=True)
class BlindPosted(Event):
    """A blind: ``blind`` is small, big or straddle (imported hands); it counts as the
    seat's bet in the first round. ``call_to``: the bet the others must call, where it is
    more than ``amount`` (a big blind posted all in short of the full blind, with
    ``short_forced_bet: full``); null where it is the amount."""

    seat: int
    amount: int
    blind: str
    call_to: int | None = None


@dataclass(frozen=True)
class CardsDealt(Event):
    seat: int
    cards: tuple
    face_up: bool = False


@dataclass(frozen=True)
class BoardDealt(Event):
    """Community cards, face up in the middle."""

    cards: tuple


@dataclass(frozen=True)
class StubReshuffled(Event):
    """The stub ran short: it was reshuffled with the discards and folded hands (001,
    "Running out of cards"); ``cards`` is the new stub, top first (hidden)."""

    cards: tuple


@dataclass(frozen=True)
class StreetStarted(Event):
    """The hand moves to a street of its variant: ``kind`` is deal, bet, draw or showdown."""

    street: int
    kind: str


@dataclass(frozen=True)
class ActionOn(Event):
    """The hand now waits for these seats' decisions (one seat in most games)."""

    seats: tuple


@dataclass(frozen=True)
class PlayerChecked(Event):
    seat: int


@dataclass(frozen=True)
class BetPlaced(Event):
    """``to`` is the seat's bet in this round after the action; ``added`` what left the stack;
    ``full`` whether it was a full bet (an all-in for less is not, and reopens nothing)."""

    seat: int
    to: int
    added: int
    full: bool = True


@dataclass(frozen=True)
class BringInPosted(Event):
    """Stud: the seat the cards name opens with the bring-in, less than a full bet.
    ``call_to`` as ``BlindPosted``'s: the whole bring-in, where it was posted all in short."""

    seat: int
    to: int
    added: int
    call_to: int | None = None


@dataclass(frozen=True)
class BetCompleted(Event):
    """Stud: a bring-in completed to a full bet (the round's opening bet, not a raise);
    ``full`` is false for an all-in completion for less."""

    seat: int
    to: int
    added: int
    full: bool = True


@dataclass(frozen=True)
class PlayerCalled(Event):
    seat: int
    to: int
    added: int


@dataclass(frozen=True)
class PlayerRaised(Event):
    seat: int
    to: int
    added: int
    full: bool = True


@dataclass(frozen=True)
class ChipsBought(Event):
    """000, "all bets must be covered": a player short of a call adds chips during the hand."""

    seat: int
    amount: int


@dataclass(frozen=True)
class PlayerFolded(Event):
    seat: int


@dataclass(frozen=True)
class CardsDrawn(Event):
    """``held`` (hidden, as the discards and replacements are) is the seat's hand after the
    draw, sorted: what a showdown opens of a hand that drew, so that showing it does not
    tell which of its cards were drawn (``shown_draws: hidden``); empty in hands whose
    options lack that, whose showdowns opened the cards dealt and drawn."""

    seat: int
    discarded: tuple
    received: tuple
    held: tuple = ()


@dataclass(frozen=True)
class BetReturned(Event):
    """The part of a bet nobody called goes back to its seat before the showdown."""

    seat: int
    amount: int


@dataclass(frozen=True)
class BettingRoundClosed(Event):
    street: int
    pot: int


@dataclass(frozen=True)
class ShowdownEvaluated(Event):
    """Every hand shown, in showdown order: {"seat", "cards", "category", "description", "best"}
    for its high hand, and "low" ({"category", "description", "best"}, or None) where the game
    has a low half. Hands that win nothing are left out when the table mucks losers."""

    hands: tuple[dict, ...]


@dataclass(frozen=True)
class PotAwarded(Event):
    """One pot: ``shares`` maps seat (as str) to what it won; ``reason`` is showdown or
    uncontested. In a high-low game ``halves`` says who won each half."""

    pot: int
    amount: int
    eligible: tuple
    winners: tuple
    shares: dict
    reason: str
    halves: dict | None = None  # {"high": [seats], "low": [seats]}


@dataclass(frozen=True)
class HandEnded(Event):
    stacks: dict  # seat (as str) -> stack after the hand
    net: dict  # seat (as str) -> change over the hand
