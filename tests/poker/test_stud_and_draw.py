"""Stud's openers and bring-in, the community river, the draw's rule sets and running out of
cards, with scripted decks."""

import pytest

from domain import fairness
from domain.commands import StartHand
from domain.errors import DomainError
from domain.events import BoardDealt, CardsDealt, StubReshuffled
from domain.frozen import replace
from domain.poker import engine
from tests.poker.play import act, options, stacked, start


def legal(state, seat) -> dict:
    return {a["type"]: a for a in engine.legal_actions(state, seat)}


def stud(stacks, hands, button=3, game="seven-card-stud", **options):
    order = [s for s in range(1, len(stacks) + 1) if s > button] + [
        s for s in range(1, len(stacks) + 1) if s <= button]
    return start(stacks, game=game, button=button, deck=stacked(game, order, hands), **options)


SEVEN = {1: "Ah Kh 2s 2h 9c 8c 7d", 2: "Ad Kd 2c Qs Jd 4c 3d", 3: "As Ks Kc 5h 6h Th 4s"}


def test_the_lowest_up_card_brings_in_ties_broken_by_suit_clubs_lowest():
    state, _ = stud([1000] * 3, SEVEN)  # up: 2s, 2c, Kc
    assert state.to_act == 2
    assert legal(state, 2) == {"bring_in": {"type": "bring_in", "amount": 10},
                               "complete": {"type": "complete", "amount": 20}}
    state, _ = act(state, 2, "bring_in")
    assert set(legal(state, 3)) == {"call", "complete", "fold"}
    assert legal(state, 3)["call"]["amount"] == 10
    state, _ = act(state, 3, "complete")
    assert legal(state, 1)["raise"]["min"] == 40  # raises follow the completion
    state, _ = act(state, 1, "call")
    state, _ = act(state, 2, "call")
    assert state.betting_round == 2


def test_a_bring_in_posted_short_is_called_in_full():
    """Seat 2's 6 chips after the ante bring in all in; the others call the whole bring-in
    of 10 (``short_forced_bet: full``), or 6 at a table that plays it as posted."""
    for rule, call in (("full", 10), ("posted", 6)):
        state, _ = stud([1000, 11, 1000], SEVEN, short_forced_bet=rule)
        assert legal(state, 2) == {"bring_in": {"type": "bring_in", "amount": 6}}
        state, events = act(state, 2, "bring_in")
        assert events[0].call_to == (10 if rule == "full" else None)
        assert legal(state, 3)["call"]["amount"] == call and "complete" in legal(state, 3)
        state, _ = act(state, 3, "call")
        state, _ = act(state, 1, "call")
        assert state.betting_round == 2 and [s.committed for s in state.seats] == [
            5 + call, 11, 5 + call]


def test_nobody_completes_the_bring_in_when_every_other_player_is_all_in():
    """Seat 2 brings in all in; seat 1, heads-up, may call or fold, as nobody raises with no
    one left to call. A hand played before ``complete_needs_a_caller`` (its options do not
    name it) offered the completion, and its audit still finds it legal."""
    hands = {1: SEVEN[1], 2: SEVEN[2]}
    for before in (False, True):
        state, _ = stud([1000, 11], hands, button=2)
        if before:
            state = replace(state, options={name: value for name, value in
                                            state.options.items()
                                            if name != "complete_needs_a_caller"})
        state, _ = act(state, 2, "bring_in")
        assert ("complete" in legal(state, 1)) is before
        if before:
            continue
        with pytest.raises(DomainError) as refused:
            act(state, 1, "complete")
        assert refused.value.code == "illegal_action"
    state, _ = stud([1000, 11, 1000], SEVEN)  # a third player can still call: offered
    state, _ = act(state, 2, "bring_in")
    assert "complete" in legal(state, 3)


def test_the_best_hand_showing_opens_later_rounds_and_an_open_pair_allows_the_upper_limit():
    state, _ = stud([1000] * 3, SEVEN)
    state, _ = act(state, 2, "bring_in")
    state, _ = act(state, 3, "call")
    state, _ = act(state, 1, "call")
    # fourth street: seat 1 shows 2s 2h, a pair, above K-5 and 2-Q
    assert state.to_act == 1
    assert legal(state, 1)["bet"] == {"type": "bet", "min": 20, "max": 40, "step": 20}
    state, _ = act(state, 1, "bet", 40)
    assert legal(state, 2)["raise"]["min"] == 80  # raises at the size opened


def test_a_full_table_shares_a_community_river():
    state, _ = start([1000] * 8, game="seven-card-stud", button=8)
    while state.status == "betting":
        seat = state.to_act
        actions = legal(state, seat)
        kind = next(k for k in ("bring_in", "check", "call") if k in actions)
        state, events = act(state, seat, kind)
    assert state.status == "showdown_pending"
    assert len(state.board) == 1 and all(len(s.cards) == 6 for s in state.seats)


def test_house_stud_has_no_bring_in_and_the_best_hand_showing_opens_third_street():
    state, _ = stud([1000] * 3, SEVEN, rules="house")  # up: 2s, 2c, Kc: the king opens
    assert state.to_act == 3 and "check" in legal(state, 3)
    assert legal(state, 3)["bet"] == {"type": "bet", "min": 25, "max": 25, "step": 25}


def test_club_stud_lowest_up_card_opens_and_may_check_ties_go_left_of_the_dealer():
    state, _ = stud([1000] * 3, SEVEN, rules="club")  # 2s (seat 1) and 2c (seat 2) tie
    assert state.to_act == 1 and "check" in legal(state, 1)


def test_five_card_stud_without_bring_in_the_highest_up_card_opens_and_may_check():
    hands = {1: "2h 9c 5c 6c 7c", 2: "3d Ac 5d 6d 7d", 3: "4s As 5s 6s 7s"}
    state, _ = stud([1000] * 3, hands, game="five-card-stud", bring_in=0)
    assert state.to_act == 2  # Ac and As tie: the first clockwise from the dealer
    assert "check" in legal(state, 2)
    state, _ = stud([1000] * 3, hands, game="five-card-stud")  # with a bring-in: 9c
    assert state.to_act == 1 and "bring_in" in legal(state, 1)


def test_when_the_player_the_cards_name_is_all_in_the_next_one_who_can_act_opens():
    state, _ = stud([5, 1000, 1000], SEVEN, button=3)  # seat 1 is all in on its ante
    assert state.seat(1).status == "all_in"
    state, _ = stud([1000, 5, 1000], SEVEN, button=3)  # seat 2 (2c) would bring in
    assert state.to_act == 3 and "bring_in" in legal(state, 3)


def test_casino_draw_has_blinds_opens_left_of_the_big_blind_and_draws_up_to_five():
    state, _ = start([1000] * 4, game="five-card-draw", button=4, rules="casino")
    assert (state.seat(1).bet, state.seat(2).bet) == (25, 50) and state.to_act == 3
    for seat in (3, 4, 1):
        state, _ = act(state, seat, "call")
    state, _ = act(state, 2, "check")
    assert state.status == "drawing" and state.to_act == 1
    state, _ = act(state, 1, "draw", cards=state.seat(1).cards)  # all five
    for seat in (2, 3, 4):
        state, _ = act(state, seat, "draw", cards=())
    assert state.to_act == 1  # the second round opens left of the dealer


def test_the_second_round_may_open_with_the_first_rounds_opener():
    state, _ = start([1000] * 4, game="five-card-draw", button=4,
                     second_round_opener="first_round_opener")
    state, _ = act(state, 1, "check")
    state, _ = act(state, 2, "bet", 25)
    for seat in (3, 4, 1):
        state, _ = act(state, seat, "call")
    for seat in (1, 2, 3, 4):
        state, _ = act(state, seat, "draw", cards=())
    assert state.to_act == 2


def test_when_the_stub_runs_short_the_discards_are_reshuffled_and_the_draw_goes_on():
    state, _ = start([1000] * 6, game="five-card-draw", button=6, rules="club")
    for seat in range(1, 7):
        state, _ = act(state, seat, "check")
    reshuffled = []
    for seat in range(1, 7):
        state, events = act(state, seat, "draw", cards=state.seat(seat).cards)
        reshuffled += [e for e in events if isinstance(e, StubReshuffled)]
    assert len(reshuffled) == 1  # 30 dealt, 22 in the stub; the fifth draw needs more
    held = [c for s in state.seats for c in s.cards]
    assert len(held) == 30 and len(set(held)) == 30


def river_after_a_fold_on_sixth_street(stub_first: bool):
    """Eight players of stud to the river, the second to act on sixth street folding to a
    bet: the stub holds 4 cards for 7 rivers. (The hand's state before the river, the
    river's events, and the events dealt up to the river's, each as a history holds it.)"""
    state, dealt = start([1000] * 8, game="seven-card-stud", button=8)
    deck = dealt[0].deck
    if not stub_first:  # a hand played before the option: its options lack it
        state = replace(state, options={name: value for name, value in state.options.items()
                                        if name != "stub_first"})
    while state.betting_round < 5:
        kinds = legal(state, state.to_act)
        sixth, before = state.betting_round == 4, state
        if sixth and "bet" in kinds:
            state, events = act(state, state.to_act, "bet", kinds["bet"]["min"])
        elif sixth and state.seat(state.to_act).bet == 0 and all(
                s.in_hand for s in state.seats):
            state, events = act(state, state.to_act, "fold")
        else:
            kind = next(k for k in ("check", "call", "bring_in") if k in kinds)
            state, events = act(state, state.to_act, kind)
        dealt += events
    assert fairness.dealt_in_order(deck, history(dealt)) == 8 * 6 + 7
    return before, events, dealt


def history(events) -> list[dict]:
    return [{"type": e.type, "data": e.to_dict(), "version": n}
            for n, e in enumerate(events, start=1)]


def test_a_short_stub_is_dealt_first_then_the_discards_are_reshuffled():
    """001: the deck is used until a player is reached who cannot get the cards they need;
    only then are the discards reshuffled with what is left of it (``stub_first``)."""
    before, events, dealt = river_after_a_fold_on_sixth_street(stub_first=True)
    assert len(before.deck) == 4 and len(before.mucked) == 6
    rivers = [e for e in events if isinstance(e, CardsDealt)]
    order = [s.seat for s in before.from_left_of_button() if s.in_hand]
    assert [e.seat for e in rivers] == order
    assert [e.cards[0] for e in rivers[:4]] == list(before.deck)
    reshuffled = next(e for e in events if isinstance(e, StubReshuffled))
    assert events.index(reshuffled) + 1 == events.index(rivers[4])
    assert sorted(reshuffled.cards) == sorted(before.mucked)
    assert [e.cards[0] for e in rivers[4:]] == list(reshuffled.cards[:3])
    swapped = history(dealt)  # two rivers exchanged: each still dealt once, out of order
    first, second = (e["data"] for e in swapped[-len(events):] if e["type"] == "CardsDealt"
                     and e["data"]["cards"] in ([rivers[0].cards[0]], [rivers[1].cards[0]]))
    first["cards"], second["cards"] = second["cards"], first["cards"]
    with pytest.raises(fairness.Problem, match="does not deal the cards"):
        fairness.dealt_in_order(dealt[0].deck, swapped)


def test_a_hand_played_before_stub_first_reshuffled_before_the_river():
    before, events, _ = river_after_a_fold_on_sixth_street(stub_first=False)
    reshuffled = next(e for e in events if isinstance(e, StubReshuffled))
    rivers = [e for e in events if isinstance(e, CardsDealt)]
    assert events.index(reshuffled) < events.index(rivers[0])
    assert sorted(reshuffled.cards) == sorted(before.deck + before.mucked)
    assert [e.cards[0] for e in rivers] == list(reshuffled.cards[:7])


def test_running_out_of_cards_deals_every_card_once():
    state, events = start([1000] * 8, game="seven-card-stud", button=8)
    dealt = [c for e in events if isinstance(e, CardsDealt) for c in e.cards]
    assert len(dealt) == len(set(dealt)) == 24
    assert not any(isinstance(e, BoardDealt) for e in events)


def draw_that_reshuffles():
    """Casino draw, six players: five discards of 5, 5, 5, 5 and 2 use up the stub, and the
    sixth player's draw needs the discards reshuffled. The state before that draw, and its
    events."""
    state, events = start([1000] * 6, button=6, rules="casino")
    while state.status == "betting":
        state, more = act(state, state.to_act, "call" if "call" in legal(state, state.to_act)
                          else "check")
        events += more
    for count in (5, 5, 5, 5, 2):
        seat = state.to_act
        state, more = act(state, seat, "draw", cards=state.seat(seat).cards[:count])
        events += more
    assert not state.deck and len(state.mucked) == 22
    return state, events


def test_a_reshuffle_is_foretold_by_nobody_who_knows_the_cards_mucked():
    """The colluders who mucked every card in the stub cannot work out the cards the last
    player draws from it: the reshuffle mixes in the hand's hidden ``reshuffle_key``."""
    before, events = draw_that_reshuffles()
    key = events[0].reshuffle_key
    assert key == fairness.reshuffle_key("ab" * 32)
    _, drawn = act(before, before.to_act, "draw", cards=before.seat(before.to_act).cards)
    reshuffled = next(e for e in drawn if isinstance(e, StubReshuffled))
    assert list(reshuffled.cards) == fairness.reshuffled_stub([], before.mucked, key)
    assert list(reshuffled.cards) != fairness.reshuffled_stub([], before.mucked)
    everything = history(events + drawn)
    assert fairness.dealt_in_order(events[0].deck, everything) == 30 + 22 + 5
    everything[0]["data"]["reshuffle_key"] = fairness.reshuffle_key("cd" * 32)
    with pytest.raises(fairness.Problem, match="reshuffled stub is not the one"):
        fairness.dealt_in_order(events[0].deck, everything)


def test_a_hand_played_before_the_reshuffle_option_reshuffled_by_the_cards_alone():
    """A hand whose options lack ``reshuffle`` starts with no key (its audit decides its
    start again) and reshuffles by the cards alone, as it was played."""
    old = {k: v for k, v in options("five-card-draw", rules="casino").items()
           if k != "reshuffle"}
    seats = tuple({"seat": n, "name": f"p{n}", "stack": 1000} for n in range(1, 7))
    started = engine.decide(engine.initial_state({"game": "five-card-draw", "options": old}),
                            StartHand(hand_no=1, button=6, seats=seats, server_seed="ab" * 32,
                                      client_seeds={}))
    assert started[0].reshuffle_key == ""
    before, _ = draw_that_reshuffles()
    before = replace(before, reshuffle_key="")
    _, drawn = act(before, before.to_act, "draw", cards=before.seat(before.to_act).cards)
    reshuffled = next(e for e in drawn if isinstance(e, StubReshuffled))
    assert list(reshuffled.cards) == fairness.reshuffled_stub([], before.mucked)
