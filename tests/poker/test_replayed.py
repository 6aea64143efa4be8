"""The verifier's rules check (``domain.poker.replayed``) against histories an operator
edited: each edit below pays or shows what the rules do not, and fails from the history of
a reader who can tell (everything else a forger re-chains and re-signs)."""

from functools import reduce

import pytest

from domain.commands import Showdown
from domain.poker import engine
from domain.poker.replayed import rules_problem
from domain.views import Viewer
from tests.poker.play import act, start, viewed

OUTSIDER = Viewer("admin")


def ended(moves, **options):
    """Three players, seat 1 on the button, ``moves`` ((seat, type, amount)...) to the end
    of the hand (a showdown settled): its events and the hand at the end."""
    state, events = start([1000] * 3, button=1, **options)
    for seat, move, amount in moves:
        state, more = act(state, seat, move, amount)
        events += more
    if state.status == "showdown_pending":
        more = engine.decide(state, Showdown())
        state, events = reduce(engine.evolve, more, state), events + more
    assert state.status == "ended"
    return events, state


CHECKED_DOWN = [(2, "check", None), (3, "check", None), (1, "check", None), (2, "draw", None),
                (3, "draw", None), (1, "draw", None), (2, "check", None), (3, "check", None),
                (1, "check", None)]


def history(events, state, viewer=OUTSIDER):
    return viewed(events, viewer, state)


def data(history, kind):
    return next(e["data"] for e in history if e["type"] == kind)


def test_the_hands_as_played_pass_from_every_reader():
    for moves, options in ((CHECKED_DOWN, {}), (CHECKED_DOWN, {"muck_losers": True}),
                           ([(2, "bet", 25), (3, "fold", None), (1, "fold", None)], {})):
        events, state = ended(moves, **options)
        for viewer in [OUTSIDER] + [Viewer("player", s, f"id{s}") for s in (1, 2, 3)]:
            assert rules_problem(history(events, state, viewer)) is None


@pytest.mark.parametrize("edit", ["fewer cards", "a card twice"])
def test_a_hand_shown_that_is_not_all_of_its_cards_each_once_fails(edit):
    events, state = ended(CHECKED_DOWN)
    edited = history(events, state)
    hand = data(edited, "ShowdownEvaluated")["hands"][0]
    hand["cards"] = hand["cards"][:3] if edit == "fewer cards" else [hand["cards"][0]] * 5
    assert "not the 5 cards it holds" in rules_problem(edited)


def test_a_hand_left_unshown_when_every_hand_shows_fails():
    events, state = ended(CHECKED_DOWN)
    edited = history(events, state)
    shown = data(edited, "ShowdownEvaluated")
    shown["hands"] = shown["hands"][1:]
    assert "where the rules show seats" in rules_problem(edited)


def test_a_hand_described_as_it_does_not_judge_fails():
    events, state = ended(CHECKED_DOWN)
    edited = history(events, state)
    data(edited, "ShowdownEvaluated")["hands"][0]["category"] = "straight_flush"
    assert "not described as they judge" in rules_problem(edited)


def test_a_shown_card_that_the_reader_holds_fails_as_in_two_places():
    events, state = ended(CHECKED_DOWN)
    edited = history(events, state, Viewer("player", 3, "id3"))
    mine = state.seat(3).cards[0]
    hand = next(h for h in data(edited, "ShowdownEvaluated")["hands"] if h["seat"] == 1)
    hand["cards"][0] = mine
    assert f"{mine} is in two places" in rules_problem(edited)


def test_an_uncalled_bet_or_an_uncontested_pot_paid_to_another_seat_fails():
    events, state = ended([(2, "bet", 25), (3, "fold", None), (1, "fold", None)])
    returned = history(events, state)
    data(returned, "BetReturned")["seat"] = 3
    assert "not the bet nobody called" in rules_problem(returned)
    paid = history(events, state)
    data(paid, "PotAwarded")["shares"] = {"3": 75}
    assert "an uncontested pot of 75" in rules_problem(paid)


BET_CALLED = [(2, "bet", 25), (3, "call", None), (1, "call", None), (2, "draw", None),
              (3, "draw", None), (1, "draw", None), (2, "check", None), (3, "check", None),
              (1, "check", None)]


def edited(kind, index=0, **fields):
    """The outsider's history of BET_CALLED with the ``index``-th event of ``kind`` changed."""
    events, state = ended(BET_CALLED)
    history = viewed(events, OUTSIDER, state)
    [e["data"] for e in history if e["type"] == kind][index].update(fields)
    return rules_problem(history)


def one_card_more(kind, field):
    """What the check finds in the outsider's history of BET_CALLED given one card more in
    the first ``kind``'s ``field``."""
    events, state = ended(BET_CALLED)
    history = viewed(events, OUTSIDER, state)
    data = next(e["data"] for e in history if e["type"] == kind)
    data[field] = data[field] + [{"commitment": "00" * 32}]
    return rules_problem(history)


def test_a_move_out_of_turn_or_not_as_the_rules_make_it_fails():
    assert "seat 3 moves (check) without a turn given to it" in edited("PlayerChecked", 2, seat=3)
    assert "PlayerCalled is not what the rules make of a call" in edited(
        "PlayerCalled", to=5, added=5)
    assert "BetPlaced is not a move the rules allow" in edited("BetPlaced", to=500, added=500)


def test_a_turn_given_to_another_seat_or_a_draw_of_more_than_thrown_fails():
    assert "the rules have seat 2 act first on street 1" in edited("ActionOn", 0, seats=[1])
    assert "after seat 2's bet the rules have seat 3 act" in edited("ActionOn", 1, seats=[1])
    assert "throws 0 cards and receives 1" in one_card_more("CardsDrawn", "received")


def test_an_ante_a_street_a_deal_or_a_round_that_the_rules_do_not_make_fails():
    assert "the antes and blinds posted after it are not" in edited("AntePosted", amount=5)
    assert "street 2 (bet) starts where the rules have street 1 (bet)" in edited(
        "StreetStarted", 1, street=2)
    assert "round 1 closes with a pot of 150" in edited("BettingRoundClosed", pot=15)
    assert "street 0 is not dealt as the rules deal it" in one_card_more("CardsDealt", "cards")


def test_a_street_dealt_otherwise_or_cards_dealt_where_none_are_fails():
    """Hold'em: a seat dealt its hole cards twice, and a board card dealt with the hole
    cards or on a betting round."""
    events, state = ended([(1, "fold", None), (2, "call", None), (3, "check", None)] + [
        (seat, "check", None) for _ in range(3) for seat in (2, 3)], game="texas-holdem")
    history = viewed(events, OUTSIDER, state)
    dealt = next(i for i, e in enumerate(history) if e["type"] == "CardsDealt")
    twice = history[:dealt + 1] + [history[dealt]] + history[dealt + 1:]
    assert "street 0 is not dealt as the rules deal it" in rules_problem(twice)
    board = {"type": "BoardDealt", "version": 0, "data": {"cards": ["2c"]}, "openings": {}}
    with_hole_cards = history[:dealt + 1] + [board] + history[dealt + 1:]
    assert "street 0 is not dealt as the rules deal it" in rules_problem(with_hole_cards)
    betting = next(i for i, e in enumerate(history) if e["type"] == "PlayerCalled")
    on_a_bet = history[:betting] + [board] + history[betting:]
    assert "BoardDealt deals cards where the rules deal none" in rules_problem(on_a_bet)


def test_a_bet_given_back_before_its_round_closes_fails():
    events, state = ended([(2, "bet", 25), (3, "fold", None), (1, "fold", None)])
    history = viewed(events, OUTSIDER, state)
    returned = next(e for e in history if e["type"] == "BetReturned")
    bet = next(i for i, e in enumerate(history) if e["type"] == "BetPlaced")
    early = history[:bet + 2] + [returned] + [e for e in history[bet + 2:] if e is not returned]
    assert "not the bet nobody called as the round closes" in rules_problem(early)


def test_a_turn_the_rules_do_not_give_a_round_closed_early_or_a_bet_kept_fails():
    events, state = ended(BET_CALLED)
    stray = viewed(events, OUTSIDER, state)
    at = next(i for i, e in enumerate(stray) if e["type"] == "PlayerCalled")
    stray.insert(at + 2, {"type": "ActionOn", "version": 0, "data": {"seats": [2]},
                          "openings": {}})  # after the turn the call gave
    assert "seats [2] are given a turn the rules do not give" in rules_problem(stray)
    early = viewed(events, OUTSIDER, state)
    bet = next(i for i, e in enumerate(early) if e["type"] == "BetPlaced")
    closed = next(e for e in early if e["type"] == "BettingRoundClosed")
    del early[bet + 1:early.index(closed)]  # the calls gone, and the turns after the bet
    early.insert(bet + 1, {"type": "ActionOn", "version": 0, "data": {"seats": [3]},
                           "openings": {}})
    assert "round 1 closes with seats [1, 3] to act" in rules_problem(early)
    events, state = ended([(2, "bet", 25), (3, "fold", None), (1, "fold", None)])
    kept = [e for e in viewed(events, OUTSIDER, state) if e["type"] != "BetReturned"]
    assert "a bet nobody called not given back" in rules_problem(kept)


def test_a_draw_of_a_card_the_seat_does_not_hold_fails_for_its_player():
    events, state = ended([(2, "check", None), (3, "check", None), (1, "check", None),
                           (2, "draw", None), (3, "draw", None), (1, "draw", None),
                           (2, "check", None), (3, "check", None), (1, "check", None)])
    history = viewed(events, Viewer("player", 2, "id2"), state)
    drawn = next(e for e in history if e["type"] == "CardsDrawn" and e["data"]["seat"] == 2)
    mine = state.seat(3).cards[0]  # not seat 2's
    drawn["data"].update(discarded=[mine], received=[mine])
    assert "seat 2 throws cards it does not hold" in rules_problem(history)


def test_a_forced_bet_a_start_or_a_table_event_out_of_place_fails():
    events, state = ended(BET_CALLED)
    history = viewed(events, OUTSIDER, state)
    ante, start = (next(e for e in history if e["type"] == kind)
                   for kind in ("AntePosted", "HandStarted"))
    closed = next(i for i, e in enumerate(history) if e["type"] == "BettingRoundClosed")
    assert "AntePosted where the rules post no forced bet" in rules_problem(
        history[:closed] + [ante] + history[closed:])
    assert "the hand starts again" in rules_problem(history[:closed] + [start] + history[closed:])
    settled = {"type": "HandSettled", "version": 0, "openings": {},
               "data": {"hand_no": 1, "stacks": {"1": 0}}}
    assert "HandSettled is not an event of a hand" in rules_problem(
        history[:closed] + [settled] + history[closed:])
    start["data"]["source"] = {"format": "phh", "mucked": [1]}
    assert "dealt from seeds and imported both" in rules_problem(history)


def test_a_move_with_no_turn_given_fails():
    """The check that closed the last round, then a fold by the same seat: the winner's pot
    would go to another."""
    events, state = ended(CHECKED_DOWN)
    history = viewed(events, OUTSIDER, state)
    last = max(i for i, e in enumerate(history) if e["type"] == "PlayerChecked")
    fold = {"type": "PlayerFolded", "version": 0, "openings": {},
            "data": {"seat": history[last]["data"]["seat"]}}
    assert "moves (fold) without a turn given to it" in rules_problem(
        history[:last + 1] + [fold] + history[last + 1:])


def test_a_round_close_left_out_or_an_event_given_twice_fails():
    events, state = ended(BET_CALLED)
    history = viewed(events, OUTSIDER, state)
    closed = next(i for i, e in enumerate(history) if e["type"] == "BettingRoundClosed")
    assert "street 2 starts before round 1 has closed" in rules_problem(
        history[:closed] + history[closed + 1:])
    shown = next(i for i, e in enumerate(history) if e["type"] == "ShowdownEvaluated")
    for at, found in ((closed, "round 1 closes again"), (shown, "or a second one"),
                      (shown - 1, "a street starts after the showdown")):
        assert found in rules_problem(history[:at + 1] + [history[at]] + history[at + 1:])


def test_an_uncontested_pot_paid_before_its_round_closed_fails():
    events, state = ended([(2, "fold", None), (3, "fold", None)])
    history = [e for e in viewed(events, OUTSIDER, state) if e["type"] != "BettingRoundClosed"]
    assert "the pot is paid before round 1 has closed" in rules_problem(history)


def _holdem_seat_1_folds():
    """Hold'em, three players: seat 1 folds first, the others check and call to the end."""
    state, events = start([1000] * 3, game="texas-holdem", button=1)
    folded = False
    while state.status != "ended":
        if state.status == "showdown_pending":
            more = engine.decide(state, Showdown())
            state, events = reduce(engine.evolve, more, state), events + more
            continue
        legal = {a["type"] for a in engine.legal_actions(state, state.to_act)}
        move = ("fold" if state.to_act == 1 and not folded else
                "check" if "check" in legal else "call")
        folded = folded or move == "fold"
        state, more = act(state, state.to_act, move)
        events += more
    return events, state


def test_a_card_dealt_again_before_a_reshuffle_or_no_card_at_all_fails_for_whoever_reads_it():
    """The folded player's own hole card dealt again on the flop (hold'em never
    reshuffles), as that player reads the hand; and a board card that is no card."""
    events, state = _holdem_seat_1_folds()
    folder = Viewer("player", 1, "id1")
    mine = state.seat(1).cards[0]
    again = history(events, state, folder)
    data(again, "BoardDealt")["cards"][0] = mine
    assert f"BoardDealt deals {mine}, which was dealt already" in rules_problem(again)
    assert rules_problem(history(events, state)) is None  # the outsider cannot tell
    nothing = history(events, state, folder)
    data(nothing, "BoardDealt")["cards"][0] = "Khx"
    assert "deals 'Khx', which is no card of the game's deck" in rules_problem(nothing)


def test_a_card_shown_that_the_reader_threw_away_fails_as_in_two_places():
    """Seat 3 throws away a card at the draw (no reshuffle): seat 1 showing it is caught
    by seat 3."""
    moves = [(2, "check", None), (3, "check", None), (1, "check", None), (2, "draw", None),
             (3, "draw", None), (1, "draw", None), (2, "check", None), (3, "check", None),
             (1, "check", None)]
    state, events = start([1000] * 3, button=1)
    for seat, move, _ in moves:
        cards = state.seat(3).cards[:1] if (seat, move) == (3, "draw") else ()
        state, more = act(state, seat, move, cards=cards)
        events += more
    more = engine.decide(state, Showdown())
    state, events = reduce(engine.evolve, more, state), events + more
    thrown = next(e for e in events if type(e).__name__ == "CardsDrawn" and e.seat == 3)
    edited = history(events, state, Viewer("player", 3, "id3"))
    hand = next(h for h in data(edited, "ShowdownEvaluated")["hands"] if h["seat"] == 1)
    hand["cards"][0] = thrown.discarded[0]
    assert f"{thrown.discarded[0]} is in two places" in rules_problem(edited)
