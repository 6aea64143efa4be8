"""A poker variant as a game of the registry: the engine runs its spec."""

from __future__ import annotations

from domain.commands import Act, Showdown, StartHand
from domain.events import (BetCompleted, BetPlaced, BringInPosted, CardsDrawn, ChipsBought, Event,
                           HandStarted, PlayerCalled, PlayerChecked, PlayerFolded, PlayerRaised,
                           ShowdownEvaluated)
from domain.errors import DomainError
from domain.options import resolve_options
from domain.poker import engine
from domain.poker import view as poker_view
from domain.poker.spec import Variant
from domain.poker.structures import contradiction
from domain.poker.state import HandState

_MOVES = {PlayerChecked: "check", PlayerCalled: "call", BetPlaced: "bet", PlayerRaised: "raise",
          PlayerFolded: "fold", CardsDrawn: "draw", BringInPosted: "bring_in",
          BetCompleted: "complete", ChipsBought: "add_chips"}


class PokerGame:
    def __init__(self, variant: Variant):
        self.variant = variant
        self.id, self.name = variant.id, variant.name
        self.min_players, self.max_players = variant.min_players, variant.max_players
        self.options = variant.options

    def catalog_entry(self) -> dict:
        return self.variant.catalog_entry()

    def max_seats(self, options: dict) -> int:
        """The most players a table of these options seats (its rule book's number)."""
        return dict(self.variant.max_players_by_rules).get(options.get("rules"),
                                                           self.max_players)

    def resolve_options(self, given: dict) -> dict:
        options = resolve_options(self.options, given)
        problem = contradiction(options)
        if problem:
            raise DomainError("invalid_option", f"the options contradict each other: {problem}")
        return options

    def initial_state(self, options: dict) -> HandState:
        return engine.initial_state({"game": self.id, "options": options})

    decide = staticmethod(engine.decide)
    evolve = staticmethod(engine.evolve)
    legal_actions = staticmethod(engine.legal_actions)
    view = staticmethod(poker_view.view_hand)
    hidden_values = staticmethod(poker_view.hidden_values)
    visible_openings = staticmethod(poker_view.visible_openings)

    # Rules a hand whose options lack the option may have been played by: the option came
    # after the rule it defaults to, which replaced this one (``showdown``).
    earlier_rules = ({"last_bettor_shows": False},)

    @staticmethod
    def job_owed(state: HandState) -> bool:
        return state.status == "showdown_pending"

    @staticmethod
    def replay_command(event: Event, server_seed: str):
        """The command that caused ``event`` (for the audit's replay), or None."""
        if isinstance(event, HandStarted):
            imported = {"deck": event.deck, "source": event.source} if event.source else {}
            return StartHand(hand_no=event.hand_no, button=event.button, seats=event.seats,
                             server_seed=server_seed, client_seeds=event.client_seeds,
                             blinds=event.blinds, **imported)
        if isinstance(event, ShowdownEvaluated):
            return Showdown()
        move = _MOVES.get(type(event))
        if move is None:
            return None
        amount = {"bet": "to", "raise": "to", "add_chips": "amount"}.get(move)
        return Act(seat=event.seat, type=move, amount=getattr(event, amount) if amount else None,
                   cards=event.discarded if isinstance(event, CardsDrawn) else ())
