"""The replay cache: bounded, never caches a miss, notices a stream that was shortened or
rewritten under it, and keeps what its own process wrote as a replay would."""

import fakeredis

from domain import table as table_rules
from domain.commands import Act, CreateTable, SeatPlayer
from domain.games import game as game_of
from domain.views import Viewer
from service.keys import Keys, new_key_pair
from service.reads import Loaded, Reads, ReplayCache, opened_event
from service.room import Cardroom, sealed
from service.store import EventStore, StreamWrite, hand_stream, table_stream

KEYS = Keys.from_hex(*new_key_pair())


def _store() -> EventStore:
    return EventStore(fakeredis.FakeRedis(server=fakeredis.FakeServer()), KEYS)


def _table(store, table_id, players=1, prefix="p"):
    state, version = table_rules.initial_state(), 0
    commands = [CreateTable("five-card-draw", {}, 6, "a", "u", "c")] + [
        SeatPlayer(f"id{n}", f"{prefix}{n}", 100, "t") for n in range(players)]
    for command in commands:
        events = table_rules.decide(state, command)
        store.append([StreamWrite(table_stream(table_id), version, sealed(events))], actor="x")
        for event in events:
            state = table_rules.evolve(state, event)
        version += len(events)


def _load(cache, table_id):
    return cache.load(table_stream(table_id), table_rules.initial_state, table_rules.evolve)


def test_misses_are_not_cached_and_cannot_evict_real_tables():
    store = _store()
    cache = ReplayCache(store, opened_event, size=3)
    for name in ("a", "b", "c"):
        _table(store, name)
        _load(cache, name)
    for number in range(50):  # a scan of random table ids
        assert _load(cache, f"nobody-{number}").version == 0
    assert set(cache._states) == {table_stream(name) for name in ("a", "b", "c")}


def test_the_cache_holds_at_most_its_size():
    store = _store()
    cache = ReplayCache(store, opened_event, size=4)
    for number in range(10):
        _table(store, f"t{number}")
        _load(cache, f"t{number}")
    assert len(cache._states) == 4


def test_a_shortened_or_rewritten_stream_is_replayed_anew():
    store = _store()
    cache = ReplayCache(store, opened_event)
    _table(store, "a", players=2)
    assert len(_load(cache, "a").state.seats) == 2
    stream = table_stream("a")
    last = store.redis.xrange(stream)[-1][0]
    store.redis.xdel(stream, last)  # the last seat is gone
    assert len(_load(cache, "a").state.seats) == 1
    store.redis.delete(stream)
    _table(store, "a", players=3, prefix="q")  # rewritten: the cached head is not there
    assert [s.name for s in _load(cache, "a").state.seats] == ["q0", "q1", "q2"]


def _played_hand(room):
    """A Cardroom's Five Card Draw hand of 3 players played to its showdown (settled by
    ``room`` itself); then a client seed set, chips added, a player gone, and a second
    hand, of Seven Card Stud (dealer's choice), played to its end: each command by
    ``room``; yields after each write."""
    table_id = room.create_table("five-card-draw", {"dealers_choice": True}, None)["table_id"]
    yield table_id
    for n in range(3):
        room.seat_player(table_id, f"p{n}", 1000, "", None)
        yield table_id
    yield from _hand_played(room, table_id, None)
    room.set_client_seed(table_id, 1, "ab" * 8)
    yield table_id
    buyer = Viewer("player", 2, room.table(table_id).state.seat(2).player_id)
    room.add_chips(table_id, buyer, 100, None)
    yield table_id
    room.leave(table_id, 3, "seat:3")
    yield table_id
    yield from _hand_played(room, table_id, "seven-card-stud")


def _hand_played(room, table_id, game):
    hand_no = room.start_hand(table_id, game, None)["hand_no"]
    yield table_id
    while room.hand(table_id, hand_no).state.awaiting:
        hand = room.hand(table_id, hand_no).state
        seat = hand.awaiting[0]
        player = next(s.player_id for s in hand.seats if s.seat == seat)
        legal = {a["type"]: a for a in game_of(hand.game).legal_actions(hand, seat)}
        kind = next(a for a in ("check", "call", "draw", "bring_in") if a in legal)
        room.act(table_id, hand_no, Viewer("player", seat, player),
                 Act(seat=seat, type=kind, amount=legal[kind].get("amount"), cards=()),
                 None, None)
        yield table_id
    if room.hand(table_id, hand_no).state.status != "ended":
        assert room.settle_showdown(table_id, hand_no)
        yield table_id


def test_a_writer_keeps_what_it_wrote_as_a_replay_would_and_replays_nothing_after():
    store = _store()
    room = Cardroom(store, KEYS, None)
    replayed = []
    room.cache.to_event = lambda envelope: replayed.append(envelope) or opened_event(envelope)
    for table_id in _played_hand(room):
        fresh = Reads(store, KEYS)
        for stream, initial in _initials(fresh, table_id):
            replay = fresh.cache.load(stream, *initial)
            kept = room.cache.base(stream)  # repr: the same keys in the same order, too
            assert repr(kept) == repr(replay if replay.version else Loaded(None, 0))
        replayed.clear()
        room.snapshot(table_id, 1)
        room.snapshot(table_id, 2)
        assert replayed == []
    assert [room.cache.base(hand_stream(table_id, n)).state.status for n in (1, 2)] == [
        "ended", "ended"]
    assert room.cache.base(hand_stream(table_id, 2)).state.game == "seven-card-stud"


def _initials(reads, table_id):
    """Each stream of the table (its own, its hands') with how a reader replays it."""
    table = reads.table(table_id).state
    streams = [(table_stream(table_id), (table_rules.initial_state, table_rules.evolve))]
    for hand_no, game_id in enumerate(table.hand_games, start=1):
        game = game_of(game_id)  # replayed as Reads.snapshot replays a hand
        streams.append((hand_stream(table_id, hand_no),
                        (lambda game=game: game.initial_state(table.options), game.evolve)))
    return streams
