"""Pots and splits, and the table decider: seats, button, chips between hands."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domain import table
from domain.commands import AddChips, CreateTable, LeaveTable, OpenHand, SeatPlayer, SettleHand
from domain.errors import DomainError
from domain.pots import Pot, build_pots, split


def test_one_pot_when_nobody_is_all_in_and_folded_chips_stay_in_it():
    assert build_pots({1: 125, 2: 125, 3: 50}, {1, 2}) == [Pot(300, (1, 2))]


def test_side_pots_at_each_all_in_level():
    committed = {1: 300, 2: 300, 3: 100, 4: 200, 5: 50}
    assert build_pots(committed, {1, 2, 3, 4}) == [
        Pot(450, (1, 2, 3, 4)), Pot(300, (1, 2, 4)), Pot(200, (1, 2))]


def test_split_gives_every_odd_chip_to_the_first_from_the_left():
    """003: "any odd amount going to the player immediately to the left of the dealer"."""
    assert split(75, [3, 1], 25) == {3: 50, 1: 25}
    assert split(125, [2, 3, 1], 25) == {2: 75, 3: 25, 1: 25}
    assert split(14, [1, 2, 3], 1) == {1: 6, 2: 4, 3: 4}
    assert split(100, [2, 3], 25) == {2: 50, 3: 50}
    assert split(13, [1, 2], 5) == {1: 8, 2: 5}  # a loose remainder goes to the first


def test_tables_created_before_split_odd_chips_one_at_a_time_from_the_left():
    assert split(125, [2, 3, 1], 25, odd_to_first=False) == {2: 50, 3: 50, 1: 25}
    assert split(14, [1, 2, 3], 1, odd_to_first=False) == {1: 5, 2: 5, 3: 4}


def seated(*stacks, **options):
    state = table.initial_state()
    commands = [CreateTable("five-card-draw", options, 6, "a", "u", "c0")]
    commands += [SeatPlayer(f"p{i}", f"n{i}", stack, f"t{i}") for i, stack in enumerate(stacks)]
    for command in commands:
        for event in table.decide(state, command):
            state = table.evolve(state, event)
    return state


def run(state, command):
    for event in table.decide(state, command):
        state = table.evolve(state, event)
    return state


def test_the_button_moves_left_and_skips_players_who_cannot_cover_the_ante():
    state = seated(500, 10, 500, 500)
    buttons = []
    for _ in range(4):
        state = run(state, OpenHand("c"))
        buttons.append(state.button)
        assert 2 not in state.dealt_in
        state = run(state, SettleHand(state.hand_no, {}))
    assert buttons == [1, 3, 4, 1]


def test_chips_and_leaving_wait_for_the_hand_to_end():
    state = run(seated(500, 500), OpenHand("c"))
    for command in (AddChips(1, 100), LeaveTable(2), OpenHand("c")):
        with pytest.raises(DomainError) as error:
            table.decide(state, command)
        assert error.value.code == "hand_in_progress"
    state = run(state, SettleHand(state.hand_no, {"1": 450, "2": 550}))
    state = run(run(state, AddChips(1, 100)), LeaveTable(2))
    assert [(s.seat, s.stack) for s in state.seats] == [(1, 550)]


def test_chips_added_between_hands_keep_a_stack_within_the_most_one_amount_names():
    state = seated(500, 500)
    with pytest.raises(DomainError, match="may add up to 999999500") as error:
        table.decide(state, AddChips(1, 10**9 - 499))
    assert error.value.code == "amount_out_of_range"
    assert run(state, AddChips(1, 10**9 - 500)).seat(1).stack == 10**9


def test_chips_coming_to_a_table_past_the_most_it_holds_are_refused():
    """2**53 - 1 in all: the largest whole number JSON readers keep exactly."""
    state = seated(2**53 - 1 - 150, 100)  # won past the most a buy-in names
    for command in (SeatPlayer("x", "x", 51, "x"), AddChips(2, 51)):
        with pytest.raises(DomainError, match="50 more may come") as error:
            table.decide(state, command)
        assert error.value.code == "amount_out_of_range"
    assert run(run(state, AddChips(2, 25)), SeatPlayer("x", "x", 25, "x")).seat(3).stack == 25


def test_a_full_table_and_too_few_players_are_refused():
    state = seated(*[100] * 6)
    with pytest.raises(DomainError, match="all 6 seats") as error:
        table.decide(state, SeatPlayer("x", "x", 100, "x"))
    assert error.value.code == "table_full"
    with pytest.raises(DomainError) as error:
        table.decide(seated(100), OpenHand("c"))
    assert error.value.code == "not_enough_players"


CASINO = {"rules": "casino"}  # five card draw with blinds (small 25, big 50)


def opened(state):
    (event,) = table.decide(state, OpenHand("c"))
    return event


def played(state, stacks: dict):
    """``state`` after a hand that ends with ``stacks`` (seat -> stack)."""
    state = run(state, OpenHand("c"))
    return run(state, SettleHand(state.hand_no, {str(k): v for k, v in stacks.items()}))


@pytest.mark.parametrize("busted, button, blinds", [
    (3, 2, (3, 4)),  # the big blind: a dead small blind, seat 4 posts the big one
    (2, 1, (3, 4)),  # the small blind: seat 4 still posts the big blind next
    (1, 2, (3, 4)),  # the button
])
def test_under_the_dead_button_the_big_blind_moves_one_player_whoever_busts(
        busted, button, blinds):
    state = seated(500, 500, 500, 500, **CASINO)
    assert (opened(state).button, opened(state).blinds) == (1, (2, 3))
    state = played(state, {n: 0 if n == busted else 500 for n in range(1, 5)})
    assert (opened(state).button, opened(state).blinds) == (button, blinds)


def test_going_heads_up_the_big_blind_moves_on_and_the_button_posts_the_small_one():
    state = played(seated(500, 500, 500, **CASINO), {1: 0, 2: 750, 3: 750})
    assert (opened(state).button, opened(state).blinds) == (3, (3, 2))
    state = played(state, {2: 750, 3: 750})
    assert (opened(state).button, opened(state).blinds) == (2, (2, 3))


def test_without_the_dead_button_the_blinds_follow_the_button():
    """As at tables created before the option: going heads-up when the button busts, the
    big blind of the hand before posts it again."""
    state = seated(500, 500, 500, dead_button=False, **CASINO)
    assert opened(state).blinds == ()
    state = played(state, {1: 0, 2: 750, 3: 750})
    assert (opened(state).button, opened(state).blinds) == (2, ())


def test_a_game_without_blinds_places_none():
    state = seated(500, 500, 500)  # house rules: antes
    assert "dead_button" in state.options and opened(state).blinds == ()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.integers(0, 2), min_size=6, max_size=6), min_size=2, max_size=12))
def test_the_big_blind_moves_to_the_next_player_dealt_in_and_never_posts_twice(changes):
    """Between hands each of 6 seats stays (1), busts or leaves (0) or, empty, is taken (2);
    whoever is dealt in, the big blind goes to the first of them on the last one's left and
    the small blind to the last one's seat, posted only if it is dealt in."""
    state, last = seated(500, 500, 500, **CASINO), None
    for change in changes:
        for seat, what in enumerate(change, 1):
            if what == 0 and state.seat(seat) and len(state.seats) > 2:
                state = run(state, LeaveTable(seat))
            elif what == 2 and not state.seat(seat):
                state = run(state, SeatPlayer(f"p{seat}", "n", 500, "t"))
        hand = opened(state)
        small, big = hand.blinds
        assert big in hand.dealt_in and hand.button in hand.dealt_in
        if last is not None:
            assert big != last and big == _first_after(last, hand.dealt_in)
            heads_up = len(hand.dealt_in) == 2
            assert small == (hand.button if heads_up else last)
        state, last = played(state, {n: 500 for n in hand.dealt_in}), big


def _first_after(seat, numbers):
    return min((n for n in numbers if n > seat), default=min(numbers))
