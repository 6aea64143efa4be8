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
FIVE_CARD_DRAW = game_of("five-card-draw")


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
    ``room`` itself), each command by ``room``; yields after each write."""
    table_id = room.create_table("five-card-draw", {}, None)["table_id"]
    yield table_id
    for n in range(3):
        room.seat_player(table_id, f"p{n}", 1000, "", None)
        yield table_id
    room.start_hand(table_id, None, None)
    yield table_id
    while room.hand(table_id, 1).state.awaiting:
        hand = room.hand(table_id, 1).state
        seat = hand.awaiting[0]
        player = next(s.player_id for s in hand.seats if s.seat == seat)
        kind = next(a for a in ("check", "call", "draw") if a in _legal(hand, seat))
        room.act(table_id, 1, Viewer("player", seat, player),
                 Act(seat=seat, type=kind, amount=None, cards=()), None, None)
        yield table_id
    assert room.settle_showdown(table_id, 1)
    yield table_id


def _legal(hand, seat):
    return {a["type"] for a in FIVE_CARD_DRAW.legal_actions(hand, seat)}


def test_a_writer_keeps_what_it_wrote_as_a_replay_would_and_replays_nothing_after():
    store = _store()
    room = Cardroom(store, KEYS, None)
    replayed = []
    room.cache.to_event = lambda envelope: replayed.append(envelope) or opened_event(envelope)
    for table_id in _played_hand(room):
        streams = [table_stream(table_id), hand_stream(table_id, 1)]
        fresh = Reads(store, KEYS)
        for stream, initial in zip(streams, _initials(fresh, table_id)):
            replay = fresh.cache.load(stream, *initial)
            assert room.cache.base(stream) == (replay if replay.version else Loaded(None, 0))
        replayed.clear()
        room.snapshot(table_id, 1)
        assert replayed == []
    assert room.cache.base(hand_stream(table_id, 1)).state.status == "ended"


def _initials(reads, table_id):
    options = reads.table(table_id).state.options
    return [(table_rules.initial_state, table_rules.evolve),
            (lambda: FIVE_CARD_DRAW.initial_state(options), FIVE_CARD_DRAW.evolve)]
