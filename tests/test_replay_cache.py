"""The replay cache: bounded, never caches a miss, and notices a stream that was shortened or
rewritten under it."""

import fakeredis

from domain import table as table_rules
from domain.commands import CreateTable, SeatPlayer
from service.keys import Keys, new_key_pair
from service.reads import ReplayCache, opened_event
from service.room import sealed
from service.store import EventStore, StreamWrite, table_stream

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
