"""The showdown: who shows in what order, which hands are shown, and who wins each pot.

* Order (000, 004): the last player to bet or raise in the final round shows first (a
  bet or raise all in short of a full one is a bet or raise too: "positive action"),
  otherwise the first player still in to the dealer's left; then clockwise.
* The cards speak: every hand is judged at its best (``judging``).
* ``muck_losers`` (001, 003: "losing hands may be mucked"): a hand that wins no part of
  any pot is not shown to the other players, but the last player to bet or raise shows
  (001: "the last player to raise shows his hand"). Off by default, as 000 shows every
  hand.
* A hand imported from PHH may muck at the showdown (``sm`` without cards): its seat,
  listed in ``HandStarted.source["mucked"]``, concedes, as PHH plays it: it is not
  judged, shown or paid, and a pot that only mucked hands could win is refused.
* ``last_bettor_shows: false``: only a full bet or raise makes its player the last to
  bet, and ``muck_losers`` shows winners only, as the engine played every hand until 24
  November. The rule above came before the option did, so a hand whose options lack it
  plays by that rule, and its audit also takes a showdown decided the earlier way
  (``PokerGame.earlier_rules``): the two rules pay alike and differ only in who shows.
* Each pot (``domain.pots``) goes to the best hand among the players eligible for it. In
  a high-low game it is split between the best high and the best qualifying low of the
  players eligible for that pot; with no qualifying low there, high takes it all (003).
  One hand may win both halves. Each half splits again on ties.
* Odd chips (``odd_chip: first_left_of_button``): a split's indivisible chip goes to the
  high half (as cardrooms play it: 003 is silent on halves), and within a half every
  odd chip to the first winner to the left of the button (003: "any odd amount going to
  the player immediately to the left of the dealer"); with ``left_of_button`` (tables
  created until 24 November 2026) one odd chip each, clockwise from there. The chip
  (``split_chip``, see ``chip_unit``) is the smallest the hand needed: with bets of any
  size (no-limit, an all-in for an odd amount) a chip of 1, so a pot splits equally.
"""

from __future__ import annotations

from math import gcd

from domain.events import Event, PotAwarded, ShowdownEvaluated
from domain.poker.judging import SPLIT_POT, Judgement, described, judge
from domain.poker.state import HandState
from domain.pots import build_pots, split

MONEY_OPTIONS = ("ante", "small_blind", "big_blind", "bring_in", "small_bet", "big_bet",
                 "bet_unit", "min_bet")


def showdown(state: HandState, judge_name: str) -> list[Event]:
    mucked = set(state.source.get("mucked", ()))
    judged = {s.seat: judge(judge_name, s.cards, state.board) for s in state.in_hand()
              if s.seat not in mucked}
    awards = awarded(state, judge_name, judged)
    return [evaluated(state, judge_name, judged, shown_seats(state, awards)), *awards]


def shown_seats(state: HandState, awards: list[PotAwarded]) -> list[int]:
    """The seats that show, in showdown order: every hand not mucked, or with
    ``muck_losers`` the winners and the last to bet or raise."""
    mucked = set(state.source.get("mucked", ()))
    winners = {int(seat) for award in awards for seat in award.shares}
    shows_anyway = (state.last_aggressor if state.options.get("last_bettor_shows", True)
                    else None)
    return [seat for seat in showdown_order(state) if seat not in mucked and (
        not state.options.get("muck_losers") or seat in winners or seat == shows_anyway)]


def evaluated(state: HandState, judge_name: str, judged: dict[int, Judgement],
              seats: list[int]) -> ShowdownEvaluated:
    return ShowdownEvaluated(hands=tuple(_shown(state, seat, judged[seat], judge_name in SPLIT_POT)
                                         for seat in seats))


def awarded(state: HandState, judge_name: str, judged: dict[int, Judgement]) -> list[PotAwarded]:
    """Each pot to the best of the ``judged`` hands eligible for it (every hand not mucked,
    at the showdown; the hands a verifier can read, when it judges again)."""
    mucked = set(state.source.get("mucked", ()))
    left_first = [s.seat for s in state.from_left_of_button()]
    committed = {s.seat: s.committed for s in state.seats}
    pots = build_pots(committed, {s.seat for s in state.in_hand()})
    odd_to_first = state.options.get("odd_chip") == "first_left_of_button"
    return [_award(number, pot.amount, _contesting(pot.eligible, mucked), judged, left_first,
                   chip_unit(state), judge_name in SPLIT_POT, odd_to_first)
            for number, pot in enumerate(pots)]


def _contesting(eligible: tuple[int, ...], mucked: set[int]) -> tuple[int, ...]:
    """The players still contesting a pot once the hands mucked at the showdown are out (a
    PHH import refuses a pot nobody contests)."""
    contesting = tuple(seat for seat in eligible if seat not in mucked)
    if not contesting:
        raise ValueError("every player who could win a pot mucked their hand at the showdown "
                         f"(seats {', '.join(map(str, eligible))})")
    return contesting


def showdown_order(state: HandState) -> list[int]:
    start = _last_bettor(state)
    if start is None or not state.seat(start).in_hand:
        start = state.next_seat(state.button, lambda s: s.in_hand)
    ordered = sorted(state.in_hand(), key=lambda s: (s.seat < start, s.seat))
    return [s.seat for s in ordered]


def _last_bettor(state: HandState) -> int | None:
    """Who bet or raised last in the final round (``last_bettor_shows``)."""
    if state.options.get("last_bettor_shows", True):
        return state.last_aggressor
    return state.last_full_aggressor


def chip_unit(state: HandState) -> int:
    """The chip a pot of this hand is split in: the greatest common divisor of the table's
    money options and, with ``split_chip: hand``, of what each seat put in over the hand.
    A hand whose options do not name ``split_chip`` was played before it: ``table``."""
    options = state.options
    unit = gcd(*(options[name] for name in MONEY_OPTIONS if options.get(name))) or 1
    if options.get("split_chip", "table") == "hand":
        unit = gcd(unit, *(seat.committed for seat in state.seats))
    return unit


def _award(number: int, amount: int, eligible: tuple[int, ...], judged: dict[int, Judgement],
           left_first: list[int], chip: int, hi_lo: bool, odd_to_first: bool) -> PotAwarded:
    contesting = [seat for seat in eligible if seat in judged]
    if not contesting:
        raise ValueError(f"no hand judged is eligible for pot {number}")
    highs = _best(contesting, lambda seat: judged[seat].high, left_first)
    lows = _best([s for s in contesting if judged[s].low is not None],
                 lambda seat: judged[seat].low, left_first) if hi_lo else []
    if not lows:
        shares = split(amount, highs, chip, odd_to_first)
        return PotAwarded(pot=number, amount=amount, eligible=eligible, winners=tuple(highs),
                          shares=_as_str(shares), reason="showdown",
                          halves={"high": tuple(highs), "low": ()} if hi_lo else None)
    chips, loose = divmod(amount, chip)
    high_half = (chips - chips // 2) * chip + loose
    shares = split(high_half, highs, chip, odd_to_first)
    for seat, share in split(amount - high_half, lows, chip, odd_to_first).items():
        shares[seat] = shares.get(seat, 0) + share
    winners = [seat for seat in left_first if seat in shares]
    return PotAwarded(pot=number, amount=amount, eligible=eligible, winners=tuple(winners),
                      shares=_as_str(shares), reason="showdown",
                      halves={"high": tuple(highs), "low": tuple(lows)})


def _best(seats, value_of, left_first: list[int]) -> list[int]:
    if not seats:
        return []
    best = max(value_of(seat) for seat in seats)
    return [seat for seat in left_first if seat in seats and value_of(seat) == best]


def _as_str(shares: dict[int, int]) -> dict[str, int]:
    return {str(seat): share for seat, share in shares.items()}


def _shown(state: HandState, seat: int, judgement: Judgement, hi_lo: bool) -> dict:
    hand = {"seat": seat, "cards": state.seat(seat).cards, **described(judgement.high)}
    if hi_lo:
        hand["low"] = described(judgement.low) if judgement.low is not None else None
    return hand
