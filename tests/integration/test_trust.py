"""The trust promises, tried as an attacker would against a real ``cardroom serve`` on a real
Redis with separate ``cardroom worker`` processes: what Redis holds mid-hand, what the receipts
prove after someone rewrites a stored hand, and what a stolen Idempotency-Key yields."""

from __future__ import annotations

import json
import random

from domain import fairness
from domain.cards import STANDARD_DECK, codes
from service.keys import Keys
from service.store import hand_stream
from tests.processes import TEST_KEYS

from .client import create_table, play_hand
from .conftest import worker_logs

KEYS = Keys.from_hex(*TEST_KEYS.values())


def _every_value(redis) -> bytes:
    dump = []
    for key in redis.scan_iter("*"):
        kind = redis.type(key)
        if kind == b"stream":
            dump += [k + v for _, fields in redis.xrange(key) for k, v in fields.items()]
        elif kind == b"string":
            dump.append(redis.get(key))
        elif kind == b"zset":
            dump += redis.zrange(key, 0, -1)
        elif kind == b"set":
            dump += list(redis.smembers(key))
        elif kind == b"hash":
            dump += [k + v for k, v in redis.hgetall(key).items()]
        elif kind == b"list":
            dump += redis.lrange(key, 0, -1)
        dump.append(key)
    return b"\n".join(dump)


def test_redis_holds_no_readable_card_and_no_seed_mid_hand(api, redis_db):
    table = create_table(api, 4)
    hand_no = table.start_hand()
    dump = _every_value(redis_db)
    seed = KEYS.server_seed(table.table_id, hand_no)
    assert seed.encode() not in dump and bytes.fromhex(seed) not in dump
    readable = [card for card in codes(STANDARD_DECK) if f'"{card}"'.encode() in dump]
    assert readable == [], f"cards readable in Redis mid-hand: {readable}"
    for token in [table.admin, table.auditor, *table.tokens.values()]:
        assert token.encode() not in dump, "a token is stored in plain text"


def test_a_rewritten_hand_no_longer_matches_the_receipt_its_players_hold(
        api, redis_db, worker_process, integration_redis_url):
    procs = worker_process(integration_redis_url)
    table = create_table(api, 3)
    played = play_hand(table, random.Random(5), allow_fold=False,
                       diagnostics=lambda: worker_logs(procs))
    receipt = api.ok(api.get(f"{table.hand_path(played.hand_no)}/receipt",
                             token=table.tokens[1]), 200)
    assert table.audit(played.hand_no)["valid"]
    # Someone with write access to Redis moves 25 chips in the final stacks and
    # recomputes the whole chain, so that the hash chain itself holds.
    stream = hand_stream(table.table_id, played.hand_no)
    entries = [{k.decode(): v.decode() for k, v in f.items()} for _, f in redis_db.xrange(stream)]
    ended = json.loads(entries[-1]["data"])
    first, second = sorted(ended["stacks"])[:2]
    ended["stacks"][first] += 25
    ended["stacks"][second] -= 25
    entries[-1]["data"] = fairness.canonical_json(ended)
    previous = fairness.GENESIS_HASH
    for entry in entries:
        entry["prev_hash"] = previous
        envelope = {**entry, "data": json.loads(entry["data"]), "version": int(entry["version"]),
                    "command_id": entry.get("command_id")}
        entry["hash"] = previous = fairness.envelope_hash(envelope)
    redis_db.delete(stream)
    for entry in entries:
        redis_db.xadd(stream, entry, id=f"0-{entry['version']}")
    audit = table.audit(played.hand_no)
    failed = {c["name"] for c in audit["checks"] if not c["ok"]}
    assert not audit["valid"] and {"receipt", "table_settlement"} <= failed, audit
    assert "hash_chain" not in failed
    # The player's receipt, kept from before, proves what the service had signed.
    history = table.history(played.hand_no, table.tokens[1])
    assert history["events"][-1]["hash"] != receipt["receipt"]["head_hash"]
    # So does the replay of its own events by the rules.
    checks = fairness.verify_history({**history, "receipt": receipt}, receipt["public_key"])
    assert [c["name"] for c in checks if not c["ok"]] == ["rules", "receipt"]


def test_another_clients_join_key_yields_no_token(api):
    table = create_table(api, 2)
    path, key = f"{table.path}/players", {"Idempotency-Key": "shared-by-accident"}
    first = api.post(path, {"name": "dee", "buy_in": 500}, headers=key)
    assert first.status == 201
    stolen = api.post(path, {"name": "mallory", "buy_in": 500}, headers=key)
    assert stolen.status == 422 and stolen.json["code"] == "idempotency_key_reused", stolen
    assert first.json["token"].encode() not in stolen.raw
    retried = api.post(path, {"name": "dee", "buy_in": 500}, headers=key)
    assert retried.status == 201 and retried.json == first.json
