"""PHH, the Poker Hand History format (phh-std): a hand's events written as a PHH
document, and a PHH document replayed by the engine into a hand's events.

Players. PHH numbers players ``p1``..``pN`` from the dealer's left, the button last
(stud too: the deal starts at ``p1``). Exported hands number them that way and name
their seats in ``_seats``; an imported hand seats ``pK`` in seat K with the button
on the last seat. Heads-up, PHH writes forced bets in reverse: its arrays give the
button's amount first.

Variants. PHH has codes for no-limit (``NT``) and fixed-limit (``FT``) hold'em,
pot-limit Omaha (``PO``), fixed-limit Omaha eight or better (``FO/8``) and fixed-limit
seven card stud with a bring-in (``F7S``). A hand of another game or structure
(pot-limit hold'em, five card draw, five card stud, house or club stakes, a stud hand
whose fourth street was opened at the upper limit under the open pair rule, which PHH's
stud lacks, or opened by other rules than PHH's stud, or whose river was dealt as one
community card, as PHH's stud never deals; a hand whose big blind is not the
amount its code opens at, the small bet of FT and FO/8, the minimum bet of NT and PO; a
hand whose big blind or bring-in was posted short and called in full, where PHH calls
what was posted; a hand in which all-ins short of a full raise that added up to one
reopened the betting to a player who raised, as PokerKit does not always; a hand with
an all-in bet or raise under ``half_bet_rule``, where PHH plays the full-bet rule) is written
with the standard fields and actions that apply, the game and its options in the user
fields ``_variant`` and ``_options`` (and ``_options_null``, the options set to null,
such as ``max_raises`` for no cap: TOML has no null), and no ``variant``: a PHH tool
then refuses it plainly instead of replaying it under rules that are not the hand's; so
is a hand in which a player bought chips (where nobody may go all in, a player short of
a bet may buy the chips to call it): they are listed in ``_chips_bought``, each before
the action it names, and PHH's stacks are fixed for the hand. A hand of a standard
variant carries its options in ``_options`` too, and an import of such a document takes
from them what PHH has no field for (the table's chip, by which split pots are divided;
the raise cap), the standard fields winning where both say. An imported big blind or
bring-in posted short is called as it was posted, as PHH plays it, unless a ``_variant``
document's ``_options`` say ``short_forced_bet: full``. Our own facts are user fields
too: ``_table_id``, ``_hand_no``, ``_seed_commitment``, ``_receipt``.

Cards. A card the reader may not see is ``??``. An import takes the cards from the
document: its events record ``source: {"format": "phh"}`` and the deck that deals
exactly the document's cards. A card the document leaves unknown (``??``) in a hand
that never shows it is filled with a card the document does not name; the fillers
are listed in ``source["unknown"]``. A discard left unknown (``sd ????``, in a
player's or the admin's export of a draw) is taken from a place of the player's hand that
the document leaves unknown, and the new cards take its place; a hand shown later names
the cards it then holds. A hand shown at the showdown must be known. A hand
mucked at the showdown (``sm`` without cards) concedes, as PHH plays it: it is not judged,
shown or paid (its seat is listed in ``source["mucked"]``).
Amounts. Chips here are whole. A document whose amounts have decimals (stakes in
dollars and cents, or a split pot's half chip) is counted in its smallest unit: with
two decimals, one chip of the import is 0.01. ``source["scale"]`` records the factor
(100), and the export divides by it again, so the amounts read back as written. The
smallest chip (for odd chips of split pots) is 1 of those units. Unknown stacks
(``inf``) and more than four decimals are refused, as are decimals in a document with
``_variant``, whose ``_options`` are cardroom's own whole chips.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from functools import reduce

import tomli_w

from domain.cards import RANKS, SUITS
from domain.commands import Act, Showdown, StartHand
from domain.errors import DomainError
from domain.events import (ActionOn, AntePosted, BetCompleted, BetPlaced, BetReturned,
                           BettingRoundClosed, BlindPosted, BoardDealt, BringInPosted, CardsDealt,
                           CardsDrawn, ChipsBought, Event,
                           HandEnded, HandStarted, PlayerCalled, PlayerChecked, PlayerFolded,
                           PlayerRaised, ShowdownEvaluated, StreetStarted, StubReshuffled)
from domain.frozen import replace
from domain.names import MAX_LENGTH, name_problem
from domain.poker import engine, structures
from domain.poker.forced import blind_seats
from domain.poker.variants import VARIANTS
from domain.games import game as game_of
from domain.options import MAX_AMOUNT, MAX_CHIPS, resolve_options

STANDARD = {("texas-holdem", "no-limit"): "NT", ("texas-holdem", "fixed-limit"): "FT",
            ("omaha", "pot-limit"): "PO", ("omaha-hi-lo", "fixed-limit"): "FO/8",
            ("seven-card-stud", "fixed-limit"): "F7S"}
GAMES = {code: game for game, code in STANDARD.items()}
# Who opens PHH's seven card stud (F7S): a hand opened otherwise carries _variant
_F7S_OPENERS = {"first_opener": "lowest_up_card_suit", "later_opener": "best_hand_showing"}
# The option a standard document's import takes its big blind from (``_stake_options``):
# a hand whose big blind is another amount carries _variant
_IMPORTED_BIG_BLIND = {"FT": "small_bet", "FO/8": "small_bet", "NT": "min_bet",
                       "PO": "min_bet"}
UNKNOWN = "??"
_CARD = re.compile(f"[{''.join(RANKS)}][{''.join(SUITS)}]")


def player_order(seats, button: int) -> list[int]:
    """Seat numbers in PHH order: from the dealer's left, the button last."""
    numbers = sorted(s["seat"] for s in seats)
    after = [n for n in numbers if n > button]
    return after + [n for n in numbers if n <= button]


def card_text(cards, unknown=frozenset()) -> str:
    """Cards in PHH notation; anything but a card code (a commitment the reader may not
    open), and the fillers of an imported hand's unknown cards, is ``??``."""
    return "".join(c if isinstance(c, str) and _CARD.fullmatch(c) and c not in unknown
                   else UNKNOWN for c in cards)


# --- export ------------------------------------------------------------------

def export(events: list[Event], facts: dict) -> str:
    """A PHH document of a hand from its events, whose hidden cards the reader may not see
    are anything but a card code (they are written ``??``). ``facts``: our user fields
    (``_table_id`` and so on), written as given."""
    started: HandStarted = events[0]
    order = player_order(started.seats, started.button)
    code = _variant_code(started, events)
    document = {"variant": code} if code else {"_variant": started.game}
    document["_options"] = _plain_options(started.options)
    if unset := sorted(name for name, value in started.options.items() if value is None):
        document["_options_null"] = unset  # TOML has no null: max_raises, no cap, say
    document["ante_trimming_status"] = True  # PokerKit's name for how our antes are posted
    document.update(_stakes(started, order, code))
    names = {s["seat"]: s["name"] for s in started.seats}
    document["starting_stacks"] = [next(s["stack"] for s in started.seats if s["seat"] == n)
                                   for n in order]
    unknown = set(started.source.get("unknown", ()))
    document["actions"], bought = _actions(events, order, unknown)
    if bought:
        document["_chips_bought"] = bought
    ended = next((e for e in events if isinstance(e, HandEnded)), None)
    if ended is not None:
        document["finishing_stacks"] = [ended.stacks[str(n)] for n in order]
    document["players"] = [names[n] for n in order]
    document["_seats"] = order
    scale = started.source.get("scale", 1)
    if scale != 1:
        document = {**_rescaled(document, lambda amount: amount / scale), "_scale": scale}
    document.update({k: v for k, v in facts.items() if v is not None})
    return tomli_w.dumps(document)


def _variant_code(started: HandStarted, events: list[Event]) -> str | None:
    options = started.options
    code = STANDARD.get((started.game, options.get("structure")))
    if any(isinstance(event, ChipsBought) for event in events):
        return None  # PHH's stacks are fixed for the hand
    if any(isinstance(event, (BlindPosted, BringInPosted)) and event.call_to
           for event in events):
        return None  # a forced bet posted short and called in full: PHH calls what was posted
    if _raise_pokerkit_refuses(events):
        return None  # a raise reopened by short all-ins that add up, as PokerKit's are not
    if structures.half_bet_rule(options) and _all_in_wager(events):
        return None  # what may follow it is the half-bet rule's; PHH plays the full-bet rule
    if code == "F7S" and any(isinstance(event, BoardDealt) for event in events):
        return None  # a community river (the stub too short for every seat): PHH's has none
    if code == "F7S" and (not options.get("bring_in") or _open_pair_bet(events, options)):
        return None  # PHH's stud has a bring-in, and no upper limit on fourth street
    if code == "F7S" and any(options.get(name) != rule for name, rule in _F7S_OPENERS.items()):
        return None  # PHH's stud opens by these rules (its import plays by them)
    blind = _IMPORTED_BIG_BLIND.get(code)
    if blind and options.get("big_blind") != options.get(blind):
        return None  # the amount PHH opens at, which its import makes the big blind
    return code


def _raise_pokerkit_refuses(events: list[Event]) -> bool:
    """Whether a player raised again where PokerKit refuses it. All-ins short of a full
    raise that add up to one over the bet a player acted on reopen the betting to it
    (``short_all_ins_add_up``); PokerKit adds up only the short all-ins made one after
    another since the last raise that was not all in, forgets them once they make a full
    raise, and measures a full raise from 0 in each round (its ``State``)."""
    stacks = {s["seat"]: s["stack"] for s in events[0].seats}
    bets: dict[int, int] = {}
    acted, shorts, full = set(), [], 0
    for event in events:
        if isinstance(event, StreetStarted) and event.kind == "bet":
            acted, shorts, full = set(), [], 0
        elif isinstance(event, BettingRoundClosed):
            bets = {}
        elif isinstance(event, (AntePosted, BlindPosted)):
            stacks[event.seat] -= event.amount
            if isinstance(event, BlindPosted):
                bets[event.seat] = bets.get(event.seat, 0) + event.amount
        elif isinstance(event, (BetReturned, ChipsBought)):
            stacks[event.seat] += event.amount
        elif isinstance(event, (PlayerChecked, PlayerCalled, PlayerFolded, BringInPosted,
                                BetPlaced, PlayerRaised, BetCompleted)):
            if isinstance(event, (BetPlaced, PlayerRaised, BetCompleted)):
                if event.seat in acted and shorts and sum(shorts) < full:
                    return True
                raised = event.to - max(bets.values(), default=0)
                if raised >= full:
                    acted = set()
                full = max(full, raised)
                shorts = [*shorts, raised] if stacks[event.seat] == event.added else []
                if sum(shorts) >= full:
                    shorts = []
            acted.add(event.seat)
            if not isinstance(event, (PlayerChecked, PlayerFolded)):
                stacks[event.seat] -= event.added
                bets[event.seat] = event.to
    return False


def _all_in_wager(events: list[Event]) -> bool:
    """Whether a player bet, raised or completed all in."""
    stacks = {s["seat"]: s["stack"] for s in events[0].seats}
    for event in events:
        if isinstance(event, (AntePosted, BlindPosted)):
            stacks[event.seat] -= event.amount
        elif isinstance(event, (BetReturned, ChipsBought)):
            stacks[event.seat] += event.amount
        elif isinstance(event, (PlayerCalled, BringInPosted, BetPlaced, PlayerRaised,
                                BetCompleted)):
            stacks[event.seat] -= event.added
            if not stacks[event.seat] and isinstance(event, (BetPlaced, PlayerRaised,
                                                             BetCompleted)):
                return True
    return False


def _open_pair_bet(events: list[Event], options: dict) -> bool:
    """Whether fourth street was opened at the upper limit (003's open pair rule)."""
    rounds = 0
    for event in events:
        rounds += isinstance(event, BettingRoundClosed)
        if rounds == 1 and isinstance(event, BetPlaced):
            return event.to > options["small_bet"]
    return False


def _plain_options(options: dict) -> dict:
    return {k: v for k, v in options.items() if v is not None}


def _stakes(started: HandStarted, order: list[int], code: str | None) -> dict:
    """antes, blinds_or_straddles, bring_in and the bet sizes, as PHH writes them."""
    options = started.options
    forced = started.source.get("forced")
    if forced is None:
        ante = options.get("ante", 0)
        forced = {"antes": {str(n): ante for n in order},
                  "blinds": _nominal_blinds(started)}
    stakes = {"antes": _phh_array(forced.get("antes", {}), order)}
    if "blinds" in VARIANTS[started.game].forced:
        stakes["blinds_or_straddles"] = _phh_array(forced.get("blinds", {}), order)
    if options.get("bring_in"):
        stakes["bring_in"] = options["bring_in"]
    if options.get("structure") in ("fixed-limit", "spread-limit", "house", "club"):
        stakes.update(small_bet=options["small_bet"], big_bet=options["big_bet"])
    else:
        stakes["min_bet"] = options["min_bet"]
    return stakes


def _nominal_blinds(started: HandStarted) -> dict:
    options = started.options
    if not (options.get("big_blind") or options.get("small_blind")):
        return {}  # a small blind alone is posted too (``forced.forced_bets``)
    small, big = blind_seats(engine.evolve(engine.initial_state(
        {"game": started.game, "options": options}), started))
    blinds = {str(small): options["small_blind"]} if small is not None else {}  # else dead
    return {**blinds, str(big): options["big_blind"]}


def _phh_array(by_seat: dict, order: list[int]) -> list[int]:
    values = [by_seat.get(str(n), 0) for n in order]
    return values[::-1] if len(order) == 2 else values


def _actions(events: list[Event], order: list[int], unknown: set,
             ) -> tuple[list[str], list[dict]]:
    """The PHH actions, and the chips bought during the hand (``_chips_bought``)."""
    p = {seat: f"p{i + 1}" for i, seat in enumerate(order)}
    actions: list[str] = []
    bought: list[dict] = []
    dealt: dict[int, list] = {}  # the cards of the deal in progress, by seat
    last_move = None  # where the showdown lines go: after the last player action
    drawn = 0  # ... and after the last draw (players all in before it still draw)
    opener = None  # PokerKit shows down from the last round's opener or aggressor
    chips = _Chips(events[0])
    held: dict[int, list] = {}  # each seat's cards so far
    down_since: set[int] = set()  # seats dealt a down card since the last player action
    at_move: dict[int, list] = {}  # each seat's cards at the last player action

    def text(cards) -> str:
        return card_text(cards, unknown)

    def flush():
        actions.extend(f"d dh {p[n]} {text(dealt[n])}" for n in order if n in dealt)
        dealt.clear()
    for event in events:
        uncallable = chips.nobody_can_call(getattr(event, "seat", None))
        chips.apply(event)
        if not isinstance(event, CardsDealt):
            flush()
        match event:
            case CardsDealt():
                dealt.setdefault(event.seat, []).extend(event.cards)
                held.setdefault(event.seat, []).extend(event.cards)
                if not event.face_up and last_move is not None:
                    down_since.add(event.seat)
            case BoardDealt():
                actions.append(f"d db {text(event.cards)}")
            case BringInPosted():
                actions.append(f"{p[event.seat]} pb")
            case ChipsBought():
                bought.append({"before_action": len(actions), "player": p[event.seat],
                               "amount": event.amount})
            case BetPlaced() | PlayerRaised() | BetCompleted() if uncallable:
                actions.append(f"{p[event.seat]} cc")  # nobody could call: as good as a call
            case BetPlaced() | PlayerRaised() | BetCompleted():
                actions.append(f"{p[event.seat]} cbr {event.to}")
                opener = event.seat
            case PlayerCalled() | PlayerChecked():
                actions.append(f"{p[event.seat]} cc")
            case PlayerFolded():
                actions.append(f"{p[event.seat]} f")
            case CardsDrawn():
                actions.append(f"{p[event.seat]} sd {text(event.discarded)}".rstrip())
                if event.received:
                    actions.append(f"d dh {p[event.seat]} {text(event.received)}")
                drawn = len(actions)
            case ShowdownEvaluated():
                shown = {h["seat"]: h["cards"] for h in event.hands}
                lines = _showdown_lines(events, order, shown, opener)
                at = len(actions) if last_move is None else max(last_move, drawn)
                if any(not cards for _, cards in lines):  # a muck concedes: after every deal
                    at = len(actions)
                if at == len(actions) or not any(a.startswith("d dh") for a in actions[at:]):
                    actions[at:at] = [f"{p[seat]} sm {text(cards)}".rstrip()
                                      for seat, cards in lines]
                else:  # all in before the last deal: shown then, and again after down cards
                    actions[at:at] = [f"{p[seat]} sm {text(cards[:len(at_move[seat])])}"
                                      .rstrip() for seat, cards in lines]
                    actions += [f"{p[seat]} sm {text(cards)}".rstrip() for seat, cards in lines
                                if seat in down_since]
            case ActionOn():
                if _round_opening(actions, last_move):
                    opener = event.seats[0]
                continue
            case _:
                continue
        if isinstance(event, (BringInPosted, BetPlaced, PlayerRaised, BetCompleted,
                              PlayerCalled, PlayerChecked, PlayerFolded)):
            last_move = len(actions)
            at_move = {seat: list(cards) for seat, cards in held.items()}
            down_since.clear()
    flush()
    return actions, bought


class _Chips:
    """Each seat's stack and bet as the events go, to tell a raise nobody could call."""

    def __init__(self, started: HandStarted):
        self.stack = {s["seat"]: s["stack"] for s in started.seats}
        self.bet = dict.fromkeys(self.stack, 0)
        self.folded: set[int] = set()
        self.may_buy = started.options.get("all_in") == "forbidden"  # chips to call with

    def nobody_can_call(self, raiser: int) -> bool:
        """Every other player still in has no chips beyond the bet to match (and may not
        buy more): a bet or raise would come back unmatched, so it amounts to a call (PHH
        tools refuse it)."""
        top = max(self.bet.values())
        return not any(self.may_buy or self.stack[s] + self.bet[s] > top for s in self.stack
                       if s != raiser and s not in self.folded)

    def apply(self, event: Event) -> None:
        match event:
            case AntePosted():
                self.stack[event.seat] -= event.amount
            case BlindPosted():
                self.stack[event.seat] -= event.amount
                self.bet[event.seat] += event.amount
            case BringInPosted() | BetPlaced() | PlayerRaised() | BetCompleted() | PlayerCalled():
                self.stack[event.seat] -= event.added
                self.bet[event.seat] = event.to
            case BetReturned():
                self.stack[event.seat] += event.amount
                self.bet[event.seat] -= event.amount
            case ChipsBought():
                self.stack[event.seat] += event.amount
            case PlayerFolded():
                self.folded.add(event.seat)
            case BettingRoundClosed():
                self.bet = dict.fromkeys(self.bet, 0)


def _round_opening(actions: list[str], last_move: int | None) -> bool:
    """Whether the turn just given opens a betting round (no player has acted since the
    last deal)."""
    return last_move is None or any(a.startswith("d ") for a in actions[last_move:])


def _showdown_lines(events, order, shown, opener) -> list[tuple[int, tuple]]:
    """(seat, cards shown, or () for a mucked hand) for each player at the showdown, in
    PokerKit's order: from the last opener or aggressor."""
    folded = {e.seat for e in events if isinstance(e, PlayerFolded)}
    start = order.index(opener) if opener in order else 0
    return [(seat, tuple(shown.get(seat, ()))) for seat in order[start:] + order[:start]
            if seat not in folded]


# --- import ------------------------------------------------------------------

class PhhRejected(DomainError):
    def __init__(self, index: int | None, reason: str):
        where = "the document" if index is None else f"action {index}"
        super().__init__("phh_rejected", f"{where}: {reason}", action_index=index,
                         reason=reason)


@dataclass(frozen=True)
class Imported:
    game: str
    options: dict
    seats: tuple  # of {"seat", "name", "stack", "player_id"}
    events: list[Event]


@dataclass(frozen=True)
class _Line:
    index: int
    actor: str  # "d" or a seat number as str
    verb: str
    args: tuple[str, ...]
    places: tuple[int, ...] = ()  # a draw's, where it leaves discards unknown (``_wanted``)


def import_hand(text: str, hand_no: int) -> Imported:
    """Replay a PHH document through the engine: the events of the hand it records, as
    our rules decide them from its moves and its cards. A move the rules refuse raises
    ``PhhRejected`` with its index in ``actions``; recorded ``finishing_stacks`` that the
    replay does not reach raise ``phh_stacks_mismatch``."""
    document, scale = _in_smallest_units(_parse(text))
    game_id, options = _game_and_options(document)
    count = len(document["starting_stacks"])
    names = document.get("players") or [f"p{i}" for i in range(1, count + 1)]
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise PhhRejected(None, "players must be an array of names")
    if len(names) != count:
        raise PhhRejected(None, f"players names {len(names)} players, starting_stacks {count}")
    for name in names:
        problem = (f"a name has at most {MAX_LENGTH} characters" if len(name) > MAX_LENGTH
                   else name_problem(name))
        if problem:
            raise PhhRejected(None, f"players: {name[:MAX_LENGTH]!r}: {problem}")
    seats = tuple({"seat": i + 1, "name": names[i],
                   "stack": _chips(s, "starting_stacks", MAX_CHIPS), "player_id": ""}
                  for i, s in enumerate(document["starting_stacks"]))
    lines = [line for i, text_ in enumerate(document["actions"])
             if (line := _line(i, text_, count)) is not None]
    lines = sorted(lines + _purchases(document, count, scale),
                   key=lambda line: (line.index, line.verb != "buy"))
    chips = sum(s["stack"] for s in seats) + sum(int(line.args[0]) for line in lines
                                                 if line.verb == "buy")
    if chips > MAX_CHIPS:
        raise PhhRejected(None, f"the players' chips come to {chips}: cardroom holds at most "
                          f"{MAX_CHIPS} at a table")
    source = {"format": "phh", "forced": _forced(document, count)}
    if scale != 1:
        source["scale"] = scale
    mucked = sorted({int(line.actor) for line in lines if line.verb == "sm" and _mucks(line)})
    if mucked:
        source["mucked"] = mucked
    game = game_of(game_id)
    if count > game.max_seats(options):
        raise PhhRejected(None, f"{game.name} seats at most {game.max_seats(options)} players "
                          f"under these rules, not {count}")
    wanted, lines = _wanted(lines)
    stubs, unknown = _deck_dealing(game, options, hand_no, seats, source, lines, wanted)
    reshuffled = {"stubs": stubs[1:]} if len(stubs) > 1 else {}
    events = _replay(game, options, StartHand(
        hand_no=hand_no, button=count, seats=seats, server_seed="", client_seeds={},
        deck=tuple(stubs[0]), source={**source, "unknown": unknown, **reshuffled}), lines, None)
    _check_finish(document, events)
    return Imported(game_id, options, seats, events)


def _parse(text: str) -> dict:
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise PhhRejected(None, f"not TOML: {error}") from None
    except RecursionError:
        raise PhhRejected(None, "not TOML that cardroom reads: nested too deeply") from None
    except ValueError as error:  # an integer longer than Python converts (4,300 digits)
        raise PhhRejected(None, f"not TOML that cardroom reads: {error}") from None
    for field in ("antes", "starting_stacks", "actions"):
        if not isinstance(document.get(field), list):
            raise PhhRejected(None, f"the required field {field} is missing or not an array")
    if not 2 <= len(document["starting_stacks"]) <= 10:
        raise PhhRejected(None, "a hand has 2 to 10 players")
    return document


AMOUNTS = ("antes", "blinds_or_straddles", "bring_in", "small_bet", "big_bet", "min_bet",
           "starting_stacks", "finishing_stacks")
MOST_DECIMALS = 4


def _in_smallest_units(document: dict) -> tuple[dict, int]:
    """The document with every amount multiplied by the scale that makes them all whole,
    and that scale (1 when they are whole already)."""
    decimals = max(map(_decimals, _amounts(document)), default=0)
    if not decimals:
        return document, 1
    if decimals > MOST_DECIMALS:
        raise PhhRejected(None, f"amounts with {decimals} decimals; cardroom takes at most "
                          f"{MOST_DECIMALS}")
    if "_variant" in document:
        raise PhhRejected(None, "a document with _variant counts in whole chips")
    return _rescaled(document, lambda amount: amount * 10 ** decimals), 10 ** decimals


def _amounts(document: dict) -> Iterator:
    for field in AMOUNTS:
        value = document.get(field)
        yield from value if isinstance(value, list) else [value]
    for text in document["actions"]:
        words = str(text).split("#", 1)[0].split()
        if len(words) == 3 and words[1] == "cbr":
            yield words[2]


def _exact(amount) -> Decimal | None:
    """``amount`` as an exact decimal, or None if it is not a finite number, or is one past
    10**30 (far past any amount cardroom takes: left as it is, for the import to refuse,
    rather than rescaled into an integer too long to make)."""
    if isinstance(amount, bool) or not isinstance(amount, (int, float, str)):
        return None
    try:
        exact = Decimal(repr(amount) if isinstance(amount, float) else amount)
    except InvalidOperation:
        return None
    return exact if exact.is_finite() and exact.adjusted() < 30 else None


def _decimals(amount) -> int:
    exact = _exact(amount)
    return 0 if exact is None else max(0, -exact.normalize().as_tuple().exponent)


def _rescaled(document: dict, change) -> dict:
    """The document with ``change`` applied to each amount (a Decimal); whatever is not a
    number is left for the import to refuse."""
    def number(amount, exact: Decimal | None):
        if exact is None:
            return amount
        value = change(exact)
        return int(value) if value == value.to_integral_value() else float(value)

    def action(text):
        words = str(text).split("#", 1)[0].split()
        if len(words) != 3 or words[1] != "cbr" or _exact(words[2]) is None:
            return text
        return f"{words[0]} cbr {number(words[2], _exact(words[2]))}"

    def field(value):
        return number(value, None if isinstance(value, str) else _exact(value))

    rescaled = {**document, "actions": [action(text) for text in document["actions"]]}
    for name in AMOUNTS:
        if isinstance(document.get(name), list):
            rescaled[name] = [field(v) for v in document[name]]
        elif name in document:
            rescaled[name] = field(document[name])
    return rescaled


def _game_and_options(document: dict) -> tuple[str, dict]:
    if not isinstance(document.get("_options", {}), dict):
        raise PhhRejected(None, "_options must be a table of option names and values")
    if "_variant" in document:
        game_id = document["_variant"]
        if not isinstance(game_id, str):
            raise PhhRejected(None, "_variant must be the id of a cardroom game")
        requested = {**_PHH_RULES, **document.get("_options", {}), **_null_options(document)}
    else:
        code = document.get("variant")
        if not isinstance(code, str) or code not in GAMES:
            raise PhhRejected(None, f"variant {code!r} is not one cardroom plays; it plays "
                              f"{', '.join(GAMES)} (and, with _variant, its own games)")
        game_id, structure = GAMES[code]  # the standard fields win over our _options
        ours = _our_options(document)
        try:  # even those the standard fields replace: a value no table takes is a mistake
            resolve_options(game_of(game_id).options, ours)
        except DomainError as error:
            raise PhhRejected(None, f"_options: {error.message}") from None
        # antes are posted as written; our _options' ante is the table's (its chip)
        requested = {"ante": 0, **ours, "structure": structure,
                     **_stake_options(document, code), **_PHH_RULES}
    try:
        game = game_of(game_id)
        return game_id, game.resolve_options({"bet_unit": 1, **requested, "reveal": "auditor"})
    except DomainError as error:
        raise PhhRejected(None, error.message) from None


def _our_options(document: dict) -> dict:
    """The ``_options`` of a standard document that cardroom wrote: the rules PHH has no
    field for (the table's chip, by which split pots are divided, say). Not read from a
    document counted in smaller units than it was written in: they are whole chips."""
    options = document.get("_options")
    if not isinstance(options, dict) or "_scale" in document:
        return {}
    return {**options, **_null_options(document)}


def _null_options(document: dict) -> dict:
    """The options ``_options_null`` names, each None (TOML, hence ``_options``, has no
    null)."""
    names = document.get("_options_null", [])
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise PhhRejected(None, "_options_null must be a list of option names")
    return dict.fromkeys(names)


# PHH's rules where tables choose otherwise: a short forced bet is called as it was posted,
# short all-ins that add up to a full raise reopen the betting, and in fixed limit only a
# full bet or raise counts as one (PokerKit's full-bet rule)
_PHH_RULES = {"short_forced_bet": "posted", "short_all_ins_add_up": True,
              "half_bet_rule": False}


def _stake_options(document: dict, code: str) -> dict:
    """The options of a standard variant's stakes."""
    def number(field):
        return _chips(document.get(field), field)
    if code == "F7S":
        return {"bring_in": number("bring_in"), "small_bet": number("small_bet"),
                "big_bet": number("big_bet"), **_F7S_OPENERS, "open_pair_big_bet": False}
    if code in ("FT", "FO/8"):
        return {"big_blind": number(_IMPORTED_BIG_BLIND[code]),
                "small_bet": number("small_bet"), "big_bet": number("big_bet")}
    return {"big_blind": number(_IMPORTED_BIG_BLIND[code]), "min_bet": number("min_bet")}


def _chips(value, field: str, limit: int = MAX_AMOUNT) -> int:
    """A whole number of chips; a stack up to ``MAX_CHIPS``, any other amount up to
    ``MAX_AMOUNT`` (a blind, an ante, a bet size)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        raise PhhRejected(None, f"{field} holds {value!r}, not a number of chips")
    if value in (float("inf"), float("-inf")) or value != int(value) or value < 0:
        raise PhhRejected(None, f"{field} holds {value!r}: cardroom needs every amount "
                          "known and not negative")
    if value > limit:
        raise PhhRejected(None, f"{field} holds {value!r}: cardroom takes amounts up to "
                          f"{limit} (in the document's smallest unit)")
    return int(value)


def _forced(document: dict, count: int) -> dict:
    """The document's antes and blinds by seat (PHH reverses them heads-up)."""
    forced = {}
    for field, name in (("antes", "antes"), ("blinds_or_straddles", "blinds")):
        values = [_chips(v, field) for v in document.get(field) or []]
        if values and len(values) != count:
            raise PhhRejected(None, f"{field} has {len(values)} entries for {count} players")
        if count == 2:
            values = values[::-1]
        forced[name] = {str(i + 1): v for i, v in enumerate(values) if v}
    return forced


def _line(index: int, text: str, count: int) -> _Line | None:
    words = str(text).split("#", 1)[0].split()
    if not words:
        return None
    actor, verb, *args = words + [""] if len(words) == 1 else words
    if actor == "d" and verb in ("dh", "db"):
        if verb == "dh" and (len(args) != 2 or not _player(args[0], count)):
            raise PhhRejected(index, f"{text!r}: a hole deal is 'd dh pN cards'")
        return _Line(index, "d", verb, tuple(args))
    seat = _player(actor, count)
    if seat is None or verb not in ("pb", "cbr", "cc", "f", "sd", "sm"):
        raise PhhRejected(index, f"{text!r} is not a PHH action")
    return _Line(index, seat, verb, tuple(args))


def _purchases(document: dict, count: int, scale: int) -> list[_Line]:
    """``_chips_bought``, cardroom's own field: the chips a player added during the hand,
    each before the action it names (at a table where nobody may go all in, a player
    short of a bet buys the chips to call it). Each is a ``buy`` line of ours."""
    bought = document.get("_chips_bought", [])
    if not isinstance(bought, list):
        raise PhhRejected(None, "_chips_bought is not an array")
    if bought and scale != 1:  # its export would carry _variant, which counts whole chips
        raise PhhRejected(None, "_chips_bought goes with whole chips, not with amounts that "
                          "have decimals")
    lines = []
    for entry in bought:
        fields = entry if isinstance(entry, dict) else {}
        at, amount = fields.get("before_action"), fields.get("amount")
        seat = _player(str(fields.get("player")), count)
        if (set(fields) != {"before_action", "player", "amount"} or seat is None
                or type(at) is not int or not 0 <= at < len(document["actions"])
                or type(amount) is not int or not 0 < amount <= MAX_AMOUNT):
            raise PhhRejected(None, f"_chips_bought holds {entry!r}, not {{before_action = "
                              "<an index in actions>, player = \"pN\", amount = <chips>}")
        lines.append(_Line(at, seat, "buy", (str(amount),)))
    return lines


def _player(word: str, count: int) -> str | None:
    match = re.fullmatch(r"p([1-9][0-9]?)", word)
    return match and int(match.group(1)) <= count and match.group(1) or None


def _cards(text: str, index: int) -> list[str]:
    if len(text) % 2 or not all(_CARD.fullmatch(text[i:i + 2]) or text[i:i + 2] == UNKNOWN
                                for i in range(0, len(text), 2)):
        raise PhhRejected(index, f"{text!r} is not a list of cards")
    return [text[i:i + 2] for i in range(0, len(text), 2)]


# --- the deal: which deck deals exactly the document's cards --------------------

def _deck_dealing(game, options, hand_no, seats, source, lines, wanted,
                  ) -> tuple[list[list[str]], list[str]]:
    """The deck, top first, then the stub each reshuffle makes, that deal each seat and the
    board the document's cards; and the cards that fill the places the document leaves
    unknown.

    Dealing order is the engine's (it depends on who is still in, never on the cards'
    values), so the replay is run with a provisional deck, and every time the engine
    deals, the cards it dealt are swapped for the document's before the step is taken
    again. A reshuffle's stub is first the one the engine shuffles, then arranged the same
    way: it holds what was left of the stub and the cards mucked, so a card mucked may be
    dealt again. ``wanted``: ``_wanted``'s."""
    named = {c for cards in wanted.values() for c, _ in cards if c != UNKNOWN}
    stubs = [sorted(set(_deck_of(game)) - named) + sorted(named)]
    queues = {who: list(cards) for who, cards in wanted.items()}
    fillers: list[str] = []
    taken = 0  # the reshuffles of the steps taken

    def step(state, command, index):
        nonlocal taken
        while True:
            given = {**source, "stubs": stubs[1:]} if len(stubs) > 1 else source
            start = 0
            if isinstance(command, StartHand):
                command = replace(command, deck=tuple(stubs[0]), source=given)
            else:
                stub = stubs[taken]
                start = len(stub) - len(state.deck)
                state = replace(state, deck=tuple(stub[start:]), source=given)
            events = game.decide(state, command)
            made = [list(e.cards) for e in events if isinstance(e, StubReshuffled)]
            if taken + len(made) >= len(stubs):  # the engine shuffled one: given from now on
                stubs.extend(made[len(stubs) - taken - 1:])
            elif not _corrections(events, stubs, taken, queues, named, fillers, index,
                                  state.mucked):
                taken += len(made)
                return state, events
    opening = StartHand(hand_no=hand_no, button=len(seats), seats=seats, server_seed="",
                        client_seeds={}, deck=(), source=source)
    _replay(game, options, opening, lines, step)
    leftover = [(who, cards) for who, cards in queues.items() if cards]
    if leftover:
        who, cards = leftover[0]
        raise PhhRejected(cards[0][1], f"the document deals {_who(who)} more cards than "
                          "the game does")
    return stubs, fillers


def _wanted(lines: list[_Line]) -> tuple[dict[str, list[tuple[str, int]]], list[_Line]]:
    """The cards each player (by seat, as str) and the board ("board") are dealt, in order,
    with the index of the line that deals each; and the lines, each draw that leaves a
    discard unknown given the ``places`` it discards in the player's hand.

    A player's hand is followed place by place (a draw's new cards take the places of its
    discards, in order, as the engine deals them). Unknown cards that the player discards
    or shows later are taken from the discarding or the showing, in the places held then. A
    discard left unknown is the last place whose card the document leaves unknown, to be
    filled by a card it names nowhere: a document that shows a hand from one viewer's
    seat (a player's or the admin's export) tells no more."""
    wanted: dict[str, list[tuple[str, int]]] = {}
    hands: dict[str, list[int]] = {}  # each place of a hand: its card's index in wanted
    refills: dict[str, list[int]] = {}  # the places the next cards dealt take, after a draw
    placed = []
    for line in lines:
        if line.actor == "d":
            who, text = ("board", line.args[0]) if line.verb == "db" else line.args
            who = who if who == "board" else who[1:]
            queue, hand = wanted.setdefault(who, []), hands.setdefault(who, [])
            for card in _cards(text, line.index):
                queue.append((card, line.index))
                free = refills.get(who)
                if free:
                    hand[free.pop(0)] = len(queue) - 1
                else:
                    hand.append(len(queue) - 1)
        elif line.verb == "sd" and line.args:
            discards = _cards(line.args[0], line.index)
            places = _discarded(line, discards, wanted.get(line.actor, []),
                                hands.get(line.actor, []))
            refills[line.actor] = places
            if UNKNOWN in discards:
                line = replace(line, places=tuple(places))
        elif line.verb == "sm" and not _mucks(line):
            _named(wanted.get(line.actor, []), hands.get(line.actor, []),
                   [c for c in _cards(line.args[0], line.index) if c != UNKNOWN])
        placed.append(line)
    return wanted, placed


def _discarded(line: _Line, discards: list[str], queue: list, hand: list[int]) -> list[int]:
    """The places of ``hand`` a draw discards, in order (see ``_wanted``)."""
    known = [c for c in discards if c != UNKNOWN]
    open_places = _named(queue, hand, known)  # a known discard it had not shown dealt
    count = len(discards) - len(known)
    if count > len(open_places):
        raise PhhRejected(line.index, f"p{line.actor} discards {count} cards the document "
                          f"leaves unknown, but holds {len(open_places)} it does not name")
    held = {queue[slot][0]: place for place, slot in enumerate(hand)}
    chosen = [held[c] for c in known if c in held] + open_places[len(open_places) - count:]
    return sorted(chosen)


def _named(queue: list, hand: list[int], cards: list[str]) -> list[int]:
    """Names ``cards`` (those not in ``hand`` already) in the places of ``hand`` whose card
    is unknown, in order; the places left unknown."""
    held = {queue[slot][0] for slot in hand}
    news = [c for c in cards if c not in held]
    unknown = [place for place, slot in enumerate(hand) if queue[slot][0] == UNKNOWN]
    for place, card in zip(unknown, news):
        queue[hand[place]] = (card, queue[hand[place]][1])
    return unknown[len(news):]


def _deck_of(game) -> list[str]:
    return [str(c) for c in VARIANTS[game.id].deck]


def _corrections(events, stubs, taken, queues, named, fillers, index, mucked) -> bool:
    """Swap the document's cards into the places the engine just dealt, in the deck or a
    reshuffled stub (the later stubs of this step are made again after a swap in an
    earlier one); False when it dealt them already (then they are taken off the queues). A
    place the document leaves unknown takes a card it names nowhere (one such card, mucked
    and reshuffled, may fill two places in turn)."""
    dealt = list(_places(events, stubs, taken))
    swapped_in = None  # the stub a swap of this pass was made in
    for (segment, at, who), rank in zip(dealt, _ranks(dealt)):
        if swapped_in is not None and segment > swapped_in:
            break  # dealt from a stub that is made again
        stub, queue = stubs[segment], queues.get(who, [])
        if len(queue) <= rank:
            raise PhhRejected(index, f"the game deals {_who(who)} a card here that the "
                              "document does not")
        card, line = queue[rank]
        if card == UNKNOWN:
            j = next((i for i in range(at, len(stub)) if stub[i] not in named), None)
            if j is None:
                raise PhhRejected(line, f"the document leaves a card of {_who(who)} unknown "
                                  "where every card the stub holds is one it names: import "
                                  "the auditor's export, which names every card")
        elif card not in stub[at:]:
            raise PhhRejected(line, f"{card} is dealt while it lies mucked: the rules deal a "
                              "mucked card only once the stub runs short and is reshuffled"
                              if segment == taken and card in mucked
                              else f"{card} is dealt twice")
        else:
            j = stub.index(card, at)
        if j != at:
            stub[at], stub[j] = stub[j], stub[at]
            del stubs[segment + 1:]
            swapped_in = segment
    if swapped_in is not None:
        return True
    for segment, at, who in dealt:
        card, _ = queues[who].pop(0)
        if card == UNKNOWN:
            fillers.append(stubs[segment][at])
    return False


def _places(events, stubs, taken) -> Iterator[tuple[int, int, str]]:
    """Where each card ``events`` deal lay, as (stub, place in it, recipient), in the order
    dealing takes them: from the stub of the ``taken``-th reshuffle (0: the deck), then
    from each stub the events reshuffle."""
    segment, places = taken, []
    position = {card: i for i, card in enumerate(stubs[segment])}
    for event in events:
        if isinstance(event, StubReshuffled):
            yield from sorted(places)
            segment, places = segment + 1, []
            position = {card: i for i, card in enumerate(stubs[segment])}
        places += [(segment, position[card], who) for who, card in _dealt([event])]
    yield from sorted(places)


def _ranks(dealt) -> list[int]:
    """For each dealt place, how many places before it went to the same recipient."""
    seen: dict[str, int] = {}
    ranks = []
    for *_, who in dealt:
        ranks.append(seen.get(who, 0))
        seen[who] = ranks[-1] + 1
    return ranks


def _dealt(events) -> Iterator[tuple[str, str]]:
    for event in events:
        if isinstance(event, CardsDealt):
            yield from ((str(event.seat), c) for c in event.cards)
        elif isinstance(event, BoardDealt):
            yield from (("board", c) for c in event.cards)
        elif isinstance(event, CardsDrawn):
            yield from ((str(event.seat), c) for c in event.received)


def _who(who: str) -> str:
    return "the board" if who == "board" else f"p{who}"


# --- the moves -------------------------------------------------------------------

def _replay(game, options, opening: StartHand, lines: list[_Line], step) -> list[Event]:
    """Run the document's moves through ``game.decide``; ``step(state, command, index)``
    may take each step instead (to fix the deck)."""
    step = step or (lambda state, command, index: (state, game.decide(state, command)))
    state, events = step(game.initial_state(options), opening, None)
    state = reduce(game.evolve, events, state)
    history = list(events)
    for line in lines:
        if line.actor == "d":
            continue
        if line.verb == "sm":
            _check_shown(state, line)
            continue
        command = _command(game, state, line)
        try:
            state, decided = step(state, command, line.index)
        except PhhRejected:
            raise
        except DomainError as error:  # the rules refuse the move
            raise PhhRejected(line.index, error.message) from None
        state = reduce(game.evolve, decided, state)
        history += decided
    if game.job_owed(state):
        _check_known_at_showdown(state)
        try:
            state, decided = step(state, Showdown(), None)
        except ValueError as error:  # every hand that could win a pot mucked
            raise PhhRejected(None, str(error)) from None
        state = reduce(game.evolve, decided, state)
        history += decided
    if state.status != "ended":
        raise PhhRejected(None, "the document ends before the hand does")
    return history


def _command(game, state, line: _Line) -> Act:
    seat = int(line.actor)
    legal = {a["type"]: a for a in game.legal_actions(state, seat)}
    if not legal:
        waiting = ", ".join(f"p{s}" for s in state.awaiting) or "nobody"
        raise PhhRejected(line.index, f"p{seat} acts, but the rules wait for {waiting}")
    if line.verb == "f":
        return Act(seat=seat, type="fold")
    if line.verb == "cc":
        return Act(seat=seat, type="check" if "check" in legal else "call")
    if line.verb == "pb":
        return Act(seat=seat, type="bring_in")
    if line.verb == "buy":
        return Act(seat=seat, type="add_chips", amount=int(line.args[0]))
    if line.verb == "sd":
        if line.places:  # discards left unknown: the cards in those places (``_wanted``)
            held = state.seat(seat).cards
            return Act(seat=seat, type="draw", cards=tuple(held[p] for p in line.places
                                                           if p < len(held)))
        discards = _cards(line.args[0], line.index) if line.args else []
        return Act(seat=seat, type="draw", cards=tuple(discards))
    if len(line.args) != 1 or not re.fullmatch(r"[0-9]+(\.0*)?", line.args[0]):
        raise PhhRejected(line.index, "cbr takes one whole amount")
    digits = line.args[0].split(".")[0].lstrip("0") or "0"
    if len(digits) > len(str(MAX_CHIPS)) or int(digits) > MAX_CHIPS:  # int() before: too long
        raise PhhRejected(line.index, f"cbr {digits[:20]}{'...' if len(digits) > 20 else ''}: "
                          f"cardroom takes amounts up to {MAX_CHIPS}")
    amount = int(digits)
    if set(legal) == {"bring_in"} and amount == legal["bring_in"]["amount"]:
        return Act(seat=seat, type="bring_in")  # all in: PokerKit calls it a completion too
    kind = next((k for k in ("complete", "bet", "raise") if k in legal), "raise")
    return Act(seat=seat, type=kind, amount=amount)


def _mucks(line: _Line) -> bool:
    """Whether an ``sm`` line mucks the hand (shows no cards)."""
    return not line.args or line.args[0] == "-"


def _check_shown(state, line: _Line) -> None:
    if _mucks(line):
        return
    held = state.seat(int(line.actor)).cards
    if any(card not in held for card in _cards(line.args[0], line.index) if card != UNKNOWN):
        raise PhhRejected(line.index, f"p{line.actor} shows {line.args[0]}, not the cards "
                          "dealt to it")


def _check_known_at_showdown(state) -> None:
    """Every hand the showdown judges is the document's: none holds a card filled in for
    one it leaves unknown (``source["unknown"]``, once the deck is known), unless mucked."""
    fillers = set(state.source.get("unknown", ()))
    mucked = set(state.source.get("mucked", ()))
    for seat in state.in_hand():
        if seat.seat not in mucked and fillers & set(seat.cards):
            raise PhhRejected(None, f"p{seat.seat} reaches the showdown with cards the "
                              "document leaves unknown and does not muck them: a hand "
                              "shown at the showdown must be known")


def _check_finish(document: dict, events: list[Event]) -> None:
    recorded = document.get("finishing_stacks")
    if recorded is None:
        return
    ended = events[-1]
    replayed = [ended.stacks[str(i + 1)] for i in range(len(ended.stacks))]
    if [_chips(s, "finishing_stacks", MAX_CHIPS) for s in recorded] != replayed:
        raise DomainError("phh_stacks_mismatch", f"the document records finishing stacks "
                          f"{recorded}; the replay ends with {replayed}",
                          recorded=recorded, replayed=replayed)

