"""PHH both ways, against PokerKit's PHH parser (a test-only dependency, pinned).

* Export: random hands of every variant PHH has a code for (the PokerKit cross-check's
  hands, whose every move PokerKit also allows), written by ``domain.phh.export``, load in
  PokerKit and replay to the stacks PokerKit reached playing the same hand, which are ours
  wherever the two engines' rules agree on the money (``test_crosscheck_pokerkit`` names
  the exceptions: odd chips, hi/lo side pots, antes of players all in for less).
* Import: random hands played by PokerKit alone, with all-ins and side pots, written by
  PokerKit's own ``HandHistory``, import and replay to PokerKit's final stacks.
* Round trip: random hands of every game, exported, import again to their stacks (and a
  draw hand all in before its draw writes the draws before the shows).
* Real published hands (``tests/data/phh``, each naming its source) import and replay to
  the stacks their authors recorded; a published document with a move out of turn is
  refused with its position.

Size: CARDROOM_PHH_HANDS random hands per case and direction (default 25).
"""

from __future__ import annotations

import os
import random
import re
import tomllib
from functools import reduce
from pathlib import Path

import pytest
import tomli_w
from pokerkit import (Automation, FixedLimitSevenCardStud, FixedLimitTexasHoldem, HandHistory,
                      NoLimitTexasHoldem, PotLimitOmahaHoldem)

from domain import fairness, phh
from domain.commands import Act, Showdown
from domain.events import (BlindPosted, BoardDealt, BringInPosted, CardsDealt, CardsDrawn,
                           HandEnded, PotAwarded, ShowdownEvaluated, StubReshuffled,
                           event_from_dict)
from domain.frozen import replace
from domain.poker import engine
from domain.poker.game import PokerGame
from domain.views import Viewer, hidden_values

from tests.poker.play import act, calling_hand, play_out, rules_problems, start, viewed
from tests.poker.pokerkit_bridge import Divergence
from tests.poker.test_crosscheck_pokerkit import hand

N = int(os.environ.get("CARDROOM_PHH_HANDS", "25"))
DATA = Path(__file__).resolve().parents[1] / "data" / "phh"
EXPORTED = {"holdem-fixed-limit": "FT", "holdem-no-limit": "NT", "omaha-pot-limit": "PO",
            "omaha-hi-lo-fixed-limit": "FO/8", "stud-cardroom": "F7S"}


def replayed_by_pokerkit(text: str) -> list[int]:
    *_, state = HandHistory.loads(text)
    return list(state.stacks)


@pytest.mark.parametrize("case", list(EXPORTED))
def test_exports_replay_in_pokerkit(case):
    checked = agreeing = 0
    for number in range(N):
        try:
            record = hand(case, number)
        except Divergence:
            continue  # a hand the two engines' rules cannot both play (see the cross-check)
        text = phh.export(record.events, {"_table_id": "t", "_hand_no": 1})
        if record.options.get("open_pair_big_bet") and "_variant" in text:
            assert "set_street_size" in {method for method, _ in record.pk.calls}
            continue  # an open pair's upper limit on fourth street: not PHH's F7S
        assert f'variant = "{EXPORTED[case]}"' in text
        order = phh.player_order(record.seats, record.button)
        theirs = replayed_by_pokerkit(text)
        assert theirs == [record.pk.stacks[seat] for seat in order], (case, number, text)
        checked += 1
        if record.pk.stacks == record.final_stacks:
            agreeing += 1
            assert theirs == [record.final_stacks[seat] for seat in order]
    assert checked >= N * 0.8 and agreeing >= checked * 0.5, (checked, agreeing)


def test_a_hand_with_an_all_in_wager_under_the_half_bet_rule_is_written_under_variant():
    """PHH plays the full-bet rule: a hand in which a player bet or raised all in under
    ``half_bet_rule`` is written with ``_variant``; one without stays FT, and PokerKit
    replays it to the same stacks."""
    written = {"_variant": 0, "variant": 0}
    for number in range(2 * N):
        rng = random.Random(number)
        stacks = [rng.choice([70, 95, 170, 1000]) for _ in range(rng.randint(2, 6))]
        state, events = start(stacks, game="texas-holdem", button=1 + number % len(stacks),
                              seed=rng.randbytes(32).hex(), structure="fixed-limit",
                              half_bet_rule=True)
        events += play_out(state, rng)[1]
        document = tomllib.loads(phh.export(events, {}))
        assert ("_variant" in document) is phh._all_in_wager(events), number
        written["_variant" if "_variant" in document else "variant"] += 1
        if "variant" in document:
            order = phh.player_order(events[0].seats, events[0].button)
            assert replayed_by_pokerkit(phh.export(events, {})) == [
                events[-1].stacks[str(seat)] for seat in order], number
    assert min(written.values()) > 0, written


def test_a_pot_limit_holdem_hand_is_written_under_variant_of_its_own():
    record = hand("holdem-pot-limit", 0)
    document = phh.export(record.events, {})
    assert "\nvariant" not in "\n" + document
    assert '_variant = "texas-holdem"' in document and 'structure = "pot-limit"' in document
    imported = phh.import_hand(document, 1)
    assert imported.options["structure"] == "pot-limit"
    assert imported.events[-1].stacks == {str(i + 1): record.final_stacks[seat] for i, seat
                                          in enumerate(phh.player_order(record.seats,
                                                                        record.button))}


AUTOMATIONS = (Automation.ANTE_POSTING, Automation.BET_COLLECTION,
               Automation.BLIND_OR_STRADDLE_POSTING, Automation.CARD_BURNING,
               Automation.HOLE_DEALING, Automation.BOARD_DEALING,
               Automation.HOLE_CARDS_SHOWING_OR_MUCKING, Automation.HAND_KILLING,
               Automation.CHIPS_PUSHING, Automation.CHIPS_PULLING)
POKERKIT_GAMES = {
    "NT": lambda: NoLimitTexasHoldem(AUTOMATIONS, True, 0, (1, 2), 2),
    "FT": lambda: FixedLimitTexasHoldem(AUTOMATIONS, True, 0, (1, 2), 2, 4),
    "PO": lambda: PotLimitOmahaHoldem(AUTOMATIONS, True, 0, (1, 2), 2),
    "F7S": lambda: FixedLimitSevenCardStud(AUTOMATIONS, True, 1, 2, 4, 8),
}


def pokerkit_hand(code: str, rng: random.Random) -> tuple[str, list[int]]:
    """A hand PokerKit plays alone with random moves, written by PokerKit, and its stacks.
    Where the rule books and PokerKit disagree, the moves keep to what both allow: nobody
    re-raises once a player is all in (``short_all_in_reopens`` in the cross-check), and
    fixed limit stops at one bet and three raises (PokerKit allows four raises before the
    flop)."""
    random.seed(rng.random())  # PokerKit shuffles with the random module
    game = POKERKIT_GAMES[code]()
    players = rng.randint(2, 6)
    state = game([rng.choice([rng.randint(3, 30), rng.randint(40, 400)])
                  for _ in range(players)], players)
    raised: dict[int, int] = {}  # completions, bets and raises by street
    while state.status:
        cap = 3 if code == "FT" and state.street_index == 0 else 4
        if state.can_post_bring_in() and rng.random() < 0.7:
            state.post_bring_in()
        elif (state.can_complete_bet_or_raise_to() and 0 not in state.stacks
              and (code in ("NT", "PO") or raised.get(state.street_index, 0) < cap)
              and rng.random() < 0.3):
            raised[state.street_index] = raised.get(state.street_index, 0) + 1
            low = state.min_completion_betting_or_raising_to_amount
            high = state.max_completion_betting_or_raising_to_amount
            state.complete_bet_or_raise_to(rng.choice([low, high, rng.randint(low, high)]))
        elif state.can_fold() and rng.random() < 0.2:
            state.fold()
        elif state.can_post_bring_in():
            state.post_bring_in()
        else:
            state.check_or_call()
    return HandHistory.from_game_state(game, state).dumps(), list(state.stacks)


@pytest.mark.parametrize("code", list(POKERKIT_GAMES))
def test_pokerkit_hands_import_to_pokerkit_stacks(code):
    rng = random.Random(f"phh-import/{code}")
    for number in range(N):
        text, stacks = pokerkit_hand(code, rng)
        imported = phh.import_hand(text, 1)
        ended = imported.events[-1]
        assert isinstance(ended, HandEnded)
        ours = [ended.stacks[str(i + 1)] for i in range(len(stacks))]
        if ours != stacks:
            awards = [e for e in imported.events if type(e).__name__ == "PotAwarded"]
            # PokerKit gives a split pot's remainder otherwise (odd_chips in the cross-check)
            assert any(a.amount % len(a.winners) for a in awards), (code, number, text, ours)


@pytest.mark.parametrize("name, scale, stacks", [
    ("dwan-ivey-2009", 1, [572100, 1997500, 1109500]),
    ("pluribus-100-0", 1, None),
    ("pluribus-102-0", 10, [10112.5, 9775, 10000, 10000, 10112.5, 10000]),
])
def test_published_hands_replay_to_their_recorded_stacks(name, scale, stacks):
    text = (DATA / f"{name}.phh").read_text()
    imported = phh.import_hand(text, 1)  # raises phh_stacks_mismatch where they differ
    assert not rules_problems(imported.events)
    assert imported.events[0].source.get("scale", 1) == scale
    ours = [chips / scale for _, chips in sorted(imported.events[-1].stacks.items())]
    if stacks is not None:
        assert ours == stacks
    if scale == 1:  # PokerKit gives a split pot's odd chip to one winner
        assert ours == replayed_by_pokerkit(text)
    exported = tomllib.loads(phh.export(imported.events, {}))
    assert exported["finishing_stacks"] == tomllib.loads(text).get("finishing_stacks", ours)


CENTS = """variant = "NT"
antes = [0, 0]
blinds_or_straddles = [0.5, 0.25]
min_bet = 0.5
starting_stacks = [10.01, 20]
actions = ["d dh p1 AcAd", "d dh p2 7c2d", "p1 cbr 1.25", "p2 cc", "d db 2h3h4h", "p1 cc",
           "p2 cbr 5.01", "p1 f"]
finishing_stacks = [8.76, 21.25]
"""


def test_amounts_in_cents_are_counted_in_cents_and_exported_as_written():
    imported = phh.import_hand(CENTS, 1)
    assert imported.events[0].source["scale"] == 100
    assert [s["stack"] for s in imported.seats] == [1001, 2000]
    assert imported.events[-1].stacks == {"1": 876, "2": 2125}
    exported = phh.export(imported.events, {})
    written, read_back = tomllib.loads(CENTS), tomllib.loads(exported)
    for field in ("blinds_or_straddles", "min_bet", "starting_stacks", "finishing_stacks"):
        assert read_back[field] == written[field], field
    assert [a for a in read_back["actions"] if " cbr " in a] == ["p1 cbr 1.25", "p2 cbr 5.01"]
    assert [float(s) for s in replayed_by_pokerkit(exported)] == [8.76, 21.25]


@pytest.mark.parametrize("change, reason", [
    (("min_bet = 0.5", "min_bet = 0.500001"), "at most 4"),
    (("variant = \"NT\"", "_variant = \"texas-holdem\""), "whole chips"),
    (("min_bet = 0.5", "min_bet = 0.5\n_chips_bought = [{before_action = 3, player = \"p2\", "
      "amount = 1}]"), "_chips_bought goes with whole chips"),  # exported, it could not return
])
def test_amounts_past_four_decimals_or_with_our_own_variant_are_refused(change, reason):
    with pytest.raises(phh.PhhRejected, match=reason):
        phh.import_hand(CENTS.replace(*change), 1)


THREE_WAY = """variant = "NT"
antes = [0, 0, 0, 0]
blinds_or_straddles = [1, 2, 0, 0]
min_bet = 2
starting_stacks = [100, 100, 100, 100]
actions = ["d dh p1 2c3d", "d dh p2 2d3h", "d dh p3 2h3c", "d dh p4 4c5d", "p3 cc", "p4 cc",
           "p1 cc", "p2 cc", "d db AsKsQs", "p1 cbr 2", "p2 cc", "p3 cc", "p4 f", "d db Js",
           "p1 cc", "p2 cc", "p3 cc", "d db Ts", "p1 cc", "p2 cc", "p3 cc", "p1 sm 2c3d",
           "p2 sm 2d3h", "p3 sm 2h3c"]
"""


@pytest.mark.parametrize("change, reason", [
    (('variant = "NT"', 'variant = ["NT"]'), "not one cardroom plays"),
    (('variant = "NT"', "variant = {a = 1}"), "not one cardroom plays"),
    (('variant = "NT"', '_variant = ["texas-holdem"]'), "_variant must be"),
    (('variant = "NT"', "_variant = {a = 1}"), "_variant must be"),
    (('variant = "NT"', '_variant = "texas-holdem"\n_options = 5'), "_options must be"),
    (('variant = "NT"', '_variant = "texas-holdem"\n_options = [1]'), "_options must be"),
    (('variant = "NT"', 'variant = "NT"\n_options = "x"'), "_options must be"),
    (("min_bet = 2", "min_bet = 2\nplayers = 5"), "players must be"),
    (("min_bet = 2", 'min_bet = 2\nplayers = "abcd"'), "players must be"),
    (("min_bet = 2", 'min_bet = 2\nplayers = [{a = 1}, "b", "c", "d"]'), "players must be"),
])
def test_fields_of_the_wrong_kind_are_refused(change, reason):
    with pytest.raises(phh.PhhRejected, match=reason):
        phh.import_hand(THREE_WAY.replace(*change), 1)


def test_a_three_way_split_gives_both_odd_chips_to_the_first_winner_left_of_the_button():
    """003: "any odd amount going to the player immediately to the left of the dealer": a
    pot of 14 split three ways pays 6, 4 and 4 (PokerKit too), not 5, 5 and 4."""
    awarded = [e for e in phh.import_hand(THREE_WAY, 1).events if isinstance(e, PotAwarded)]
    assert [(e.amount, e.shares) for e in awarded] == [(14, {"1": 6, "2": 4, "3": 4})]
    assert replayed_by_pokerkit(THREE_WAY) == [100 - 4 + 6, 100, 100, 98]


def test_a_published_hand_with_a_move_out_of_turn_is_refused_at_that_move():
    text = (DATA / "wsop-2019-event-42-day-3-00-01-07.phh").read_text()
    with pytest.raises(phh.PhhRejected) as refused:
        phh.import_hand(text, 1)
    # p8, the button, never acts before p1 calls: the move at index 13 is out of turn.
    assert refused.value.extra["action_index"] == 13
    assert "p8" in refused.value.message


def test_unknown_cards_of_a_folded_player_are_filled_and_exported_unknown():
    text = (DATA / "dwan-ivey-2009.phh").read_text()
    imported = phh.import_hand(text, 1)
    started = imported.events[0]
    assert len(started.source["unknown"]) == 2
    assert not set(started.source["unknown"]) & {"Ac", "2d", "7h", "6h", "Jc", "3d", "5c",
                                                 "4h", "Jh"}
    assert '"d dh p2 ????"' in phh.export(imported.events, {})


@pytest.mark.parametrize("change, index, reason", [
    (('"p3 cc",  # Dwan\n  # Flop', '"p3 cbr 5",  # Dwan\n  # Flop'), 6, "raise to between"),
    (('"p2 f",', '"p1 f",'), 5, "rules wait for p2"),
    (('"d db 4h"', '"d db Ac"'), 10, "Ac is dealt twice"),
    (('"p1 sm Ac2d"', '"p1 sm AcKd"'), 15, "not the cards dealt"),
])
def test_an_illegal_document_is_refused_at_its_move(change, index, reason):
    text = (DATA / "dwan-ivey-2009.phh").read_text().replace(*change)
    with pytest.raises(phh.PhhRejected) as refused:
        phh.import_hand(text, 1)
    assert refused.value.extra["action_index"] == index
    assert reason in refused.value.message


MUCKED = """variant = "NT"
antes = [0, 0, 0]
blinds_or_straddles = [1, 2, 0]
min_bet = 2
starting_stacks = [100, 100, 100]
actions = ["d dh p1 ????", "d dh p2 Kh3d", "d dh p3 ????", "p3 f", "p1 cc", "p2 cc",
           "d db Th4dJc", "p1 cc", "p2 cc", "d db 7s", "p1 cc", "p2 cc", "d db 9h",
           "p1 cc", "p2 cc", "p1 sm", "p2 sm Kh3d"]
"""


def test_a_hand_mucked_at_the_showdown_concedes_and_is_never_shown():
    """p1 mucks its unknown cards: the cards filled in for them (a pair of deuces, which
    would beat p2's king high) are not judged, shown or paid; p2's king high wins, as PHH
    and PokerKit play it. With every hand mucked, the document is refused."""
    imported = phh.import_hand(MUCKED, 1)
    assert imported.events[0].source["mucked"] == [1]
    (evaluated,) = [e for e in imported.events if e.type == "ShowdownEvaluated"]
    assert [h["seat"] for h in evaluated.hands] == [2]
    assert imported.events[-1].stacks == {"1": 98, "2": 102, "3": 100}
    assert not rules_problems(imported.events)  # p1's own history judges p2's hand alone
    assert '"p1 sm"' in phh.export(imported.events, {})
    with pytest.raises(phh.PhhRejected) as refused:
        phh.import_hand(MUCKED.replace('"p2 sm Kh3d"', '"p2 sm"'), 1)
    assert "mucked" in refused.value.message


def test_a_hand_mucked_all_in_is_exported_after_the_last_deal_and_replays_in_pokerkit():
    """PokerKit shows hands down where the players are all in, before the rest of the board;
    a muck there concedes at once, so a muck is written after the last deal."""
    text = tomli_w.dumps({
        "variant": "NT", "antes": [0, 0], "blinds_or_straddles": [1, 2], "min_bet": 2,
        "starting_stacks": [100, 100],
        "actions": ["d dh p1 AhAd", "d dh p2 KhKd", "p2 cbr 100", "p1 cc", "d db 2c3c8s",
                    "d db 9d", "d db Js", "p2 sm", "p1 sm AhAd"]})
    exported = phh.export(phh.import_hand(text, 1).events, {})
    assert tomllib.loads(exported)["actions"][-3:] == ["d db Js", "p2 sm", "p1 sm AhAd"]
    assert replayed_by_pokerkit(exported) == [200, 0]


@pytest.mark.parametrize("shows", ['"p1 sm ????", ', ""])
def test_a_hand_at_the_showdown_with_unknown_cards_is_refused_unless_mucked(shows):
    """p1 shows "????", or reaches the showdown without a word: its cards would be the
    fillers, judged and shown as if dealt."""
    with pytest.raises(phh.PhhRejected) as refused:
        phh.import_hand(MUCKED.replace('"p1 sm", ', shows), 1)
    assert "p1 reaches the showdown with cards the document leaves unknown" in (
        refused.value.message)


@pytest.mark.parametrize("name, reason", [("p\x00", "control character"), (" ", "visible"),
                                          ("x" * 41, "at most 40")])
def test_a_player_name_the_api_would_refuse_is_refused(name, reason):
    document = tomllib.loads(MUCKED)
    with pytest.raises(phh.PhhRejected) as refused:
        phh.import_hand(tomli_w.dumps({**document, "players": ["Ann", name, "Bo"]}), 1)
    assert reason in refused.value.message


def test_recorded_finishing_stacks_the_replay_does_not_reach_are_reported():
    text = (DATA / "pluribus-100-0.phh").read_text().replace("10310, 9900", "10300, 9910")
    with pytest.raises(Exception) as refused:
        phh.import_hand(text, 1)
    assert refused.value.code == "phh_stacks_mismatch"
    assert refused.value.extra["replayed"][:2] == [10310, 9900]


def test_straddles_and_a_big_blind_ante_are_posted_as_written():
    text = """variant = "NT"
antes = [0, 3, 0, 0]
blinds_or_straddles = [1, 2, 4, 0]
min_bet = 2
starting_stacks = [100, 100, 100, 100]
actions = ["d dh p1 AsAh", "d dh p2 KsKh", "d dh p3 QsQh", "d dh p4 JsJh", "p4 cbr 6",
           "p1 f", "p2 f", "p3 f"]
"""
    imported = phh.import_hand(text, 1)
    posted = [(type(e).__name__, e.seat, e.amount) for e in imported.events
              if type(e).__name__ in ("AntePosted", "BlindPosted")]
    assert posted == [("AntePosted", 2, 3), ("BlindPosted", 1, 1), ("BlindPosted", 2, 2),
                      ("BlindPosted", 3, 4)]
    assert imported.events[-1].stacks == dict(zip("1234", replayed_by_pokerkit(text)))
    with pytest.raises(phh.PhhRejected) as refused:  # the straddle's min raise is to 6
        phh.import_hand(text.replace("p4 cbr 6", "p4 cbr 5"), 1)
    assert refused.value.extra["action_index"] == 4


def test_a_draw_hand_all_in_before_the_draw_is_exported_with_its_draws_before_the_shows():
    """The callers are all in after the first round; every player still draws, then shows:
    the export writes the draws first, and the document imports to the hand's stacks."""
    state, events = start([1000, 40, 40], game="five-card-draw", all_in="side_pots")
    while state.status != "ended":
        if state.status == "showdown_pending":
            command = Showdown()
        else:
            seat = state.to_act
            legal = {a["type"]: a for a in engine.legal_actions(state, seat)}
            if "draw" in legal:
                command = Act(seat=seat, type="draw", cards=state.seat(seat).cards[:1])
            elif "bet" in legal and state.seat(seat).stack > 100:
                command = Act(seat=seat, type="bet", amount=legal["bet"]["max"])
            else:
                command = Act(seat=seat, type="call" if "call" in legal else "check")
        new = engine.decide(state, command)
        state = reduce(engine.evolve, new, state)
        events += new
    text = phh.export(events, {})
    moves = [action.split()[1] for action in tomllib.loads(text)["actions"]]
    draws = [i for i, move in enumerate(moves) if move == "sd"]
    shows = [i for i, move in enumerate(moves) if move == "sm"]
    assert len(draws) == 3 and shows and max(draws) < min(shows), text
    imported = phh.import_hand(text, 1)  # its seats numbered in the document's order
    order = phh.player_order(events[0].seats, events[0].button)
    assert [imported.events[-1].stacks[str(n)] for n in range(1, len(order) + 1)] == [
        events[-1].stacks[str(seat)] for seat in order]


@pytest.mark.parametrize("game, options", [
    ("five-card-draw", {}), ("seven-card-stud", {}), ("texas-holdem", {}),
    ("omaha", {"structure": "pot-limit"}), ("omaha-hi-lo", {}),
    ("five-card-draw", {"all_in": "forbidden"}), ("texas-holdem", {"all_in": "forbidden"}),
    ("seven-card-stud", {"all_in": "forbidden"}), ("five-card-draw", {"small_blind": 2}),
    ("texas-holdem", {"small_blind": 37}), ("omaha", {"big_blind": 0, "small_blind": 10}),
    ("omaha-hi-lo", {"ante": 130, "split_chip": "table"}),
    ("texas-holdem", {"structure": "fixed-limit", "half_bet_rule": True}),
    ("seven-card-stud", {"half_bet_rule": True})])
def test_random_hands_export_and_import_again_to_their_stacks(game, options):
    """Hands played with random moves, with side pots, or where nobody may go all in and
    players buy chips mid-hand to call (``_chips_bought``), exported and imported again:
    the same finishing stacks, split pots included (their chip, of the table's amounts and
    its ante, travels in ``_options``),
    and a small blind posted without a big blind, or larger than it, too (play opens left
    of the larger blind, as an import's does)."""
    bought = 0
    for number in range(2 * N):
        rng = random.Random(number)
        stacks = [rng.choice([40, 75, 120, 300, 1000, 5000]) for _ in range(rng.randint(2, 6))]
        state, events = start(stacks, game=game, button=1 + number % len(stacks),
                              seed=rng.randbytes(32).hex(), **{"all_in": "side_pots", **options})
        events += play_out(state, rng)[1]
        order = phh.player_order(events[0].seats, events[0].button)
        text = phh.export(events, {})
        imported = phh.import_hand(text, 1)
        assert [imported.events[-1].stacks[str(n)] for n in range(1, len(order) + 1)] == [
            events[-1].stacks[str(seat)] for seat in order], (game, number)
        assert not rules_problems(imported.events), (game, number)
        bought += len(tomllib.loads(text).get("_chips_bought", []))
    assert bought > 0 if options.get("all_in") == "forbidden" else bought == 0


@pytest.mark.parametrize("game, options", [
    ("seven-card-stud", {"first_opener": "highest_up_card"}),
    ("seven-card-stud", {"later_opener": "lowest_up_card"}),
    ("omaha-hi-lo", {"small_bet": 1}),
    ("texas-holdem", {"structure": "fixed-limit", "small_bet": 2}),
    ("texas-holdem", {"big_blind": 0}), ("omaha", {"big_blind": 0})])
def test_a_hand_played_by_rules_its_variant_code_lacks_is_written_under_variant_of_its_own(
        game, options):
    """PHH's F7S opens with the lowest up card and later the best hand showing, its FT and
    FO/8 open at the small bet and its NT and PO at the minimum bet (their import makes it
    the big blind): a hand played by other openers, or with another big blind, is written
    with ``_variant`` (a PHH tool then refuses it plainly), and imports again to its
    stacks."""
    for number in range(N):
        rng = random.Random(number)
        stacks = [rng.choice([40, 75, 120, 300, 1000, 5000]) for _ in range(rng.randint(2, 6))]
        state, events = start(stacks, game=game, button=1 + number % len(stacks),
                              seed=rng.randbytes(32).hex(), **options)
        events += play_out(state, rng)[1]
        text = phh.export(events, {})
        assert tomllib.loads(text)["_variant"] == game and "variant" not in tomllib.loads(text)
        order = phh.player_order(events[0].seats, events[0].button)
        imported = phh.import_hand(text, 1)
        assert [imported.events[-1].stacks[str(n)] for n in range(1, len(order) + 1)] == [
            events[-1].stacks[str(seat)] for seat in order], (game, number)
        assert not rules_problems(imported.events), (game, number)


@pytest.mark.parametrize("rule, code", [("full", None), ("posted", "NT")])
def test_a_short_big_blind_is_written_as_its_table_called_it(rule, code):
    """A big blind posted all in for 30 of 50: called in full (``short_forced_bet: full``)
    the hand is written under ``_variant`` (PHH calls what was posted, and so would replay
    other amounts) and imports again as it was played; called as posted it is a standard
    hand, which PokerKit replays to the same stacks, and which imports as posted."""
    text, stacks = checked_down([1000, 1000, 30, 1000], [(4, "call", None), (1, "call", None),
                                                         (2, "call", None)],
                                short_forced_bet=rule)
    assert tomllib.loads(text).get("variant") == code
    if code:
        assert replayed_by_pokerkit(text) == stacks
    imported = phh.import_hand(text, 1)
    assert imported.options["short_forced_bet"] == rule
    assert [e.call_to for e in imported.events if isinstance(e, BlindPosted)] == [
        None, 50 if rule == "full" else None]
    assert [imported.events[-1].stacks[str(n)] for n in range(1, 5)] == stacks
    if code:  # any standard document: a hand another tool wrote has no _options
        plain = {k: v for k, v in tomllib.loads(text).items() if k != "_options"}
        imported = phh.import_hand(tomli_w.dumps(plain), 1)
        assert [imported.events[-1].stacks[str(n)] for n in range(1, 5)] == stacks


@pytest.mark.parametrize("stacks, moves, code", [
    ([250, 1000, 280, 1000, 1000, 200],
     [(4, "raise", 150), (5, "call", None), (6, "raise", 200), (1, "raise", 250),
      (2, "call", None), (3, "raise", 280), (4, "raise", 380), (5, "call", None),
      (2, "call", None)], None),
    ([130, 1000, 150, 1000],
     [(4, "raise", 100), (1, "raise", 130), (2, "call", None), (3, "raise", 150),
      (4, "raise", 200), (2, "call", None)], "NT")])
def test_a_raise_reopened_by_short_all_ins_is_standard_where_pokerkit_takes_it(
        stacks, moves, code):
    """Short all-ins that add up to a full raise over the bet a player acted on reopen the
    betting to it. PokerKit adds up only those since the last time they made a full raise:
    after all-ins to 200 and 250 over a raise to 150, another to 280 closes it again there,
    so that hand is written under ``_variant``; all-ins to 130 and 150 over a raise to 100
    reopen it in both, and that hand is standard, which PokerKit replays to its stacks.
    Both import again to their stacks."""
    text, final = checked_down(stacks, moves)
    assert tomllib.loads(text).get("variant") == code
    if code:
        assert replayed_by_pokerkit(text) == final
    imported = phh.import_hand(text, 1)
    assert [imported.events[-1].stacks[str(n)] for n in range(1, len(stacks) + 1)] == final


def checked_down(stacks, moves, **options) -> tuple[str, list[int]]:
    """A no-limit hold'em hand (button 1) of these moves, checked down to its showdown: its
    PHH document and its final stacks in PHH's order."""
    state, events = start(stacks, game="texas-holdem", button=1, structure="no-limit",
                          **options)
    for seat, kind, amount in moves:
        state, done = act(state, seat, kind, amount)
        events += done
    while state.status == "betting":
        state, checked = act(state, state.to_act, "check")
        events += checked
    events += engine.decide(state, Showdown())
    order = phh.player_order(events[0].seats, events[0].button)
    return phh.export(events, {}), [events[-1].stacks[str(seat)] for seat in order]


def test_an_all_in_bring_in_written_as_a_completion_imports_as_the_bring_in():
    """PokerKit lets a bring-in seat with no more than the bring-in post it as a completion
    too (``bring_in_all_in`` in the cross-check); p3 here, 2 chips after its ante, writes
    ``cbr 2``: read as the bring-in, the hand imports to PokerKit's stacks."""
    text = tomli_w.dumps({
        "variant": "F7S", "ante_trimming_status": False, "antes": [1] * 6, "bring_in": 2,
        "small_bet": 4, "big_bet": 8, "starting_stacks": [13, 18, 3, 7, 21, 79],
        "actions": ["d dh p1 2sJs9s", "d dh p2 6s4cAc", "d dh p3 Qh4s3s", "d dh p4 7s7d8c",
                    "d dh p5 8hTs5d", "d dh p6 Qd2c5c", "p3 cbr 2", "p4 f", "p5 f", "p6 cc",
                    "p1 cc", "p2 cc", "d dh p1 7h", "d dh p2 4h", "d dh p3 Kd", "d dh p6 Jc",
                    "p2 cc", "p6 cc", "p1 cc", "d dh p1 6d", "d dh p2 3c", "d dh p3 4d",
                    "d dh p6 3h", "p2 cc", "p6 cc", "p1 cc", "d dh p1 Ks", "d dh p2 6h",
                    "d dh p3 5s", "d dh p6 As", "p6 cc", "p1 cc", "p2 cc", "d dh p1 Td",
                    "d dh p2 Th", "d dh p3 8d", "d dh p6 Qc", "p6 cc", "p1 cc", "p2 cc",
                    "p6 sm Qd2c5cJc3hAsQc", "p1 sm 2sJs9s7h6dKsTd", "p2 sm 6s4cAc4h3c6hTh",
                    "p3 sm Qh4s3sKd4d5s8d"]})
    imported = phh.import_hand(text, 1)
    assert [e for e in imported.events if isinstance(e, BringInPosted)] == [
        BringInPosted(seat=3, to=2, added=2)]
    assert [imported.events[-1].stacks[str(n)] for n in range(1, 7)] == replayed_by_pokerkit(
        text)


def test_a_hand_without_a_raise_cap_imports_again_with_none():
    """``max_raises`` null (no cap) travels in ``_options_null``, TOML having no null: the
    import does not put back the structure's cap of three raises a round."""
    state, events = start([5000, 5000], game="five-card-stud", max_raises=None)
    raises = 0
    while raises < 5:
        legal = {a["type"]: a for a in engine.legal_actions(state, state.to_act)}
        kind = next(k for k in ("raise", "bet", "complete", "call") if k in legal)
        state, new = act(state, state.to_act, kind, legal[kind].get("min"))
        events, raises = events + new, raises + (kind == "raise")
    events += play_out(state, random.Random(1))[1]
    text = phh.export(events, {})
    assert tomllib.loads(text)["_options_null"] == ["max_raises"]
    imported = phh.import_hand(text, 1)
    assert imported.events[0].options["max_raises"] is None
    assert imported.events[-1].stacks == {str(n): events[-1].stacks[str(seat)] for n, seat in
                                          enumerate(phh.player_order(events[0].seats,
                                                                     events[0].button), 1)}


@pytest.mark.parametrize("names", ["max_raises", [1], ["no_such_option"]])
def test_options_null_that_name_no_option_are_refused(names):
    state, events = start([5000, 5000], game="five-card-stud", max_raises=None)
    document = tomllib.loads(phh.export(events + play_out(state, random.Random(2))[1], {}))
    with pytest.raises(phh.PhhRejected):
        phh.import_hand(tomli_w.dumps({**document, "_options_null": names}), 1)


def _hand_with_chips_bought() -> dict:
    """The first random Five Card Draw hand, where nobody may go all in, whose export
    lists chips bought."""
    for number in range(100):
        rng = random.Random(number)
        stacks = [rng.choice([40, 75, 120, 300]) for _ in range(rng.randint(3, 6))]
        state, events = start(stacks, game="five-card-draw", seed=rng.randbytes(32).hex(),
                              all_in="forbidden")
        document = tomllib.loads(phh.export(events + play_out(state, rng)[1], {}))
        if document.get("_chips_bought"):
            return document
    raise AssertionError("no hand bought chips")


@pytest.mark.parametrize("change, index, reason", [
    ({"amount": 0}, None, "_chips_bought holds"),
    ({"amount": 5.5}, None, "_chips_bought holds"),
    ({"player": "p9"}, None, "_chips_bought holds"),
    ({"before_action": 999}, None, "_chips_bought holds"),
    ({"paid": True}, None, "_chips_bought holds"),
    ({"before_action": 0}, 0, "add_chips is not possible now"),  # nothing to call yet
])
def test_chips_bought_that_the_hand_cannot_have_are_refused(change, index, reason):
    document = _hand_with_chips_bought()
    phh.import_hand(tomli_w.dumps(document), 1)  # as exported, it imports
    document["_chips_bought"][0].update(change)
    with pytest.raises(phh.PhhRejected) as refused:
        phh.import_hand(tomli_w.dumps(document), 1)
    assert refused.value.extra["action_index"] == index
    assert reason in refused.value.message


def _dealt_to(events: list, seat: int) -> list[str]:
    return [card for e in events if getattr(e, "seat", None) == seat
            for card in (e.cards if isinstance(e, CardsDealt) else
                         e.received if isinstance(e, CardsDrawn) else ())]


@pytest.mark.parametrize("game, players, options", [
    ("seven-card-stud", 8, {}), ("seven-card-stud", 8, {"stub_first": False}),
    ("five-card-draw", 6, {"max_discard": 5})])
def test_a_hand_whose_stub_was_reshuffled_imports_again_dealing_mucked_cards_again(
        game, players, options):
    """The stub reshuffled with mucked cards deals some of them a second time: the import
    keeps each reshuffled stub as the document deals from it (``source["stubs"]``, hidden
    as the deck is), so every player gets the document's cards, the stacks are the same
    and the verifier takes each card off the stubs in turn."""
    reshuffled = dealt_again = 0
    for number in range(2 * N):
        events = calling_hand(game, players, number, options)
        if not any(isinstance(e, StubReshuffled) for e in events):
            continue
        reshuffled += 1
        order = phh.player_order(events[0].seats, events[0].button)
        imported = phh.import_hand(phh.export(events, {}), 1).events
        assert [imported[-1].stacks[str(n)] for n in range(1, players + 1)] == [
            events[-1].stacks[str(seat)] for seat in order]
        cards = [_dealt_to(events, seat) for seat in order]
        assert [_dealt_to(imported, n) for n in range(1, players + 1)] == cards
        every = [card for seat_cards in cards for card in seat_cards]
        dealt_again += len(every) > len(set(every))
        started = imported[0]
        assert started.source["stubs"] and "/source/stubs" in hidden_values(game, started)
        assert not rules_problems(imported), number
        state = reduce(engine.evolve, imported, engine.initial_state(
            {"game": game, "options": started.options}))
        history = viewed(imported, Viewer("auditor"), state)
        deck = history[0]["openings"]["/deck"]["value"]
        assert fairness.dealt_in_order(deck, history) == sum(
            len(seat_cards) for seat_cards in cards) + len(state.board)
    assert reshuffled >= N // 4 and dealt_again > 0, (reshuffled, dealt_again)


def test_an_imported_stub_that_does_not_hold_the_cards_left_and_mucked_deals_nothing():
    """A reshuffled stub given with a card that is in a player's hand: the engine refuses to
    reshuffle into it, and the verifier calls a history that deals from it forged."""
    hands = (calling_hand("seven-card-stud", 8, number, {}) for number in range(2 * N))
    events = next(e for e in hands if any(isinstance(x, StubReshuffled) for x in e))
    imported = phh.import_hand(phh.export(events, {}), 1).events
    stub = list(imported[0].source["stubs"][0])
    forged = [next(c for c in _dealt_to(imported, 1) if c not in stub)] + stub[1:]
    at = next(i for i, e in enumerate(imported) if isinstance(e, StubReshuffled))
    move = max(i for i in range(at) if PokerGame.replay_command(imported[i], "") is not None)
    before = reduce(engine.evolve, imported[:move], engine.initial_state(
        {"game": "seven-card-stud", "options": imported[0].options}))
    engine.decide(before, PokerGame.replay_command(imported[move], ""))  # as imported
    before = replace(before, source={**before.source, "stubs": [forged]})
    with pytest.raises(ValueError, match="does not hold the cards left and mucked"):
        engine.decide(before, PokerGame.replay_command(imported[move], ""))

    state = reduce(engine.evolve, imported, engine.initial_state(
        {"game": "seven-card-stud", "options": imported[0].options}))
    history = viewed(imported, Viewer("auditor"), state)
    deck = history[0]["openings"]["/deck"]["value"]
    history[0]["openings"]["/source/stubs"]["value"] = [forged]
    history[at]["openings"]["/cards"]["value"] = forged
    with pytest.raises(fairness.Problem, match="does not hold the rest of the stub"):
        fairness.dealt_in_order(deck, history)


def test_a_pokerkit_hand_that_deals_mucked_cards_before_the_stub_runs_short_is_refused():
    """PokerKit burns a card before each street (the rule books burn none), so its stub runs
    short a street's burns sooner, and it deals mucked cards where ours still holds cards:
    eight-player stud with a few folds. Such a document is refused at that card, saying why."""
    refused = []
    for number in range(12):
        rng = random.Random(f"burned/{number}")
        random.seed(rng.random())  # PokerKit shuffles with the random module
        game = POKERKIT_GAMES["F7S"]()
        state = game([rng.randint(100, 400) for _ in range(8)], 8)
        while state.status:
            if state.can_post_bring_in():
                state.post_bring_in()
            elif state.can_fold() and rng.random() < 0.08:
                state.fold()
            else:
                state.check_or_call()
        try:
            phh.import_hand(HandHistory.from_game_state(game, state).dumps(), 1)
        except phh.PhhRejected as error:
            refused.append(error.message)
    assert refused and all("is dealt while it lies mucked" in message
                           for message in refused), refused


def _exported_as(events: list, viewer: Viewer) -> str:
    """``events`` written as ``viewer``'s PHH export: the cards they may not see ``??``."""
    state = reduce(engine.evolve, events, engine.initial_state(
        {"game": events[0].game, "options": events[0].options}))
    return phh.export([event_from_dict(e["type"], fairness.unseal(e["data"], e["openings"]))
                       for e in viewed(events, Viewer(*viewer), state)], {})


def test_a_players_export_of_a_reshuffled_hand_fills_unknown_cards_only_with_cards_unnamed():
    """A player's export leaves the others' down cards unknown, and the reshuffle may deal
    one of them again, named: an unknown place is filled only with a card the document
    names nowhere (``source.unknown`` is public), and where none is left the document is
    refused, pointing to the auditor's export, which names every card."""
    imported = refused = 0
    for number in range(N):
        events = calling_hand("seven-card-stud", 8, number, {})
        if not any(isinstance(e, StubReshuffled) for e in events):
            continue
        for seat in events[0].seats:
            text = _exported_as(events, ("player", seat["seat"], seat["player_id"]))
            try:
                started = phh.import_hand(text, 1).events[0]
            except phh.PhhRejected as error:
                assert "import the auditor's export" in error.message, error.message
                refused += 1
                continue
            named = set(re.findall(r"[2-9TJQKA][cdhs]", "".join(
                tomllib.loads(text)["actions"])))
            assert not named & set(started.source["unknown"]), (number, seat)
            imported += 1
    assert imported and refused, (imported, refused)


@pytest.mark.parametrize("options", [{}, {"rules": "club"}])
def test_exports_of_a_draw_that_leave_discards_unknown_import_again_to_their_stacks(options):
    """A player's or the admin's export of Five Card Draw leaves the others' discards
    unknown (``sd ????``): each discard is taken from a place the document leaves unknown,
    and the new cards take the discards' places, so the hands shown at the end are the
    ones dealt and the import ends with the same stacks."""
    draws = 0
    for number in range(N):
        rng = random.Random(f"unknown-discards/{number}")
        stacks = [rng.choice([75, 300, 1000]) for _ in range(rng.randint(2, 5))]
        state, events = start(stacks, button=1 + number % len(stacks),
                              seed=rng.randbytes(32).hex(), **options)
        events += play_out(state, rng)[1]
        order = phh.player_order(events[0].seats, events[0].button)
        shown = _shown_hands(events)
        for viewer in [("admin",)] + [("player", s["seat"], s["player_id"])
                                      for s in events[0].seats]:
            text = _exported_as(events, viewer)
            draws += " sd ??" in text
            imported = phh.import_hand(text, 1).events
            assert [imported[-1].stacks[str(n)] for n in range(1, len(order) + 1)] == [
                events[-1].stacks[str(seat)] for seat in order], (number, viewer)
            assert not rules_problems(imported), (number, viewer)
            assert {order[int(seat) - 1]: cards for seat, cards in
                    _shown_hands(imported).items()} == shown, (number, viewer)
    assert draws


def _shown_hands(events: list) -> dict:
    evaluated = next((e for e in events if isinstance(e, ShowdownEvaluated)), None)
    return {h["seat"]: sorted(h["cards"]) for h in evaluated.hands} if evaluated else {}


def test_a_stud_hand_with_a_community_river_is_written_under_variant_and_imports_again():
    """Eight players at seven card stud run the stub short of a river card each: one card
    is dealt face up to all (003). PHH's ``F7S`` deals no board, so the hand goes under
    ``_variant``, and imports again to its stacks."""
    written = 0
    for number in range(N):
        events = calling_hand("seven-card-stud", 8, number, {})
        if not any(isinstance(e, BoardDealt) for e in events):
            continue
        text = phh.export(events, {})
        document = tomllib.loads(text)
        assert "variant" not in document and document["_variant"] == "seven-card-stud"
        assert any(line.startswith("d db ") for line in document["actions"])
        order = phh.player_order(events[0].seats, events[0].button)
        imported = phh.import_hand(text, 1).events
        assert [imported[-1].stacks[str(n)] for n in range(1, 9)] == [
            events[-1].stacks[str(seat)] for seat in order], number
        written += 1
    assert written
