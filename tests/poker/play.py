"""Drive the poker engine directly: start hands and play them with a seeded random strategy."""

from __future__ import annotations

import random
from functools import reduce
from unittest import mock

from domain.commands import Act, Showdown, StartHand
from domain.events import (Event, HandEnded, HandOpened, HandSettled, HandStarted, PlayerSeated,
                           TableCreated)
from domain import fairness
from domain.cards import STANDARD_DECK, codes
from domain.options import resolve_options
from domain.poker import engine
from domain.poker.replayed import rules_problem
from domain.poker.spec import Board, Deal
from domain.poker.variants import VARIANTS
from domain.views import Viewer, hidden_values, visible_openings


def options(game: str = "five-card-draw", **given) -> dict:
    return resolve_options(VARIANTS[game].options, given)


def start(stacks: list[int], *, game: str = "five-card-draw", button: int = 1,
          seed: str = "ab" * 32, client_seeds: dict | None = None, deck: list[str] | None = None,
          **given):
    """A started hand: seats numbered 1.. with the given stacks; ``seed`` is the server's.
    ``deck`` (see ``stacked``) replaces the deck the seeds would give, to script the cards."""
    chosen = options(game, **given)
    state = engine.initial_state({"game": game, "options": chosen})
    seats = tuple({"seat": i, "name": f"p{i}", "stack": s, "player_id": f"id{i}"}
                  for i, s in enumerate(stacks, 1))
    command = StartHand(hand_no=1, button=button, seats=seats, server_seed=seed,
                        client_seeds=client_seeds or {},
                        blinds=_first_blinds(button, len(stacks), chosen))
    if deck is None:
        events = engine.decide(state, command)
    else:
        with mock.patch.object(fairness, "deck_order", lambda *_: list(deck)):
            events = engine.decide(state, command)
    return reduce(engine.evolve, events, state), events


def stacked(game: str, order: list[int], hands: dict[int, str], board: str = "",
            then: str = "") -> list[str]:
    """A deck that deals each seat of ``order`` (clockwise from the dealer's left) the cards
    of ``hands`` street by street, in the order the seat receives them, and the ``board``;
    ``then`` follows (draws, reshuffles). Assumes nobody folds before the last deal."""
    given = {seat: iter(cards.split()) for seat, cards in hands.items()}
    community = iter(board.split())
    deck = []
    for street in VARIANTS[game].streets:
        if isinstance(street, Deal):
            for count in (street.down, street.up):
                for _ in range(count):
                    deck += [next(given[seat]) for seat in order]
        elif isinstance(street, Board):
            deck += [next(community) for _ in range(street.cards)]
    deck += then.split()
    return deck + [c for c in codes(STANDARD_DECK) if c not in deck]


def _first_blinds(button: int, players: int, chosen: dict) -> tuple:
    """The blinds' seats ``(small, big)`` that a table records for its first hand under the
    dead button (seats 1..``players``): they follow the button, which posts the small one
    heads-up; () where none are posted or the option is off."""
    if not (chosen.get("dead_button") and (chosen.get("big_blind") or chosen.get("small_blind"))):
        return ()
    after = [1 + (button + i) % players for i in range(2)]  # the two seats on its left
    return (button, after[0]) if players == 2 else tuple(after)


def table_events(started: HandStarted, ended: HandEnded | None) -> list[Event]:
    """The table's events around one hand: what it published before, and its settlement.
    A button on another seat than the lowest comes after a hand 0 with the button on its
    right, as a table moves it (the audit re-decides it)."""
    events = [TableCreated(game=started.game, options=started.options, max_seats=6,
                           admin_token_hash="", auditor_token_hash="",
                           next_seed_commitment=started.seed_commitment)]
    events += [PlayerSeated(seat=s["seat"], player_id=s["player_id"], name=s["name"],
                            buy_in=s["stack"], token_hash="",
                            client_seed=started.client_seeds[str(s["seat"])])
               for s in started.seats]
    dealt_in = tuple(s["seat"] for s in started.seats)
    if started.button != dealt_in[0]:
        right = max((n for n in dealt_in if n < started.button), default=dealt_in[-1])
        events += [HandOpened(hand_no=0, button=right, dealt_in=dealt_in, game=started.game,
                              next_seed_commitment=started.seed_commitment),
                   HandSettled(hand_no=0, stacks={str(s["seat"]): s["stack"]
                                                  for s in started.seats})]
    events.append(HandOpened(hand_no=started.hand_no, button=started.button,
                             next_seed_commitment="", game=started.game, dealt_in=dealt_in,
                             blinds=tuple(started.blinds)))
    if ended is not None:
        events.append(HandSettled(hand_no=started.hand_no, stacks=ended.stacks))
    return events


def act(state, seat, type_, amount=None, cards=()):
    """Apply one move; return the new state and its events."""
    events = engine.decide(state, Act(seat=seat, type=type_, amount=amount, cards=tuple(cards)))
    return reduce(engine.evolve, events, state), events


def random_move(state, rng: random.Random) -> Act:
    seat = state.to_act
    legal = engine.legal_actions(state, seat)
    choice = rng.choice(legal)
    if choice["type"] == "draw":
        cards = rng.sample(state.seat(seat).cards, rng.randint(0, choice["max_cards"]))
        return Act(seat=seat, type="draw", cards=tuple(cards))
    if choice["type"] in ("bet", "raise"):
        amount = rng.randrange(choice["min"], choice["max"] + 1, choice["step"])
        return Act(seat=seat, type=choice["type"], amount=amount)
    if choice["type"] == "add_chips":
        return Act(seat=seat, type="add_chips", amount=choice["min"] + rng.randrange(100))
    return Act(seat=seat, type=choice["type"])


def play_out(state, rng: random.Random, on_step=None):
    """Play to the end with random legal moves (settling the showdown); all events."""
    events = []
    while state.status != "ended":
        command = Showdown() if state.status == "showdown_pending" else random_move(state, rng)
        new = engine.decide(state, command)
        state = reduce(engine.evolve, new, state)
        events += new
        if on_step:
            on_step(state, new)
    return state, events


def calling_hand(game: str, players: int, number: int, options: dict) -> list:
    """A hand where most players call to the end and a few fold, so that a full table runs
    its stub short and reshuffles what was mucked (a draw discarding as many as it may)."""
    rng = random.Random(f"reshuffled/{game}/{number}")
    state, events = start([rng.choice([300, 1000]) for _ in range(players)], game=game,
                          button=1 + number % players, seed=rng.randbytes(32).hex(),
                          **options)
    while state.status != "ended":
        command = Showdown() if state.status == "showdown_pending" else None
        if command is None:
            seat = state.to_act
            legal = {move["type"]: move for move in engine.legal_actions(state, seat)}
            if "draw" in legal:
                cards = state.seat(seat).cards[:legal["draw"]["max_cards"]]
                command = Act(seat=seat, type="draw", cards=tuple(cards))
            else:
                move = ("fold" if "fold" in legal and rng.random() < 0.08 else
                        next(m for m in ("check", "call", "bring_in", "fold") if m in legal))
                command = Act(seat=seat, type=move)
        new = engine.decide(state, command)
        state, events = reduce(engine.evolve, new, state), events + new
    return events


def viewed(events: list[Event], viewer: Viewer, state) -> list[dict]:
    """The events as a history gives them to ``viewer`` when the hand is ``state``: hidden
    values sealed (with a fixed salt), and opened where the viewer may see them."""
    return [{"type": event.type, "version": version, **projected(event, viewer, state)}
            for version, event in enumerate(events, start=1)]


def projected(event: Event, viewer: Viewer, state) -> dict:
    data, openings = fairness.seal(event.to_dict(), hidden_values(state.game, event),
                                   lambda: "00" * 16)
    return {"data": data,
            "openings": {p: openings[p] for p in visible_openings(event, viewer, state)}}


def rules_problems(events: list[Event]) -> dict[Viewer, str]:
    """What the verifier's rules check finds wrong with a finished hand, by viewer: from
    each player's history and from an outsider's (empty: nothing)."""
    started = events[0]
    state = reduce(engine.evolve, events,
                   engine.initial_state({"game": started.game, "options": started.options}))
    viewers = [Viewer("player", s.seat, s.player_id) for s in state.seats] + [Viewer("admin")]
    found = {viewer: rules_problem(viewed(events, viewer, state)) for viewer in viewers}
    return {viewer: problem for viewer, problem in found.items() if problem}
