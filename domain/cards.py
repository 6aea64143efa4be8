"""Cards, decks and the deterministic shuffle.

A card is written rank then suit, two characters: ``As Kd Th 9c 2s`` (ranks
``23456789TJQKA``, suits ``cdhs``). Cards are interned: ``parse_card("As") is
parse_card("As")``, so identity, equality and hashing are cheap.

The shuffle is a pure function of a seed, so a replayed hand deals the same
cards and anyone holding the revealed seed can recompute the deck:

    stream  = SHA-256(seed || counter_0) || SHA-256(seed || counter_1) || ...
              (counter: 8-byte big-endian, from 0)
    draw(n) = next 8 bytes of the stream as a big-endian integer x, rejected
              and redrawn while x >= 2**64 - (2**64 % n); then x % n
    Fisher-Yates: for i = len(deck) - 1 down to 1, swap deck[i] and deck[draw(i + 1)]

How a hand's seed is made from the server's and the players' seeds, and how
it is committed to, is in ``domain.fairness``.

Decks: `STANDARD_DECK` (52), `with_jokers(1)` / `with_jokers(2)` (the jokers
``Xj`` and ``Yj``: rank 0, suit ``j``, index 52 and 53; they are wild or the
bug only as a game says), and the pinochle packs of rule book 004:
`PINOCHLE_48` (9, 10, J, Q, K, A of each suit, two of every card) and
`PINOCHLE_64` (the same with 8s and 7s). A pack holding two of a card holds
the same interned `Card` twice: the two copies are indistinguishable.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Iterable, Iterator, Sequence
from itertools import count

RANKS = "23456789TJQKA"
SUITS = "cdhs"
RANK_NAMES = {
    2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight",
    9: "nine", 10: "ten", 11: "jack", 12: "queen", 13: "king", 14: "ace",
}


class InvalidCard(ValueError):
    """A string that does not name a card."""

    code = "malformed_card"


class Card:
    """One playing card. ``rank`` is 2..14 (ace high), ``suit`` one of ``cdhs``;
    ``index`` is 0..51 (rank-major) and is unique per distinct card. A joker
    has rank 0, suit ``j`` and index 52 or 53."""

    __slots__ = ("code", "rank", "suit", "index")

    def __init__(self, code: str, rank: int, suit: str, index: int):
        self.code = code
        self.rank = rank
        self.suit = suit
        self.index = index

    def __repr__(self) -> str:
        return f"Card({self.code!r})"

    def __str__(self) -> str:
        return self.code

    def __reduce__(self):
        return (parse_card, (self.code,))


_BY_CODE: dict[str, Card] = {}
for _r, _rank_char in enumerate(RANKS):
    for _s, _suit in enumerate(SUITS):
        _code = _rank_char + _suit
        _BY_CODE[_code] = Card(_code, _r + 2, _suit, _r * 4 + _s)

STANDARD_DECK: tuple[Card, ...] = tuple(sorted(_BY_CODE.values(), key=lambda c: c.index))


JOKERS: tuple[Card, ...] = (Card("Xj", 0, "j", 52), Card("Yj", 0, "j", 53))
for _joker in JOKERS:
    _BY_CODE[_joker.code] = _joker

PINOCHLE_48: tuple[Card, ...] = tuple(c for c in STANDARD_DECK if c.rank >= 9) * 2
PINOCHLE_64: tuple[Card, ...] = tuple(c for c in STANDARD_DECK if c.rank >= 7) * 2


def with_jokers(count: int) -> tuple[Card, ...]:
    """The standard deck plus one or two jokers."""
    if count not in (0, 1, 2):
        raise ValueError("a deck has no more than two jokers")
    return STANDARD_DECK + JOKERS[:count]


def is_joker(card: Card) -> bool:
    return card.suit == "j"


def register_card(card: Card) -> Card:
    """Make a card outside the standard 52 (a joker, say) known to ``parse_card``."""
    _BY_CODE.setdefault(card.code, card)
    return _BY_CODE[card.code]


def parse_card(text: str) -> Card:
    try:
        return _BY_CODE[text]
    except (KeyError, TypeError):
        raise InvalidCard(f"{text!r} is not a card (rank of {RANKS}, then suit of {SUITS})") from None


def parse_cards(text: str | Iterable[str]) -> list[Card]:
    """``"As Kd Th"`` or ``["As", "Kd", "Th"]`` -> cards."""
    parts = text.split() if isinstance(text, str) else list(text)
    return [parse_card(p) for p in parts]


def format_cards(cards: Iterable[Card]) -> str:
    return " ".join(c.code for c in cards)


def codes(cards: Iterable[Card]) -> list[str]:
    return [c.code for c in cards]


def shuffled(deck: Sequence[Card], seed: str) -> list[Card]:
    """The deck in the order the hex ``seed`` determines (see the module docstring)."""
    words = _stream(bytes.fromhex(seed))
    cards = list(deck)
    for i in range(len(cards) - 1, 0, -1):
        n = i + 1
        limit = _LIMIT - _LIMIT % n
        x = next(words)
        while x >= limit:  # rejection keeps every j equally likely
            x = next(words)
        j = x % n
        cards[i], cards[j] = cards[j], cards[i]
    return cards


_LIMIT = 2**64


def _stream(seed: bytes) -> Iterator[int]:
    """The 8-byte big-endian words of SHA-256(seed || counter), counter 0, 1, ..."""
    for counter in count():
        yield from _FOUR_WORDS.unpack(hashlib.sha256(seed + counter.to_bytes(8, "big")).digest())


_FOUR_WORDS = struct.Struct(">4Q")  # a SHA-256 digest as four big-endian 64-bit words
