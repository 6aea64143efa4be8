"""A hand replayed by the rules from its history as any reader holds it, without the seed
(the verifier's ``rules`` check).

The events are replayed as facts (``evolve``), from the hand's start (game, seats, stacks,
button, options, an import's ``source``) as it records it, which the audit checks against
the table. A card this
viewer may not read stands as a placeholder, which the bookkeeping carries and no judging
reads. Then:

* the hand starts once, as dealt from seeds or as imported; its events are a hand's;
* the antes and blinds are the ones the rules post, and none is posted later; each street
  starts in the variant's order once the round before it has closed, and none after the
  showdown; a deal street deals as the rules deal it (as many cards to each player still
  in, from the dealer's left, the stub reshuffled where it runs short) and no other street
  deals; each round closes once, when nobody has a bet to make, the bet nobody called
  given back just then, with the pot its bets make;
* each player's move comes right after the turn given to them (or the chips they added),
  and is one the rules allow, as they make it (a bet its amounts, a call the amount owed;
  a draw as many cards received as thrown, of cards the seat holds where the reader can
  tell), and the seat the rules name acts after it; each round opens with the seat the
  rules name, and no other turn is given (the cards dealt are as recorded: the audit
  decides those again);
* each card this reader can read is a card of the game's deck, dealt once until a
  reshuffle gives the mucked cards back to the stub;
* an uncalled bet goes back, all of its excess and only that, to the seat that made it;
* a pot won without a showdown is the whole pot, to the one player left in;
* at the showdown (one) every hand shown is all of its seat's cards, each once, no card is in two
  hands or on the board too, and the seats that show are the ones the rules show (every
  hand not mucked; with ``muck_losers`` the winners and the last to bet or raise); each
  pot is judged again among the hands this viewer can read (the hands shown, and a
  player's own), and the hands are described as they judge;
* the hand's end leaves each seat the stack its bets and the pots make, and no chip in the
  pot.

Judging the hands shown awards each pot as the showdown did: a hand goes unshown only when
it wins no part of any pot, or was mucked at the showdown of an imported hand, conceding;
its own player judges it too.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from domain.cards import codes
from domain.commands import Act
from domain.errors import DomainError
from domain.events import (ActionOn, AntePosted, BetReturned, BettingRoundClosed, BlindPosted,
                           BoardDealt, CardsDealt, CardsDrawn, ChipsBought, Event, HandEnded,
                           HandStarted, PotAwarded, ShowdownEvaluated, StreetStarted,
                           StubReshuffled, event_from_dict, mistyped)
from domain.fairness import unseal
from domain.frozen import replace
from domain.poker import betting, dealing, engine
from domain.poker.evolve import HAND_EVENTS
from domain.poker.forced import forced_bets
from domain.poker.game import PokerGame
from domain.poker.judging import judge
from domain.poker.showdown import awarded, evaluated, shown_seats
from domain.poker.spec import Bet, Deal
from domain.poker.state import HandState
from domain.poker.variants import VARIANTS

UNREAD = "?"  # a placeholder: "?" and the commitment of the card it stands for


def rules_problem(events: list[dict]) -> str | None:
    """The first thing in a history's ``events`` (their hidden values opened where its
    reader may read them) that the rules would not have made, or None."""
    facts = [event_from_dict(e["type"], _readable(e["data"], e.get("openings") or {}))
             for e in events]
    for event, fact in zip(events, facts):
        if problem := mistyped(fact, UNREAD):
            return f"event {event['version']}: {problem}"
    if not facts or not isinstance(facts[0], HandStarted):
        return "the hand does not begin with HandStarted"
    if facts[0].game not in VARIANTS:
        return f"the hand's game, {facts[0].game!r}, is not a game this verifier knows"
    state, shown, dealing_until, posted_until = engine.initial_state(
        {"game": facts[0].game, "options": facts[0].options}), False, 0, 0
    closed: set[int] = set()  # the betting rounds closed so far
    out: set[str] = set()  # the cards this reader has seen dealt, not since reshuffled
    for position, fact in enumerate(facts):
        fact = _counted(state, fact)
        shown = shown or isinstance(fact, ShowdownEvaluated)
        problem = (_out_of_place(fact, position, posted_until)
                   or _move_problem(state, fact, _before(facts, position),
                                    facts[position + 1:position + 2])
                   or _opening_problem(state, fact, facts[position - 1] if position else None)
                   or _street_problem(state, fact, closed)
                   or _undue_deal(state, fact, facts[position + 1:position + 2],
                                  position <= dealing_until)
                   or _dealt_twice(state, fact, out)
                   or _paid_problem(state, fact, facts[position:], shown))
        if problem:
            return f"event {events[position]['version']}: {problem}"
        state = engine.evolve(state, fact)
        if isinstance(fact, BettingRoundClosed):
            closed.add(fact.street)
        if position == 0:
            posted = forced_bets(state, engine.variant_of(state).forced)
            posted_until = len(posted)
            if facts[1:1 + len(posted)] != posted:
                return (f"event {events[0]['version']}: the antes and blinds posted after it "
                        "are not the ones the rules post for its seats, stacks, button and "
                        "options")
        if isinstance(fact, StreetStarted) and fact.kind == "deal":
            due = _dealt_by_rules(state)
            if [_shape(f) for f in facts[position + 1:position + 1 + len(due)]] != [
                    _shape(e) for e in due]:
                return (f"event {events[position]['version']}: street {fact.street} is not "
                        "dealt as the rules deal it: to each player still in, from the "
                        "dealer's left, as many cards as it deals")
            dealing_until = position + len(due)
    return None


def _dealt_twice(state: HandState, fact: Event, out: set[str]) -> str | None:
    """A card dealt that is no card of the game's deck, or that is out of the stub already
    (dealt, and not given back to it since by a reshuffle of the cards mucked). Keeps
    ``out``: the readable cards dealt."""
    if isinstance(fact, StubReshuffled):
        out.difference_update(state.mucked)
        return None
    cards = (fact.cards if isinstance(fact, (CardsDealt, BoardDealt)) else
             fact.received if isinstance(fact, CardsDrawn) else ())
    deck = set(codes(VARIANTS[state.game].deck))
    for card in cards:
        if isinstance(card, str) and card.startswith(UNREAD):
            continue
        if card not in deck:
            return f"{fact.type} deals {card!r}, which is no card of the game's deck"
        if card in out:
            return f"{fact.type} deals {card}, which was dealt already and not reshuffled since"
        out.add(card)
    return None


def _out_of_place(fact: Event, position: int, posted_until: int) -> str | None:
    """An event no hand is made of, a start anywhere but first, forced bets anywhere but
    right after it, or a start that says both that its cards came from seeds and that the
    hand was imported."""
    if type(fact) not in HAND_EVENTS:
        return f"{fact.type} is not an event of a hand"
    if isinstance(fact, HandStarted) and (position or bool(fact.source) == bool(
            fact.seed_commitment)):
        return ("the hand starts again" if position else
                "the hand is dealt from seeds and imported both, or neither")
    if isinstance(fact, (AntePosted, BlindPosted)) and not 0 < position <= posted_until:
        return f"{fact.type} where the rules post no forced bet"
    return None


def _counted(state: HandState, fact: Event) -> Event:
    """A deck or reshuffled stub this reader may not read, as as many placeholders as it
    has cards (which every reader can count), so that dealing from it deals as the rules
    do."""
    if isinstance(fact, HandStarted) and isinstance(fact.deck, str):
        return replace(fact, deck=tuple(f"{fact.deck}-{i}"
                                        for i in range(len(VARIANTS[fact.game].deck))))
    if isinstance(fact, StubReshuffled) and isinstance(fact.cards, str):
        size = len(state.deck) + len(state.mucked)
        return replace(fact, cards=tuple(f"{fact.cards}-{i}" for i in range(size)))
    return fact


def _dealt_by_rules(state: HandState) -> list[Event]:
    """How the street just started deals: as many cards to whom, reshuffling where. The
    cards are stand-ins (any cards, as many as the stub and the muck hold), shuffled as a
    hand dealt here is (an import's own stubs left out)."""
    variant = engine.variant_of(state)
    street, stand_ins = variant.streets[state.street], codes(variant.deck)
    size = len(state.deck)
    state = replace(state, deck=tuple(stand_ins[:size]), reshuffle_key="", source={},
                    mucked=tuple(stand_ins[size:size + len(state.mucked)]))
    deal = dealing.deal_street if isinstance(street, Deal) else dealing.deal_board
    return deal(state, street)


def _shape(event: Event) -> tuple:
    if isinstance(event, CardsDealt):
        return type(event), event.seat, len(event.cards), event.face_up
    if isinstance(event, BoardDealt):
        return type(event), len(event.cards)
    return (type(event),)


def _undue_deal(state: HandState, fact: Event, following: list[Event], dealing_now: bool,
                ) -> str | None:
    """Cards dealt, or the stub reshuffled, where the rules do neither: outside a deal
    street, a reshuffle only just before a draw the stub is too short for."""
    if isinstance(fact, (CardsDealt, BoardDealt)) and not dealing_now:
        return f"{fact.type} deals cards where the rules deal none"
    if isinstance(fact, StubReshuffled) and not dealing_now and not (
            following and isinstance(following[0], CardsDrawn) and state.mucked
            and len(following[0].discarded) > len(state.deck)):
        return "the stub is reshuffled where the rules do not reshuffle it"
    return None


def _street_problem(state: HandState, fact: Event, closed: set[int]) -> str | None:
    """A street started out of the variant's order, after the showdown, before the betting
    round of the street before it closed (``closed``: the rounds closed so far) or with one
    player left; a round closed twice, early, or with another pot than its bets make; the
    pot paid to the one player left before the round closed."""
    streets = engine.variant_of(state).streets
    open_round = 0 <= state.street < len(streets) and isinstance(
        streets[state.street], Bet) and state.street not in closed
    if isinstance(fact, PotAwarded) and fact.reason == "uncontested" and open_round:
        return f"the pot is paid before round {state.street} has closed"
    if isinstance(fact, BettingRoundClosed):
        if state.street in closed:
            return f"round {fact.street} closes again"
        if state.status != "betting" or not betting.round_complete(state) or (
                engine.uncalled(state) is not None):
            return (f"round {fact.street} closes with seats {betting.waiting_on(state)} to act "
                    "or a bet nobody called not given back")
        due = BettingRoundClosed(street=state.street, pot=state.pot)
        return None if fact == due else f"round {fact.street} closes with a pot of {due.pot}"
    if not isinstance(fact, StreetStarted):
        return None
    if state.street + 1 > len(streets):
        return "a street starts after the showdown"
    if open_round:
        return f"street {fact.street} starts before round {state.street} has closed"
    due = engine.next_street(state)
    if fact != due or state.awaiting or len(state.in_hand()) < 2:
        return (f"street {fact.street} ({fact.kind}) starts where the rules have street "
                f"{due.street} ({due.kind}), with seats {list(state.awaiting)} awaited and "
                f"{len(state.in_hand())} players in")
    return None


def _opening_problem(state: HandState, fact: Event, previous: Event | None) -> str | None:
    """Right after a draw or betting street starts: its first to act, as the rules name
    them, or the round closed at once where nobody has a bet to make. Any other turn is
    one the move before it gave (``_move_problem``)."""
    if not (isinstance(previous, StreetStarted) and previous.kind in ("draw", "bet")):
        moved = PokerGame.replay_command(previous, "") if previous else None
        given = isinstance(moved, Act) and not isinstance(previous, ChipsBought)
        if isinstance(fact, ActionOn) and not given:
            return f"seats {list(fact.seats)} are given a turn the rules do not give"
        return None
    first = engine.first_to_act(state)
    due = ActionOn(seats=(first,)) if first is not None else None
    if (fact if isinstance(fact, ActionOn) else None) != due:
        return (f"the rules have seat {first} act first on street {previous.street}"
                if first is not None else f"the rules close round {previous.street} at once")
    return None


def _paid_problem(state: HandState, fact: Event, later: list[Event], shown: bool) -> str | None:
    """A chip paid out other than the rules pay it (``later``: this fact and those after)."""
    if isinstance(fact, BetReturned) and (
            fact != engine.uncalled(state) or not betting.round_complete(state)
            or not isinstance(later[1] if len(later) > 1 else None, BettingRoundClosed)):
        return (f"{fact.amount} goes back to seat {fact.seat}, not the bet nobody called as "
                "the round closes")
    if isinstance(fact, ShowdownEvaluated):
        if state.status != "showdown_pending" or state.showdown:
            return "a showdown before the last round has closed, or a second one"
        return _rejudged(state, fact, [f for f in later if isinstance(f, PotAwarded)])
    if isinstance(fact, PotAwarded) and fact.reason == "uncontested":
        return _uncontested(state, fact)
    if isinstance(fact, PotAwarded) and not shown:
        return "a pot is paid at a showdown that no ShowdownEvaluated records"
    if isinstance(fact, HandEnded):
        return _ended(state, fact)
    return None


def _before(facts: list[Event], position: int) -> Event | None:
    """The event before ``position``, a reshuffle of the stub for a draw passed over."""
    earlier = [f for f in facts[max(0, position - 2):position]
               if not isinstance(f, StubReshuffled)]
    return earlier[-1] if earlier else None


def _move_problem(state: HandState, fact: Event, previous: Event | None,
                  following: list[Event]) -> str | None:
    """A player's move out of turn (not right after the turn given to them, or after the
    chips they added), or not as the rules make it (a draw: as many cards received as
    thrown, and no more than the table allows), or who acts after it not the one the
    rules name."""
    move = PokerGame.replay_command(fact, "")
    if not isinstance(move, Act):
        return None
    drawing = state.status == "drawing"
    given = (isinstance(previous, ActionOn) and move.seat in previous.seats
             or isinstance(previous, ChipsBought) and previous.seat == move.seat)
    if not given:
        return f"seat {move.seat} moves ({move.type}) without a turn given to it"
    if move.seat not in state.awaiting or drawing != (move.type == "draw"):
        return f"seat {move.seat} moves ({move.type}) where the hand awaits seats " + (
            f"{list(state.awaiting)} to {'draw' if drawing else 'bet'}")
    if drawing:
        thrown, received = len(fact.discarded), len(fact.received)
        if thrown != received or thrown > state.options.get("max_discard", thrown):
            return f"seat {move.seat} throws {thrown} cards and receives {received}"
        held = state.seat(move.seat).cards
        if len(set(fact.discarded)) < thrown or any(
                card not in held for card in fact.discarded if not card.startswith(UNREAD)):
            return f"seat {move.seat} throws cards it does not hold, or one twice"
    else:
        try:
            due = betting.action_event(state, state.seat(move.seat), move.type, move.amount)
        except DomainError as refused:
            return f"{fact.type} is not a move the rules allow: {refused.message}"
        if due != fact:
            return f"{fact.type} is not what the rules make of a {move.type}"
        if isinstance(fact, ChipsBought):
            return None  # still this seat's turn
    after = engine.evolve(state, fact)
    turn = (after.next_seat(move.seat, lambda s: s.in_hand and not s.acted) if drawing
            else betting.next_to_act(after, move.seat))
    if turn is not None and following != [ActionOn(seats=(turn,))]:
        return f"after seat {move.seat}'s {move.type} the rules have seat {turn} act"
    if turn is None and following and isinstance(following[0], ActionOn):
        return f"after seat {move.seat}'s {move.type} the rules close the round"
    return None


def _rejudged(state: HandState, shown: ShowdownEvaluated, paid: list[PotAwarded]) -> str | None:
    cards = {hand["seat"]: tuple(hand["cards"]) for hand in shown.hands}
    problem = _cards_problem(state, cards)
    if problem:
        return problem
    state = replace(state, seats=tuple(replace(s, cards=cards.get(s.seat, s.cards))
                                       for s in state.seats))
    mucked = set(state.source.get("mucked", ()))
    judge_name = engine.variant_of(state).judge
    judged = {s.seat: judge(judge_name, s.cards, state.board) for s in state.in_hand()
              if s.seat not in mucked and not any(card.startswith(UNREAD) for card in s.cards)}
    try:
        due = awarded(state, judge_name, judged)
    except ValueError:
        return "a pot is paid that no hand shown could win"
    showing = _showing(state, due)
    if list(cards) not in showing:
        return f"seats {list(cards)} show, where the rules show seats {showing[0]}"
    if evaluated(state, judge_name, judged, list(cards)) != shown:
        return "the hands shown are not described as they judge"
    if due != paid:
        return (f"the pots paid, {[dict(p.shares) for p in paid]}, are not what the hands "
                f"shown make, {[dict(p.shares) for p in due]}")
    return None


def _cards_problem(state: HandState, shown: dict[int, tuple]) -> str | None:
    """A hand shown that is not all of its seat's cards, each once; or a card in two places
    (in hands, on the board, in the muck)."""
    for seat, cards in shown.items():
        held = state.seat(seat).cards
        readable = {card for card in held if not card.startswith(UNREAD)}
        if len(cards) != len(held) or len(set(cards)) != len(cards) or not readable <= set(cards):
            return f"seat {seat} shows {' '.join(cards)}, not the {len(held)} cards it holds"
    everywhere = Counter(card for s in state.in_hand() for card in shown.get(s.seat, s.cards)
                         if not card.startswith(UNREAD))
    mucked = Counter(card for card in state.mucked if not card.startswith(UNREAD))
    twice = sorted(card for card, count in (everywhere + Counter(state.board) + mucked).items()
                   if count > 1)
    return f"{' '.join(twice)} is in two places" if twice else None


def _showing(state: HandState, awards: list[PotAwarded]) -> list[list[int]]:
    """Who shows, by the hand's options and by each earlier rule of who shows that they
    lack (``PokerGame.earlier_rules``: those pay alike)."""
    rules = [{}] + [rule for rule in PokerGame.earlier_rules
                    if not any(name in state.options for name in rule)]
    return [shown_seats(replace(state, options={**state.options, **rule}), awards)
            for rule in rules]


def _uncontested(state: HandState, award: PotAwarded) -> str | None:
    left = [s.seat for s in state.in_hand()]
    if len(left) != 1 or award != engine.uncontested(state):
        return (f"an uncontested pot of {award.amount} to seats {list(award.winners)}, with "
                f"seats {left} in and {state.pot} in the pot")
    return None


def _ended(state: HandState, ended: HandEnded) -> str | None:
    if state.pot:
        return f"the hand ends with {state.pot} in the pot unpaid"
    due = engine.ended(state)
    if ended != due:
        return (f"the hand ends with stacks {dict(ended.stacks)}, where its bets and pots "
                f"leave {dict(due.stacks)}")
    return None


def _readable(data: dict, openings: dict) -> Any:
    """``data`` with its openings in place and every commitment left a placeholder."""
    return _placeholders(unseal(data, openings))


def _placeholders(value: Any) -> Any:
    if isinstance(value, dict):
        if set(value) == {"commitment"}:
            return UNREAD + str(value["commitment"])
        return {key: _placeholders(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_placeholders(item) for item in value]
    return value
