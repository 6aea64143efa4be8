"""Random hands in our engine, with PokerKit following each one (test and benchmark only).

``play`` plays one hand of a variant through ``engine.decide`` / ``engine.evolve`` with
random legal moves (``choose``). With ``mirror``, a ``Mirror`` (a PokerKit state; PokerKit
is a test-only dependency, never imported by ``domain`` or ``service``) follows the hand
as it goes: the same stacks, antes, blinds, bring-in and bet sizes, exactly the cards our
events deal (each player's cards in the order dealt, up or down as dealt, and the board),
and the same moves. At every turn the mirror first says what PokerKit allows (who acts,
fold, the amount to call, the bring-in, the bet or raise range), and the move is one both
engines allow, so a hand never stops on a rule where the two differ; the differences are
in the recorded views, for the tests to judge. The record keeps the seats, the button,
every event, every turn (our legal actions, PokerKit's view, the move) and PokerKit's
pots, hands, chip pushes and final stacks.

Seats and PokerKit's players: PokerKit numbers players from the first seat to the
dealer's left (the small blind with three or more players; heads-up, the big blind: the
button posts the small blind and PokerKit swaps the blinds of a two-handed game itself),
the button last. That is ``order(record)``: player ``i`` is ``order(record)[i]``.

The PokerKit game (``pokerkit_state``) is a ``pokerkit.State`` with the variant's streets
spelled out rather than one of PokerKit's ready-made games, which differ from the rule
books in ways that have nothing to do with our engine:

* no burn cards (our dealer burns none; the cards are given explicitly anyway);
* fixed limit, "one bet and three raises" (003): PokerKit counts every completion, bet and
  raise, so a round allows 4 of them, and 3 before the flop, where the big blind is the
  bet (PokerKit 0.7.7's ``FixedLimitTexasHoldem`` allows 4 raises before the flop);
* fixed-limit Omaha hi/lo: PokerKit 0.7.7's ``FixedLimitOmahaHoldemHighLowSplitEightOrBetter``
  is built with the pot-limit mixin; here it is fixed limit, as its name and 003 say;
* stud: the lowest up card brings in (clubs lowest, then diamonds, hearts, spades, as 003
  and PokerKit both have it), the best hand showing opens the later streets. 003's open
  pair (an open pair on fourth street lets the opening bet be the upper limit) PokerKit
  lacks: when our player opens fourth street at the upper limit, the mirror sets
  PokerKit's bet size for that street before the bet (``set_street_size``).

The mirror deals, shows every hand, kills the hands PokerKit says win nothing and pushes
the chips itself (antes, blinds, bet collection and chip pulling are PokerKit's
automations), so the pots can be read before anything is pushed. The state plays in
tournament mode (one runout; every hand shown at an all-in).
"""

from __future__ import annotations

import random
import warnings
from collections import deque
from dataclasses import dataclass, field, replace
from functools import reduce
from math import gcd

from pokerkit import (AntePosting, Automation, BetCollection, BettingStructure, Deck, Mode,
                      OmahaEightOrBetterLowHand, OmahaHoldemHand, Opening, StandardHighHand,
                      State, Street)

from domain.commands import Act, Showdown, StartHand
from domain.events import BoardDealt, CardsDealt
from domain.options import resolve_options
from domain.poker import engine
from domain.poker.variants import VARIANTS

BOARD_GAMES = {"texas-holdem": 2, "omaha": 4, "omaha-hi-lo": 4}
HAND_TYPES = {"texas-holdem": (StandardHighHand,), "omaha": (OmahaHoldemHand,),
              "omaha-hi-lo": (OmahaHoldemHand, OmahaEightOrBetterLowHand),
              "seven-card-stud": (StandardHighHand,)}
STRUCTURES = {"fixed-limit": BettingStructure.FIXED_LIMIT,
              "pot-limit": BettingStructure.POT_LIMIT, "no-limit": BettingStructure.NO_LIMIT}
AUTOMATIONS = (Automation.ANTE_POSTING, Automation.BET_COLLECTION,
               Automation.BLIND_OR_STRADDLE_POSTING, Automation.CARD_BURNING,
               Automation.CHIPS_PULLING)
MONEY = ("ante", "small_blind", "big_blind", "bring_in", "small_bet", "big_bet", "bet_unit",
         "min_bet")


# --- one hand, played in our engine and mirrored in PokerKit --------------------------------

@dataclass(frozen=True)
class Turn:
    """One decision in our engine: the seat, its legal actions, what PokerKit said at the
    same moment (None when not mirrored), the move made, and the seat's bet (in this
    round) and stack before it."""

    seat: int
    legal: tuple
    pk: dict | None
    act: Act
    bet: int
    stack: int
    at: int  # how many of the hand's events came before it


@dataclass
class Record:
    game: str
    options: dict
    button: int
    seats: tuple  # of {"seat", "name", "stack", "player_id"}
    seed: str
    events: list = field(default_factory=list)
    turns: list = field(default_factory=list)
    commands: list = field(default_factory=list)  # every command after StartHand, in order
    pk: Mirror | None = None

    @property
    def start(self) -> StartHand:
        return StartHand(hand_no=1, button=self.button, seats=self.seats,
                         server_seed=self.seed, client_seeds={})

    @property
    def final_stacks(self) -> dict[int, int]:
        return {int(seat): stack for seat, stack in self.events[-1].stacks.items()}


def table(game: str, given: dict) -> dict:
    return resolve_options(VARIANTS[game].options, given)


def play(rng: random.Random, game: str, options: dict, stacks: dict[int, int], button: int,
         seed: str, mirror: bool = True, chooser=None) -> Record:
    """Play one hand to its end with ``choose``'s random legal moves (or ``chooser``'s, with
    the same arguments); with ``mirror``, PokerKit plays it alongside, move by move, and
    each move is one both allow."""
    seats = tuple({"seat": s, "name": f"p{s}", "stack": stacks[s], "player_id": f"id{s}"}
                  for s in sorted(stacks))
    record = Record(game, options, button, seats, seed)
    state = engine.initial_state({"game": game, "options": options})
    pk = record.pk = Mirror(record) if mirror else None
    try:
        _play(rng, record, state, pk, chooser or choose)
    except Divergence as diverged:
        diverged.record = record
        raise
    return record


def _play(rng: random.Random, record: Record, state, pk: Mirror | None, chooser) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        command = record.start
        while True:
            events = engine.decide(state, command)
            state = reduce(engine.evolve, events, state)
            record.events += events
            if pk:
                pk.follow(events)
            if state.status == "ended":
                break
            if state.status == "showdown_pending":
                command = Showdown()
            else:
                seat = state.seat(state.to_act)
                legal = tuple(engine.legal_actions(state, seat.seat))
                seen = pk.observe(seat.seat) if pk else None
                command = chooser(rng, seat.seat, legal, seen, seat.cards)
                record.turns.append(Turn(seat.seat, legal, seen, command, seat.bet, seat.stack,
                                         len(record.events)))
                if pk:
                    pk.apply(command, seen)
            record.commands.append(command)
        if pk:
            pk.finish()
            pk.warnings = [str(w.message) for w in caught]


def choose(rng: random.Random, seat: int, legal: tuple, pk: dict | None,
           cards: tuple = ()) -> Act:
    """A random legal move, and with PokerKit's view ``pk`` one PokerKit allows too: never
    a fold when checking is possible (our engine allows it, 000's Example B; PokerKit's
    tournament mode does not), bets and raises within PokerKit's limits too. A raise
    nobody can call stays (PokerKit replays it as the call it amounts to), and so does a
    fourth-street bet of the upper limit with an open pair showing (003; the mirror sets
    PokerKit's limit for the street; an all-in bet between the two limits, which PokerKit
    has no counterpart for, is left out). Amounts: the minimum, the maximum (or all in), or any
    allowed total between. A draw discards up to the most allowed of ``cards``; a player
    short of a call where all bets must be covered adds what is missing."""
    options = {}
    for action in legal:
        kind = action["type"]
        if kind == "fold" and pk is not None and not pk["can_fold"]:
            continue
        if kind in ("bet", "raise", "complete"):
            totals = _totals(action)
            if pk is not None and kind == "bet" and pk["open_pair"]:
                first, last, _, extra = totals
                sizes = sorted({first, last, *extra} & {pk["raise_to"][0], pk["open_pair"]})
                totals = (sizes[0], sizes[0], 1, tuple(sizes[1:])) if sizes else None
            elif pk is not None:
                if pk["raise_to"] is not None:
                    totals = _within(totals, *pk["raise_to"])
                elif pk["others_can_call"]:
                    totals = None
            if totals is None:
                continue
            action = {**action, "totals": totals}
        options[kind] = action
    weights = {"fold": 2, "check": 4, "call": 4, "bet": 3, "raise": 3, "complete": 3,
               "bring_in": 3, "draw": 1, "add_chips": 2}
    kind = rng.choices(list(options), [weights[k] for k in options])[0]
    action = options[kind]
    if kind == "draw":
        discards = rng.sample(cards, rng.randint(0, min(action["max_cards"], len(cards))))
        return Act(seat=seat, type=kind, cards=tuple(discards))
    if kind == "add_chips":
        return Act(seat=seat, type=kind, amount=action["min"])
    if "totals" in action:
        return Act(seat=seat, type=kind, amount=_pick(rng, action["totals"]))
    return Act(seat=seat, type=kind, amount=action.get("amount") if kind == "bring_in" else None)


def _totals(action: dict) -> tuple:
    """The totals an action allows: (first, last, step, extra totals off the steps)."""
    if action["type"] == "complete":
        return action["amount"], action["amount"], 1, ()
    extra = (action["all_in"],) if "all_in" in action else ()
    return action["min"], action["max"], action["step"], extra


def _within(totals: tuple, low: int, high: int) -> tuple | None:
    first, last, step, extra = totals
    if first < low:
        first += -(-(low - first) // step) * step
    last = min(last, high)
    last = first + (last - first) // step * step if last >= first else first - step
    extra = tuple(x for x in extra if low <= x <= high and not first <= x <= last)
    if last < first and not extra:
        return None
    return first, last, step, extra


def _pick(rng: random.Random, totals: tuple) -> int:
    first, last, step, extra = totals
    choices = [first, last] if last >= first else []
    if last > first:
        choices.append(first + rng.randrange((last - first) // step + 1) * step)
    return rng.choice(choices + list(extra) * 2)


def chip_unit(options: dict, committed: dict[int, int]) -> int:
    """The chip a split pot is divided in (``split_chip``): the greatest common divisor of
    the table's money options and (``hand``) of what each seat put in over the hand."""
    unit = gcd(*(options[name] for name in MONEY if options.get(name))) or 1
    return gcd(unit, *committed.values()) if options["split_chip"] == "hand" else unit


# --- PokerKit's side -----------------------------------------------------------------------

class Divergence(AssertionError):
    """PokerKit cannot follow our hand: it refuses what our engine did, or waits for
    something else. ``record`` holds the hand so far."""

    record: Record | None = None


def order(record: Record) -> list[int]:
    """Seats from the dealer's left round to the button: PokerKit's player indices."""
    return sorted((s["seat"] for s in record.seats), key=lambda s: (s <= record.button, s))


def pokerkit_state(record: Record, automations: tuple = AUTOMATIONS) -> State:
    o, game = record.options, record.game
    by_seat = {s["seat"]: s["stack"] for s in record.seats}
    stacks = [by_seat[seat] for seat in order(record)]
    if game in BOARD_GAMES:
        streets = [Street(False, (False,) * BOARD_GAMES[game], 0, False, Opening.POSITION,
                          _size(o, 1), _cap(o, blind=True))]
        streets += [Street(False, (), cards, False, Opening.POSITION, _size(o, r), _cap(o))
                    for r, cards in ((2, 3), (3, 1), (4, 1))]
        blinds, bring_in = (o["small_blind"], o["big_blind"]), 0
    elif game == "seven-card-stud":
        deals = ((False, False, True), (True,), (True,), (True,), (False,))
        streets = [Street(False, deal, 0, False, Opening.LOW_CARD if r == 1 else Opening.HIGH_HAND,
                          _size(o, r), _cap(o)) for r, deal in enumerate(deals, 1)]
        blinds, bring_in = 0, o["bring_in"]
    else:
        raise ValueError(f"no PokerKit game for {game}")
    return State(automations, Deck.STANDARD, HAND_TYPES[game], tuple(streets),
                 STRUCTURES[o["structure"]], True, o["ante"], blinds, bring_in, stacks,
                 len(stacks), mode=Mode.TOURNAMENT)


def _size(o: dict, round_no: int) -> int:
    if o["structure"] != "fixed-limit":
        return o["min_bet"]
    return o["big_bet"] if round_no >= o["big_bet_round"] else o["small_bet"]


def _cap(o: dict, blind: bool = False) -> int | None:
    """PokerKit counts the opening bet (a completion included) among its raises; before
    the flop the big blind is the bet."""
    if o["max_raises"] is None or o["structure"] == "no-limit":
        return None
    return o["max_raises"] + (0 if blind else 1)


def set_street_size(state: State, index: int, amount: int) -> None:
    """003's open pair: this street's bets are ``amount`` (PokerKit's streets are fixed
    when the state is made; the street is replaced before its first bet)."""
    streets = list(state.streets)
    streets[index] = replace(streets[index], min_completion_betting_or_raising_amount=amount)
    state.streets = tuple(streets)


class Mirror:
    """A PokerKit state following one of our hands: it is dealt the cards our events deal
    as it asks for them, and makes the moves our players make."""

    def __init__(self, record: Record):
        self.record = record
        self.seats = order(record)
        self.index = {seat: i for i, seat in enumerate(self.seats)}
        self.holes = {i: deque() for i in range(len(self.seats))}
        self.board = deque()
        self.state = pokerkit_state(record)
        self.calls: list = []  # (method, args) as applied, for benchmarks
        self.pots: list[tuple[int, tuple[int, ...]]] = []  # (amount, eligible seats)
        self.hands: list[dict] = []  # per hand type: seat -> PokerKit's hand (None: none)
        self.pushed_pots: list[tuple[int, tuple[int, ...]]] = []  # the pots as pushed
        self.pushes: list[tuple[int, int | None, dict[int, int]]] = []
        self.stacks: dict[int, int] = {}
        self.returned_antes: dict[int, int] = {}  # what nobody matched of the antes
        self.warnings: list[str] = []
        self.raises_as_calls = 0  # raises nobody could call, replayed as calls
        self.skipped_checks = 0  # PokerKit asked a player who cannot be called to act

    def _call(self, method, *args):
        self.calls.append((method, args))
        if method == "set_street_size":
            return set_street_size(self.state, *args)
        return getattr(self.state, method)(*args)

    def follow(self, events) -> None:
        for event in events:
            if isinstance(event, CardsDealt):
                self.holes[self.index[event.seat]].extend((c, event.face_up) for c in event.cards)
            elif isinstance(event, BoardDealt):
                self.board.extend(event.cards)
        self._advance()

    def _advance(self) -> None:
        """PokerKit's steps that are no player's decision, as far as our cards allow."""
        state = self.state
        while state.status:
            if state.hole_dealee_index is not None:
                i = state.hole_dealee_index
                pending = list(state.hole_dealing_statuses[i])
                if len(self.holes[i]) < len(pending):
                    return
                dealt = [self.holes[i].popleft() for _ in pending]
                if [up for _, up in dealt] != pending:
                    raise Divergence(f"seat {self.seats[i]}: PokerKit deals face up {pending}, "
                                     f"ours dealt {dealt}")
                self._call("deal_hole", "".join(c for c, _ in dealt), i)
            elif state.board_dealing_count:
                count = state.board_dealing_count
                if len(self.board) < count:
                    return
                self._call("deal_board", "".join(self.board.popleft() for _ in range(count)))
            elif state.showdown_index is not None:
                self._call("show_or_muck_hole_cards", True)
            elif state.can_kill_hand():
                if not self.pots:
                    self._read_showdown()
                self._call("kill_hand")
            elif state.can_push_chips():
                if not self.pots:
                    self._read_showdown()
                if not self.pushed_pots:
                    self.pushed_pots = [(p.amount, tuple(sorted(self.seats[i] for i in
                                                                p.player_indices)))
                                        for p in state.pots]
                pushed = self._call("push_chips")
                self.pushes.append((pushed.pot_index, pushed.hand_type_index,
                                    {self.seats[i]: a for i, a in enumerate(pushed.amounts) if a}))
            elif state.actor_index is not None:
                if state.checking_or_calling_amount == 0 and self._alone():
                    # Nobody else can bet, call or raise: PokerKit still asks this player
                    # (a big blind whose callers are all in); our engine does not.
                    self.skipped_checks += 1
                    self._call("check_or_call")
                    continue
                return
            else:
                raise Divergence("PokerKit is stuck")

    def _alone(self) -> bool:
        state = self.state
        actor = state.actor_index
        return not any(i != actor and state.statuses[i] and state.stacks[i]
                       for i in range(state.player_count))

    def observe(self, seat: int) -> dict:
        state = self.state
        actor = state.actor_index
        if actor is None or self.seats[actor] != seat:
            waiting = "nobody" if actor is None else f"seat {self.seats[actor]}"
            raise Divergence(f"our seat {seat} is to act; PokerKit waits for {waiting}")
        low = state.min_completion_betting_or_raising_to_amount
        return {"seat": seat, "can_fold": state.can_fold(),
                "call": state.checking_or_calling_amount,
                "bring_in": state.effective_bring_in_amount,
                "raise_to": None if low is None else
                (low, state.max_completion_betting_or_raising_to_amount),
                "others_can_call": not self._nobody_can_call(),
                "open_pair": self._open_pair(), "street": state.street_index,
                "raises": state.completion_betting_or_raising_count,
                "bet": state.bets[actor], "stack": state.stacks[actor]}

    def _nobody_can_call(self) -> bool:
        state = self.state
        actor = state.actor_index
        top = max(state.bets)
        return not any(i != actor and state.statuses[i] and state.stacks[i] + state.bets[i] > top
                       for i in range(state.player_count))

    def _open_pair(self) -> int | None:
        """Stud's fourth street with an open pair showing, before anyone has bet (003): the
        upper limit, which the opening bet may be."""
        state, options = self.state, self.record.options
        if (self.record.game != "seven-card-stud" or not options.get("open_pair_big_bet")
                or state.street_index != 1 or any(state.bets)):
            return None
        pair = any(len(up) == 2 and up[0].rank == up[1].rank
                   for i in range(state.player_count) if state.statuses[i]
                   for up in [list(state.get_up_cards(i))])
        return options["big_bet"] if pair else None

    def apply(self, act: Act, seen: dict) -> None:
        state, kind = self.state, act.type
        if kind == "fold":
            self._call("fold")
        elif kind == "bring_in" or (kind == "call" and state.can_post_bring_in()):
            self._call("post_bring_in")
        elif kind in ("check", "call"):
            self._call("check_or_call")
        elif kind in ("bet", "raise", "complete"):
            if kind == "bet" and act.amount == seen["open_pair"] != seen["raise_to"][0]:
                self._call("set_street_size", state.street_index, act.amount)
            if state.can_complete_bet_or_raise_to(act.amount):
                self._call("complete_bet_or_raise_to", act.amount)
            elif self._nobody_can_call():
                self.raises_as_calls += 1  # ours returns what nobody called (BetReturned)
                self._call("check_or_call")
            else:
                raise Divergence(f"PokerKit refuses seat {act.seat}'s {kind} to {act.amount}; "
                                 f"it allows {seen['raise_to']}")
        else:
            raise Divergence(f"no PokerKit move for {kind}")
        self._advance()

    def _read_showdown(self) -> None:
        """PokerKit's pots once the betting is over, before it kills the hands that win
        nothing (which merges pots), and every hand still in, for each hand type."""
        state, seats = self.state, self.seats
        self.pots = [(p.amount, tuple(sorted(seats[i] for i in p.player_indices)))
                     for p in state.pots]
        if sum(state.statuses) > 1:
            self.hands = [{seats[i]: hand for i, hand in enumerate(state.get_up_hands(0, k))
                           if state.statuses[i]} for k in range(len(state.hand_types))]

    def finish(self) -> None:
        state = self.state
        if state.status:
            actor = state.actor_index
            raise Divergence("our hand is over; PokerKit's is not (it waits for "
                             f"{'nothing' if actor is None else 'seat %d' % self.seats[actor]})")
        left = [c for cards in self.holes.values() for c in cards] + list(self.board)
        if left:
            raise Divergence(f"ours dealt cards PokerKit never asked for: {left}")
        self.stacks = {seat: state.stacks[i] for i, seat in enumerate(self.seats)}
        posted = {op.player_index: op.amount for op in state.operations
                  if isinstance(op, AntePosting)}
        if posted:
            collected = next(op for op in state.operations if isinstance(op, BetCollection)).bets
            self.returned_antes = {self.seats[i]: amount - collected[i]
                                   for i, amount in posted.items() if amount > collected[i]}


AUTOMATED = tuple(a for a in Automation if a not in (
    Automation.HOLE_DEALING, Automation.BOARD_DEALING, Automation.RUNOUT_COUNT_SELECTION))
PLAYED_BY_HAND = {"show_or_muck_hole_cards", "kill_hand", "push_chips"}


def replay_in_pokerkit(record: Record, automated: bool = True) -> State:
    """A fresh PokerKit state through a mirrored hand's moves and cards (for benchmarks: no
    checks). ``automated``: as PokerKit is usually run, with every automation but the
    dealing (the cards are given), so PokerKit shows or mucks, kills hands and pushes the
    chips itself; otherwise exactly the calls the mirror made."""
    state = pokerkit_state(record, AUTOMATED if automated else AUTOMATIONS)
    for method, args in record.pk.calls:
        if method == "set_street_size":
            set_street_size(state, *args)
        elif not (automated and method in PLAYED_BY_HAND):
            getattr(state, method)(*args)
    return state


def replay_in_engine(record: Record):
    """Our engine through a recorded hand's commands: ``decide`` and ``evolve`` only."""
    state = engine.initial_state({"game": record.game, "options": record.options})
    for command in [record.start, *record.commands]:
        for event in engine.decide(state, command):
            state = engine.evolve(state, event)
    return state
