"""Cross-checks of the poker engine against PokerKit on random hands.

Each hand is played by our engine with random legal moves (``pokerkit_bridge.play``)
while a PokerKit state follows it: PokerKit is dealt exactly the cards our events deal
(each player's cards in order, up and down as dealt, and the board) and makes the same
moves, each one a move both allow (never a fold when checking is possible: our engine
allows it, 000's Example B; PokerKit's tournament mode does not). Stacks are short (up
to three big blinds or small bets), medium or deep, 2 to 10 players (8 in stud), so
there are all-ins, side pots with three and more players, folds, checks, bets and raises
of random legal sizes.

Compared, at every turn: who acts (the hand fails if PokerKit waits for another seat),
whether the player may fold, the amount to call, the bring-in, and the smallest and
largest bet, raise or completion (totals for the round). At the end: the pots (amounts,
and who may win each), who wins each (and each half in hi/lo), what each pot pays whom,
and every final stack.

Where PokerKit and the rule books (or our documented rules) differ, the rule books win:
the turns and pots concerned are recognised exactly, their count is reported, and our
behaviour is asserted. ``DIFFERENCES`` lists them. PokerKit is set up to follow the rule
books where it can (``pokerkit_bridge``: no burns, one bet and three raises, fixed-limit
Omaha hi/lo, 003's open pair).

The engine bugs this cross-check found (fixed in 6fefb7a) are scripted at the end as
regressions, with PokerKit's view of each (in the random hands they would now fail the
comparison). Eight-player stud hands that run out of cards (a common river card, or the
folded hands reshuffled into the stub) are played against PokerKit too.

Size: CARDROOM_CROSSCHECK_HANDS random hands per variant and structure (default 100).
"""

from __future__ import annotations

import os
import random
from collections import Counter
from dataclasses import replace

import pytest

from domain.commands import Act
from domain.errors import DomainError
from domain.events import (BetCompleted, BetPlaced, BoardDealt, BringInPosted,
                           PlayerCalled, PlayerChecked, PlayerRaised, PotAwarded, StreetStarted,
                           StubReshuffled)
from domain.poker import engine
from tests.poker.play import act, start, stacked
from tests.poker.pokerkit_bridge import (Divergence, Mirror, Record, _cap, chip_unit, order, play,
                                         table)

N = int(os.environ.get("CARDROOM_CROSSCHECK_HANDS", "100"))

# PokerKit plays fixed limit by the full-bet rule (test_structures.py: the half-bet rule)
FULL_BET = {"half_bet_rule": False}

# variant, the table options every hand has, and the money options hands choose from
CASES = {
    "holdem-fixed-limit": ("texas-holdem", {"structure": "fixed-limit", **FULL_BET},
                           [{}, {"big_blind": 2}, {"big_blind": 10, "ante": 1}]),
    "holdem-pot-limit": ("texas-holdem", {"structure": "pot-limit"},
                         [{}, {"big_blind": 2}, {"big_blind": 10, "ante": 2}]),
    "holdem-no-limit": ("texas-holdem", {"structure": "no-limit"},
                        [{}, {"big_blind": 2}, {"big_blind": 10, "ante": 1}]),
    "omaha-pot-limit": ("omaha", {"structure": "pot-limit"}, [{}, {"big_blind": 2}]),
    "omaha-hi-lo-fixed-limit": ("omaha-hi-lo", {"structure": "fixed-limit", **FULL_BET},
                                [{}, {"big_blind": 2}, {"big_blind": 10, "ante": 1}]),
    "stud-cardroom": ("seven-card-stud", {"rules": "cardroom", **FULL_BET},
                      [{}, {"ante": 1, "small_bet": 4},
                       {"ante": 2, "small_bet": 10, "bring_in": 3}]),
}

# PokerKit's callers match a big blind or bring-in posted short as it was posted; ours call
# the whole of it unless the table says so (``short_forced_bet``: test_structures.py)
PHH_RULES = {"short_forced_bet": "posted"}

DIFFERENCES = {
    "uncallable_raise": "every other player still in is all in (or cannot cover the bet): "
                        "our engine offers a raise (what nobody calls comes back, BetReturned); "
                        "PokerKit refuses it. The money is the same: PokerKit replays it as a call",
    "cap_counts_short_all_in": "fixed limit, 'one bet and three raises' (003): PokerKit counts "
                               "an all-in raise for less than a full raise toward the cap; our "
                               "engine counts the full raises only (betting.py: max_raises caps "
                               "the raises after the opening bet)",
    "short_all_in_reopens": "an all-in for less than a full bet or raise does not reopen the "
                            "betting to a player who has already acted, unless such all-ins add "
                            "up to a full raise over the bet it acted on (betting.py); PokerKit "
                            "also reopens it after a short opening bet and after a short raise "
                            "over the big blind (its full-raise size starts at 0 before the flop)",
    "short_completion": "stud: after a completion all in for less than a full bet, ours lets the "
                        "next players complete to the full bet (betting.py: until someone "
                        "completes, the others call, complete or fold); PokerKit takes the short "
                        "completion as the opening bet and asks for a full raise over it",
    "bring_in_all_in": "stud: a bring-in seat with no more than the bring-in posts it all in; "
                       "PokerKit also offers the same chips as a completion",
    "open_pair": "003: with an open pair on fourth street the opening bet may be the lower or "
                 "the upper limit; PokerKit has one size per street (the bridge sets it to the "
                 "size our player chose)",
    "odd_chips": "a split pot's indivisible chips: ours are counted in the gcd of the "
                 "table's money options and of what each seat put in, and all go to the "
                 "first winner from the button's left (003); PokerKit splits in single "
                 "points and gives the whole remainder to its first winner",
    "hi_lo_no_low_in_side_pot": "003: with no qualifying low among the players eligible for a "
                                "pot, high takes all of it; PokerKit 0.7.7 halves every pot "
                                "when anyone at the showdown has a low, and shares the low half "
                                "of a pot nobody eligible has a low for among every player "
                                "eligible for it (it compares their missing lows: None == None)",
    "ante_returned": "a player all in for less than the ante: PokerKit gives the others back what "
                     "nobody matched of their antes when it collects them; ours leaves it in a pot "
                     "only its payer may win (PotAwarded with one seat eligible)",
    "skipped_check": "PokerKit asks a player to act when nobody else can bet or call (a big "
                     "blind whose callers are all in); our engine does not; the bridge checks "
                     "for it",
}


def hand(case: str, number: int):
    """Hand ``number`` of a case: everything follows from (case, number)."""
    game, given, money = CASES[case]
    rng = random.Random(f"{case}/{number}")
    options = table(game, {**PHH_RULES, **given, **rng.choice(money)})
    unit = options["big_blind"] or options["small_bet"]
    players = rng.randint(2, 8 if game == "seven-card-stud" else 10)
    seats = sorted(rng.sample(range(1, 11), players))
    stacks = {s: rng.choice([rng.randint(1, 3 * unit), rng.randint(4 * unit, 40 * unit),
                             rng.randint(50 * unit, 400 * unit)]) for s in seats}
    return play(rng, game, options, stacks, rng.choice(seats), f"{rng.getrandbits(256):064x}")


@pytest.mark.parametrize("case", list(CASES))
def test_engine_agrees_with_pokerkit(case):
    stats = Counter()
    problems = []
    for number in range(N):
        stats["hands"] += 1
        try:
            record = hand(case, number)
        except Divergence as diverged:
            problems.append(f"{case} hand {number}: {diverged}")
            continue
        found = compare_turns(record, stats) + compare_money(record, stats)
        problems += [f"{case} hand {number}: {p}" for p in found]
    print(f"\n{case}: " + ", ".join(f"{k} {v}" for k, v in sorted(stats.items())))
    assert not problems, "\n".join(problems[:20])


# --- every turn ------------------------------------------------------------------------------

def ours_as_pokerkit(turn) -> dict:
    """Our legal actions in PokerKit's terms."""
    kinds = {a["type"]: a for a in turn.legal}
    bring_in_due = "bring_in" in kinds or ("fold" not in kinds and "call" in kinds)
    view = {"can_fold": "fold" in kinds and "check" not in kinds, "bring_in": None,
            "call": 0 if "check" in kinds else None, "raise_to": None}
    if bring_in_due:
        view["bring_in"] = (kinds["bring_in"]["amount"] if "bring_in" in kinds
                            else kinds["call"]["amount"] - turn.bet)
    elif "call" in kinds:
        view["call"] = kinds["call"]["amount"] - turn.bet
    for kind in ("bet", "raise", "complete"):
        if kind in kinds:
            a = kinds[kind]
            if kind == "complete":  # all_in: true marks a completion all in for less
                view["raise_to"] = (a["amount"], a["amount"])
                continue
            low, high = a["min"], a["max"]
            if "all_in" in a:  # an extra legal total, off the steps or below the minimum
                low, high = min(low, a["all_in"]), max(high, a["all_in"])
            view["raise_to"] = (low, high)
    return view


def compare_turns(record, stats: Counter) -> list[str]:
    problems = []
    for turn in record.turns:
        ours, theirs = ours_as_pokerkit(turn), turn.pk
        stats["turns"] += 1
        for key in ("can_fold", "call", "bring_in"):
            if ours[key] != theirs[key]:
                problems.append(f"seat {turn.seat} {key}: ours {ours[key]}, PokerKit "
                                f"{theirs[key]} ({turn.legal}; {theirs})")
        if ours["raise_to"] != theirs["raise_to"]:
            why = explain_raise(record, turn, ours["raise_to"], theirs["raise_to"])
            if why is None:
                problems.append(f"seat {turn.seat} bet/raise to: ours {ours['raise_to']}, "
                                f"PokerKit {theirs['raise_to']} ({turn.legal}; {theirs})")
            else:
                stats[why] += 1
    if record.pk.skipped_checks:
        stats["skipped_check"] += record.pk.skipped_checks
    if record.pk.raises_as_calls:
        stats["uncallable_raise_made"] += record.pk.raises_as_calls
    return problems


def explain_raise(record, turn, ours, theirs) -> str | None:
    """Which documented difference or known bug makes the bet/raise ranges differ, checking
    that ours is what our rules say; None when none does."""
    o, pk = record.options, turn.pk
    reach = turn.bet + turn.stack
    events = round_events(record, turn)
    full = [i for i, e in enumerate(events) if _full(e)]
    since = events[full[-1] + 1:] if full else events
    shorts = [e for e in since if isinstance(e, (BetPlaced, PlayerRaised)) and not e.full]
    acted = any(getattr(e, "seat", None) == turn.seat and _action(e)
                for e in (events[full[-1]:] if full else events))
    if theirs is None and not pk["others_can_call"] and ours is not None:
        return "uncallable_raise" if turn.stack > (pk["call"] or 0) else None
    if (theirs is None and ours is not None and o["structure"] == "fixed-limit"
            and pk["raises"] == _cap(o, blind=pk["street"] == 0 and bool(o["big_blind"]))):
        round_shorts = [e for e in events if isinstance(e, PlayerRaised) and not e.full]
        full_raises = sum(isinstance(e, PlayerRaised) and e.full for e in events)
        if round_shorts and full_raises < o["max_raises"]:
            return "cap_counts_short_all_in"
    if ours is None and theirs is not None and acted and shorts:
        return "short_all_in_reopens"
    if pk["open_pair"] and any(a["type"] == "bet" for a in turn.legal):
        small, big = min(o["small_bet"], reach), min(o["big_bet"], reach)
        if ours == (small, big) and theirs == (small, small):
            return "open_pair"
    if (ours is None and theirs == (reach, reach)
            and any(a["type"] == "bring_in" and a["amount"] == reach for a in turn.legal)):
        return "bring_in_all_in"
    if (record.game == "seven-card-stud" and pk["street"] == 0
            and ours == (min(o["small_bet"], reach),) * 2 and theirs != ours
            and any(isinstance(e, BetCompleted) and not e.full for e in events)
            and not any(isinstance(e, BetCompleted) and e.full for e in events)):
        return "short_completion"
    return None


def round_events(record, turn) -> list:
    """The events of the betting round so far, before ``turn``."""
    events = record.events[:turn.at]
    starts = [i for i, e in enumerate(events) if isinstance(e, StreetStarted) and e.kind == "bet"]
    return events[starts[-1] + 1:]


def _full(event) -> bool:
    return isinstance(event, BetCompleted) or (isinstance(event, (BetPlaced, PlayerRaised))
                                               and event.full)


def _action(event) -> bool:
    return isinstance(event, (PlayerChecked, PlayerCalled, BetPlaced, PlayerRaised, BetCompleted,
                              BringInPosted))


# --- pots, winners, stacks ---------------------------------------------------------------------

def compare_money(record, stats: Counter) -> list[str]:
    pk = record.pk
    awards = [e for e in record.events if isinstance(e, PotAwarded)]
    ours_final, pk_final = record.final_stacks, pk.stacks
    ours_got, pk_got = Counter(), Counter()
    for award in awards:
        ours_got.update({int(s): v for s, v in award.shares.items()})
    for _, _, amounts in pk.pushes:
        pk_got.update(amounts)
    if awards[0].reason == "uncontested":
        # PokerKit leaves the winner's own last bet out of its pot; the stacks say it all.
        stats["uncontested"] += 1
        (winner,) = awards[0].winners
        if len(awards) != 1 or set(pk_got) != {winner} or ours_final != pk_final:
            return [f"uncontested: ours {awards} ends {ours_final}; PokerKit pushed "
                    f"{pk.pushes}, ends {pk_final}"]
        return []
    # PokerKit gives back what nobody matched of the antes when it collects them (a player
    # all in for less than the ante); ours leaves it in a pot only its payer may win.
    returned = pk.returned_antes
    for seat, amount in returned.items():
        stats["ante_returned"] += 1
        (mine,) = [i for i, a in enumerate(awards) if a.eligible == (seat,)]
        if awards[mine].amount == amount:
            awards = awards[:mine] + awards[mine + 1:]
        else:
            awards[mine] = replace(awards[mine], amount=awards[mine].amount - amount,
                                   shares={str(seat): awards[mine].amount - amount})
        ours_got[seat] -= amount
    stats["showdowns"] += 1
    stats["side_pots"] += len(awards) - 1
    stats["side_pots_3+_players"] += sum(len(a.eligible) >= 3 for a in awards[1:])
    ours_pots = [(a.amount, tuple(sorted(a.eligible))) for a in awards]
    if ours_pots != pk.pots:
        return [f"pots: ours {ours_pots}, PokerKit {pk.pots}"]
    # what each seat put in, by PokerKit: what it won, less what it gained, and its antes back
    committed = {seat["seat"]: pk_got[seat["seat"]] + returned.get(seat["seat"], 0)
                 - (pk_final[seat["seat"]] - seat["stack"]) for seat in record.seats}
    hi_lo, left_first = record.game == "omaha-hi-lo", order(record)
    chip = chip_unit(record.options, committed)
    problems = []
    for number, award in enumerate(awards):
        highs = best(pk.hands[0], award.eligible, left_first)
        lows = best(pk.hands[1], award.eligible, left_first) if hi_lo else []
        if hi_lo and (list(award.halves["high"]), list(award.halves["low"])) != (highs, lows):
            problems.append(f"pot {number} halves: ours {award.halves}, PokerKit's hands: high "
                            f"{highs}, low {lows}")
        if not hi_lo and list(award.winners) != highs:
            problems.append(f"pot {number} winners: ours {award.winners}, PokerKit's hands {highs}")
        expected = rule_shares(award.amount, highs, lows, chip)
        if {int(s): v for s, v in award.shares.items() if v} != expected:
            problems.append(f"pot {number} ({award.amount}) shares: ours {award.shares}, the rule "
                            f"books {expected}")
        theirs = pokerkit_shares(pk, award.amount, award.eligible, left_first)
        if expected != theirs:  # both pay the same winners, by different rules
            no_low = hi_lo and not lows and len(award.eligible) > 1
            stats["hi_lo_no_low_in_side_pot" if no_low else "odd_chips"] += 1
    # PokerKit pays its pots (merged where it kills hands that win nothing) by its rules
    theirs = Counter()
    for amount, eligible in pk.pushed_pots:
        theirs.update(pokerkit_shares(pk, amount, eligible, left_first))
    if +pk_got != +theirs:
        problems.append(f"PokerKit pushed {dict(pk_got)}, its rules say {dict(theirs)}")
    # What each seat paid in and took back outside the pots (antes, blinds, bets, uncalled
    # bets returned) is the same; so every final stack is PokerKit's, but for the pots.
    for seat in ours_final:
        if ours_final[seat] - ours_got[seat] != pk_final[seat] - pk_got[seat]:
            problems.append(f"seat {seat}: ours ends with {ours_final[seat]} (won "
                            f"{ours_got[seat]}), PokerKit {pk_final[seat]} (won {pk_got[seat]})")
    stats["same_final_stacks"] += ours_final == pk_final
    return problems


def best(hands: dict, eligible, left_first: list[int]) -> list[int]:
    """The seats among ``eligible`` holding the best of PokerKit's hands, from the button's
    left (none when nobody eligible holds one: a low)."""
    held = [s for s in left_first if s in eligible and hands.get(s) is not None]
    top = max((hands[s] for s in held), default=None)
    return [s for s in held if hands[s] == top]


def split(amount: int, winners: list[int], chip: int) -> dict[int, int]:
    """003: tied winners share, "any odd amount going to the player immediately to the
    left of the dealer": every indivisible chip, and a remainder smaller than the table's
    chip, to the first winner from the button's left."""
    units, loose = divmod(amount, chip)
    each, odd = divmod(units, len(winners))
    shares = {seat: each * chip for seat in winners}
    shares[winners[0]] += odd * chip + loose
    return shares


def rule_shares(amount: int, highs: list[int], lows: list[int], chip: int) -> dict[int, int]:
    """003: high and low halves (the odd chip to high); with no qualifying low among the
    players eligible for the pot, high takes all of it."""
    if not lows:
        shares = Counter(split(amount, highs, chip))
    else:
        units, loose = divmod(amount, chip)
        high = (units - units // 2) * chip + loose
        shares = Counter(split(high, highs, chip)) + Counter(split(amount - high, lows, chip))
    return {s: v for s, v in shares.items() if v}


def pokerkit_shares(pk, amount: int, eligible, left_first) -> dict[int, int]:
    """How PokerKit 0.7.7 pays a pot: halves when anyone shown holds a low, even if nobody
    eligible for this pot does (then every player eligible shares that half: PokerKit
    compares their missing lows, None == None), and the remainder of each division to the
    first (the high half; the winner nearest the button's left)."""
    kinds = [k for k, hands in enumerate(pk.hands) if any(h is not None for h in hands.values())]
    shares = Counter()
    half, extra = divmod(amount, len(kinds))
    for k in kinds:
        winners = best(pk.hands[k], eligible, left_first) or [s for s in left_first
                                                                if s in eligible]
        each, rest = divmod(half + (extra if k == kinds[0] else 0), len(winners))
        shares.update({s: each + (rest if i == 0 else 0) for i, s in enumerate(winners)})
    return +shares


# --- stud out of cards ------------------------------------------------------------------------

def calling_station(folds: int = 0):
    """Check or call (or bring in) every time; on sixth street one seat bets the minimum and
    the next ``folds`` players facing it fold."""
    folded = []

    def choose(rng, seat, legal, pk, cards):
        kinds = {a["type"]: a for a in legal}
        if pk["street"] == 3 and "bet" in kinds and folds:
            return Act(seat=seat, type="bet", amount=kinds["bet"]["min"])
        if pk["street"] == 3 and "call" in kinds and len(folded) < folds:
            folded.append(seat)
            return Act(seat=seat, type="fold")
        for kind in ("check", "call", "bring_in"):
            if kind in kinds:
                return Act(seat=seat, type=kind, amount=kinds[kind].get("amount")
                           if kind == "bring_in" else None)
        raise AssertionError(legal)
    return choose


@pytest.mark.parametrize("folds, dealt", [(0, BoardDealt), (3, StubReshuffled)])
def test_stud_out_of_cards_against_pokerkit(folds, dealt):
    """Eight players in stud: with all eight to the river the deck is short and the river is
    one common card (003); with three folded on sixth street, their cards are reshuffled
    into the stub for the river (001). PokerKit does the same."""
    options = table("seven-card-stud", {"rules": "cardroom", **PHH_RULES})
    stacks = {seat: 1000 for seat in range(1, 9)}
    for number in range(20):
        record = play(random.Random(number), "seven-card-stud", options, stacks, 8,
                      f"{number:064x}", chooser=calling_station(folds))
        if any(isinstance(e, dealt) for e in record.events):
            break
    else:
        raise AssertionError(f"no {dealt.__name__} in 20 hands")
    stats = Counter()
    assert compare_turns(record, stats) + compare_money(record, stats) == []
    assert stats["showdowns"] == 1


# --- engine bugs the cross-check found (fixed in 6fefb7a), as regressions -------------------------

def scripted(game: str, stacks: list[int], button: int, moves=(), deck=None, **given):
    """A scripted hand in our engine with PokerKit following it: (our state, the mirror)."""
    state, events = start(stacks, game=game, button=button, deck=deck, **given)
    mirror = Mirror(Record(game, state.options, button, events[0].seats, seed=""))
    mirror.follow(events)
    for seat, kind, amount in moves:
        mirror.apply(Act(seat=seat, type=kind, amount=amount), mirror.observe(seat))
        state, events = act(state, seat, kind, amount)
        mirror.follow(events)
    return state, mirror


def allows(state, total: int) -> bool:
    """Whether the seat to act may bet, raise or complete to ``total``."""
    for a in engine.legal_actions(state, state.to_act):
        if a["type"] == "complete" and a["amount"] == total:
            return True
        if a["type"] in ("bet", "raise") and (total == a.get("all_in") or (
                a["min"] <= total <= a["max"] and (total - a["min"]) % a["step"] == 0)):
            return True
    return False


def test_stud_completion_all_in_for_less():
    """The bring-in seat (2c) has 19 chips behind and the completion is 20: it may bring in
    or complete all in for 19 (all_in: side_pots; PokerKit too). Before the fix, only the
    bring-in was offered."""
    deck = stacked("seven-card-stud", [1, 2, 3], {1: "Ah Kh Qd Qs Jd Td 9d",
                                                  2: "As Ks Kd Js Jc Tc 9c",
                                                  3: "Ad Kc 2c 3d 4d 5d 6d"})
    state, mirror = scripted("seven-card-stud", [500, 500, 24], 3, deck=deck, rules="cardroom")
    assert state.to_act == 3
    assert mirror.observe(3)["raise_to"] == (19, 19)
    assert allows(state, 19)


def test_pot_limit_minimum_raise_over_a_small_pot():
    """Blinds of 25/50 posted all in for 12 and 7: the pot limit (12 + 31 = 43) is below
    the minimum raise (12 + 50); the minimum raise is allowed, as PokerKit has it, and
    nothing more. Before the fix, only a raise all in for the whole stack was offered."""
    state, mirror = scripted("texas-holdem", [12, 7, 1000, 1000], 4, structure="pot-limit",
                             **PHH_RULES)
    assert state.to_act == 3
    assert mirror.observe(3)["raise_to"] == (62, 62)
    raise_ = next(a for a in engine.legal_actions(state, 3) if a["type"] == "raise")
    assert (raise_["min"], raise_["max"], raise_.get("all_in")) == (62, 62, None)


@pytest.mark.parametrize("last_all_in", [260, 240])
def test_short_all_ins_reopen_the_betting_where_they_add_up_to_a_full_raise(last_all_in):
    """A raise to 150 (by 100), then all-ins to 200 and 260 (or 240): 110 (or 90) over the
    raiser's bet, a full raise or not; both engines reopen the betting, or neither."""
    moves = [(4, "raise", 150), (1, "raise", 200), (2, "raise", last_all_in), (3, "call", None)]
    state, mirror = scripted("texas-holdem", [200, last_all_in, 1000, 1000], 1, moves,
                             structure="no-limit")
    raise_ = next((a for a in engine.legal_actions(state, 4) if a["type"] == "raise"), None)
    ours = raise_ and (raise_["min"], raise_["max"])
    assert ours == mirror.observe(4)["raise_to"] == ((360, 1000) if last_all_in == 260 else None)


def test_no_zero_raise_after_a_short_open_pair_bet():
    """003's open pair: seat 1 shows 5d 5h on fourth street and bets its last 5; the next
    seat may raise to 25 (PokerKit) and never to 0. Before the fix, a raise to 0 (min 0,
    max 0) was offered and PlayerRaised(to=0, added=0, full=True) accepted."""
    deck = stacked("seven-card-stud", [1, 2, 3], {1: "Ah Kh 5d 5h Jd Td 9d",
                                                  2: "As Ks 2c 9s Jc Tc 9c",
                                                  3: "Ad Qc Kd 7h 4d 3d 6d"})
    moves = [(2, "bring_in", 10), (3, "call", None), (1, "call", None), (1, "bet", 5)]
    state, mirror = scripted("seven-card-stud", [20, 500, 500], 3, moves, deck=deck,
                             rules="cardroom", **FULL_BET)
    assert state.to_act == 2 and state.current_bet == 5
    assert mirror.observe(2)["raise_to"] == (25, 25)
    assert allows(state, 25) and not allows(state, 0)
    with pytest.raises(DomainError):
        act(state, 2, "raise", 0)


def test_the_big_blinds_seat_opens_even_when_it_cannot_post():
    """A 2-chip ante leaves seat 2, the big blind, nothing to post: the first round still
    opens left of the big blind's seat (003; PokerKit too). Before the fix, the small blind
    opened it."""
    state, mirror = scripted("texas-holdem", [100, 2, 500], 3, big_blind=10, ante=2)
    assert mirror.seats[mirror.state.actor_index] == 3
    assert state.to_act == 3
