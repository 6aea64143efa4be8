"""Hidden stays hidden, history stays honest: commitments, seeds, receipts, the verifier and
the audit, through the HTTP API on embedded fakeredis, tried as an attacker would."""

import hashlib
import json
import re
import subprocess
import sys

import orjson
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from hypothesis import given
from hypothesis import strategies as st

from domain import fairness
from domain.cards import STANDARD_DECK, codes
from service import jsonio, reads
from service.app import create_app
from service.store import Envelope, hand_stream, receipt_key, table_stream
from tests.processes import ROOT
from tests.test_api import act, auth, hand_url, play_to_showdown, readable, start_hand

ALL_CARDS = codes(STANDARD_DECK)


def new_table(client, reveal="auditor", seeds=("ann-seed", None, "cy's own entropy")):
    created = client.post("/v1/tables", json={"game": "five-card-draw", "max_seats": 4,
                                              "options": {"reveal": reveal}}).json
    players = {}
    for name, seed in zip(("ann", "bob", "cy"), seeds):
        body = {"name": name, "buy_in": 1000} | ({"client_seed": seed} if seed else {})
        joined = client.post(f"/v1/tables/{created['table_id']}/players", json=body).json
        players[joined["seat"]] = auth(joined["token"])
    return {"id": created["table_id"], "admin": auth(created["admin_token"]),
            "auditor": auth(created["auditor_token"]), "players": players,
            "commitment": created["next_seed_commitment"]}


@pytest.fixture
def table(client):
    return new_table(client)


def finished_hand(client, backend, table):
    """A hand played to a showdown: the first player bets 25, everyone calls, stands pat
    and checks; the worker settles it."""
    hand_no = start_hand(client, table)
    while (hand := get(client, table, hand_no, "", table["admin"]))["status"] not in (
            "showdown_pending", "ended"):
        seat = hand["to_act"]
        legal = {a["type"] for a in get(client, table, hand_no, "",
                                         table["players"][seat])["legal_actions"]}
        body = ({"type": "draw", "cards": []} if "draw" in legal else
                {"type": "bet", "amount": 25} if "bet" in legal and hand["street"] == "bet_1" else
                {"type": "check"} if "check" in legal else {"type": "call"})
        assert act(client, table, hand_no, seat, **body).status_code == 201
    backend.run_jobs()
    return hand_no


def get(client, table, hand_no, suffix, who):
    response = client.get(hand_url(table, hand_no, suffix), headers=who)
    assert response.status_code == 200, response.json
    return response.json


def everything_received(client, table, hand_no, seat) -> list:
    """Every document a player can fetch about the hand."""
    who = table["players"][seat]
    return [get(client, table, hand_no, "", who), get(client, table, hand_no, "/events", who)]


# --- the deck, as ALGORITHMS["deck"] publishes it ----------------------------------


def _published_deck(server_seed: str, client_seeds: dict, hand_no: int) -> list[str]:
    """The deck written from the words of ``fairness.ALGORITHMS["deck"]`` alone."""
    mixed = json.dumps({"client_seeds": client_seeds, "hand_no": hand_no}, sort_keys=True,
                       separators=(",", ":"), ensure_ascii=False).encode()
    deck_seed = hashlib.sha256(bytes.fromhex(server_seed) + mixed).hexdigest()
    stream, counter = b"", 0

    def draw(n):
        nonlocal stream, counter
        while True:
            while len(stream) < 8:
                stream += hashlib.sha256(bytes.fromhex(deck_seed)
                                         + counter.to_bytes(8, "big")).digest()
                counter += 1
            x, stream = int.from_bytes(stream[:8], "big"), stream[8:]
            if x < 2**64 - 2**64 % n:
                return x % n
    deck = list(ALL_CARDS)
    for i in range(51, 0, -1):
        j = draw(i + 1)
        deck[i], deck[j] = deck[j], deck[i]
    return deck


@given(st.binary(min_size=32, max_size=32), st.dictionaries(
    st.sampled_from("123456789"), st.text(max_size=12), max_size=9), st.integers(1, 10**6))
def test_the_deck_is_the_one_the_published_algorithm_makes(seed, client_seeds, hand_no):
    assert fairness.deck_order(seed.hex(), client_seeds, hand_no) == _published_deck(
        seed.hex(), client_seeds, hand_no)


def test_a_deck_stays_what_it_was_when_its_hands_were_played():
    """Stored hands replay only while the shuffle is the same: one deck, pinned."""
    assert fairness.deck_order("00" * 32, {"1": "a", "2": ""}, 7)[:12] == [
        "5d", "8c", "Ad", "4h", "Jd", "6s", "2d", "4c", "Qc", "Kh", "Qh", "Ah"]


# --- nothing a viewer receives is a function of a card they may not see ------------


def test_no_commitment_or_hash_a_player_receives_reveals_an_opponents_cards(client, table):
    hand_no = start_hand(client, table)
    first = act(client, table, hand_no, 2, type="bet", amount=25).json  # a 201 answer
    received = everything_received(client, table, hand_no, 2) + [first]
    events = get(client, table, hand_no, "/events", table["players"][2])["events"]
    secrets = [node["commitment"] for node in _commitments(received)]
    assert len(secrets) >= 11  # seat 1's and seat 3's five cards each, and the deck
    # Brute force without the salt: every card, alone, as JSON or raw, hashed.
    guesses = {hashlib.sha256(form).hexdigest() for card in ALL_CARDS
               for form in (card.encode(), json.dumps(card).encode())}
    assert not guesses & set(secrets)
    # The chain hash covers commitments, not cards: not even the true cards, put back in
    # place, reproduce an opponent's event hash (as they did before commitments).
    state = client.application.extensions["cardroom"].hand(table["id"], hand_no).state
    for event in events:
        if event["type"] == "CardsDealt" and event["data"]["seat"] != 2:
            assert event["openings"] == {}
            true_cards = list(state.seat(event["data"]["seat"]).cards)
            guess = {**event, "data": {**event["data"], "cards": true_cards}}
            assert fairness.envelope_hash(guess) != event["hash"]


def _commitments(node):
    if isinstance(node, dict):
        if set(node) == {"commitment"}:
            yield node
        for value in node.values():
            yield from _commitments(value)
    elif isinstance(node, list):
        for value in node:
            yield from _commitments(value)


def test_a_dump_of_every_key_of_a_table_mid_hand_holds_no_undealt_card_and_no_seed(
        client, fake_backend, table):
    hand_no = start_hand(client, table)
    act(client, table, hand_no, 2, type="bet", amount=25)
    room = client.application.extensions["cardroom"]
    state = room.hand(table["id"], hand_no).state
    dump = b"".join(_dump(fake_backend.redis, key) for key in fake_backend.redis.keys("*"))
    seed = room.keys.server_seed(table["id"], hand_no)
    assert seed.encode() not in dump and bytes.fromhex(seed) not in dump
    assert len(state.deck) == 52 - 15
    found = [card for card in ALL_CARDS if f'"{card}"'.encode() in dump]
    assert found == [], f"cards readable in Redis: {found}"


def _dump(redis, key) -> bytes:
    kind = redis.type(key)
    if kind == b"stream":
        return b"".join(k + v for _, fields in redis.xrange(key) for k, v in fields.items())
    if kind == b"string":
        return redis.get(key)
    if kind == b"zset":
        return b"".join(redis.zrange(key, 0, -1))
    if kind == b"set":
        return b"".join(redis.smembers(key))
    return key


def test_players_keep_what_they_saw_and_the_auditor_gets_the_reveal(client, fake_backend, table):
    hand_no = start_hand(client, table)
    act(client, table, hand_no, 2, type="bet", amount=25)
    act(client, table, hand_no, 3, type="fold")
    act(client, table, hand_no, 1, type="call")
    for seat in (2, 1):
        act(client, table, hand_no, seat, type="draw", cards=[])
    for seat in (2, 1):
        act(client, table, hand_no, seat, type="check")
    fake_backend.run_jobs()
    player = get(client, table, hand_no, "/history", table["players"][1])
    folded = next(e for e in player["events"]
                  if e["type"] == "CardsDealt" and e["data"]["seat"] == 3)
    assert player["server_seed"] is None and folded["openings"] == {}
    assert player["events"][0]["openings"] == {}  # the deck stays with the auditor
    dealt, drew = (e for e in player["events"]
                   if e["type"] in ("CardsDealt", "CardsDrawn") and e["data"]["seat"] == 2)
    assert dealt["openings"] == {}  # a shown hand is opened to everyone as its draw held it
    assert set(drew["openings"]) == {f"/held/{i}" for i in range(5)}
    assert None not in readable(drew, "held")
    auditor = get(client, table, hand_no, "/history", table["auditor"])
    deck = auditor["events"][0]["openings"]["/deck"]["value"]
    dealt = auditor["events"][0]["data"]["client_seeds"]
    assert dealt == {"1": "ann-seed", "2": "", "3": "cy's own entropy"}
    assert deck == fairness.deck_order(auditor["server_seed"], dealt, hand_no)
    view = get(client, table, hand_no, "", table["players"][1])
    assert view["server_seed"] is None and view["seats"][2]["cards"] == [None] * 5


def test_with_reveal_everyone_every_player_gets_the_seed_and_the_deck(client, fake_backend):
    table = new_table(client, reveal="everyone")
    hand_no = finished_hand(client, fake_backend, table)
    history = get(client, table, hand_no, "/history", table["players"][3])
    assert history["server_seed"] and "/deck" in history["events"][0]["openings"]
    checks = {c["name"]: c for c in fairness.verify_history(history)}
    assert all(c["ok"] and not c.get("skipped") for c in checks.values()), checks


# --- seeds --------------------------------------------------------------------------


def test_the_seed_commitment_is_published_before_the_hand_and_client_seeds_mix_in(
        client, fake_backend, table):
    assert table["commitment"] == _table(client, table)["next_seed_commitment"]
    hand_no = start_hand(client, table)
    started = get(client, table, hand_no, "/events", table["auditor"])["events"][0]["data"]
    assert started["seed_commitment"] == table["commitment"]
    # Once hand 1 opens, hand 2's commitment is out; a seed changed now counts for hand 2.
    next_commitment = _table(client, table)["next_seed_commitment"]
    assert next_commitment != table["commitment"]
    changed = client.put(f"/v1/tables/{table['id']}/players/2/seed",
                         json={"client_seed": "bob's lucky string"}, headers=table["players"][2])
    assert changed.status_code == 200 and changed.json["applies_from_hand"] == 2
    play_to_showdown(client, table, hand_no)
    fake_backend.run_jobs()
    assert _table(client, table)["next_seed_commitment"] == next_commitment
    hand_two = finished_hand(client, fake_backend, table)
    history = get(client, table, hand_two, "/history", table["auditor"])
    data = history["events"][0]["data"]
    assert data["seed_commitment"] == next_commitment
    assert data["client_seeds"]["2"] == "bob's lucky string"
    seed = history["server_seed"]
    assert fairness.seed_commitment(seed) == next_commitment
    deck = history["events"][0]["openings"]["/deck"]["value"]
    assert deck == fairness.deck_order(seed, data["client_seeds"], hand_two)
    assert deck != fairness.deck_order(seed, {**data["client_seeds"], "2": ""}, hand_two)


def test_a_client_seed_is_the_players_own_to_set(client, table):
    url = f"/v1/tables/{table['id']}/players/2/seed"
    assert client.put(url, json={"client_seed": "x"}, headers=table["players"][1]).json["code"] \
        == "not_your_seat"
    assert client.put(url, json={"client_seed": ""}, headers=table["players"][2]).status_code == 422
    assert client.put(url, json={"client_seed": "y" * 129},
                      headers=table["players"][2]).status_code == 422
    joined = client.post(f"/v1/tables/{table['id']}/players",
                         json={"name": "dee", "buy_in": 50, "client_seed": "z" * 129})
    assert joined.status_code == 422


def _table(client, table):
    return client.get(f"/v1/tables/{table['id']}", headers=table["admin"]).json


# --- receipts -----------------------------------------------------------------------


def test_each_seat_dealt_in_and_the_auditor_fetch_the_same_signed_receipt(
        client, fake_backend, table):
    hand_no = start_hand(client, table)
    early = client.get(hand_url(table, hand_no, "/receipt"), headers=table["players"][1])
    assert early.status_code == 409 and early.json["code"] == "hand_not_ended"
    play_to_showdown(client, table, hand_no)
    fake_backend.run_jobs()
    receipts = [get(client, table, hand_no, "/receipt", who)
                for who in (*table["players"].values(), table["auditor"])]
    assert all(r == receipts[0] for r in receipts)
    public_key = client.get("/v1/fairness").json["public_key"]
    signed = receipts[0]
    Ed25519PublicKey.from_public_bytes(bytes.fromhex(public_key)).verify(
        bytes.fromhex(signed["signature"]),
        json.dumps(signed["receipt"], sort_keys=True, separators=(",", ":")).encode())
    events = get(client, table, hand_no, "/events", table["auditor"])["events"]
    (_, settled), = fake_backend.redis.xrevrange(table_stream(table["id"]), count=1)
    assert settled[b"type"] == b"HandSettled"
    assert signed["receipt"] == {"table_id": table["id"], "hand_no": hand_no,
                                 "version": events[-1]["version"], "head_hash": events[-1]["hash"],
                                 "stacks": events[-1]["data"]["stacks"],
                                 "table_version": int(settled[b"version"]),
                                 "table_head_hash": settled[b"hash"].decode()}
    admin = client.get(hand_url(table, hand_no, "/receipt"), headers=table["admin"])
    assert admin.status_code == 403


def test_a_receipt_is_signed_once_and_never_again(client, fake_backend, table):
    hand_no = finished_hand(client, fake_backend, table)
    key = receipt_key(table["id"], hand_no)
    stored = fake_backend.redis.get(key)
    fake_backend.redis.delete(key)
    missing = client.get(hand_url(table, hand_no, "/receipt"), headers=table["auditor"])
    assert missing.status_code == 404 and fake_backend.redis.get(key) is None
    audit = get(client, table, hand_no, "/audit", table["auditor"])
    assert not _check(audit, "receipt")["ok"]
    fake_backend.redis.set(key, stored)
    assert get(client, table, hand_no, "/audit", table["auditor"])["valid"]


def test_fairness_publishes_the_key_and_every_algorithm(client):
    published = client.get("/v1/fairness").json
    assert len(bytes.fromhex(published["public_key"])) == 32
    assert {"canonical_json", "chain", "commitment", "seed_commitment", "deck", "receipt"} <= set(
        published["algorithms"])


# --- the verifier -------------------------------------------------------------------


def verify(path, *args, python=sys.executable, isolated=False) -> subprocess.CompletedProcess:
    command = [python, *(["-S", "-E"] if isolated else []), "-m", "domain.fairness", "verify",
               str(path), *args]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("who", ["player", "auditor"])
def test_downloaded_histories_pass_the_verifier(client, fake_backend, table, tmp_path, who):
    hand_no = finished_hand(client, fake_backend, table)
    viewer = table["players"][2] if who == "player" else table["auditor"]
    path = tmp_path / "history.json"
    path.write_bytes(client.get(hand_url(table, hand_no, "/history"), headers=viewer).data)
    public_key = client.get("/v1/fairness").json["public_key"]
    result = verify(path, "--public-key", public_key)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "ok   receipt: signed receipt" in result.stdout
    assert "ok   rules: the moves, the hands shown and the pots are as the rules make" in (
        result.stdout)
    assert result.stdout.endswith("\nverified\n")
    if who == "auditor":
        assert "ok   deck: the deck matches the seeds" in result.stdout
    bare = verify(path, "--public-key", public_key, isolated=True)  # the standard library alone
    assert bare.returncode == 3, bare.stdout + bare.stderr
    assert "skip receipt: head and stacks match; the signature is not checked" in bare.stdout
    assert "partly verified" in bare.stdout


def test_a_history_re_signed_by_a_forger_is_verified_only_against_the_key_it_names(
        client, fake_backend, table, tmp_path):
    """A forger can re-hash the chain and sign the receipt with a key of their own, named in
    the file: without the service's key given, the verdict says it proves nothing more."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    hand_no = finished_hand(client, fake_backend, table)
    history = client.get(hand_url(table, hand_no, "/history"), headers=table["players"][2]).json
    ended = history["events"][-1]
    ended["occurred_at"] = "2026-01-01T00:00:00+00:00"
    ended["hash"] = fairness.envelope_hash(ended)
    forger = Ed25519PrivateKey.generate()
    receipt = {**history["receipt"]["receipt"], "head_hash": ended["hash"]}
    history["receipt"] = {"receipt": receipt, "signature": forger.sign(
        fairness.receipt_message(receipt)).hex()}
    history["public_key"] = forger.public_key().public_bytes_raw().hex()
    path = tmp_path / "forged.json"
    path.write_text(json.dumps(history))
    named = verify(path)
    assert named.returncode == 3 and "partly verified" in named.stdout, named.stdout
    assert history["public_key"] in named.stdout  # the key it was checked against is shown
    given = verify(path, "--public-key", client.get("/v1/fairness").json["public_key"])
    assert given.returncode == 1 and "FAIL receipt" in given.stdout, given.stdout


def rechained(events: list[dict]) -> list[dict]:
    """``events`` with every link and hash made again, as a forger without keys can."""
    previous = fairness.GENESIS_HASH
    for version, event in enumerate(events, start=1):
        event["version"], event["prev_hash"] = version, previous
        event["hash"] = previous = fairness.envelope_hash(event)
    return events


def test_an_operator_who_re_signs_a_pot_paid_to_a_losing_hand_fails_the_rules_check(
        client, fake_backend, table, tmp_path):
    """The operator holds the signing key, so a receipt proves only what was signed: a
    player's verifier judges the hands shown again and finds the pot paid to a loser."""
    hand_no = finished_hand(client, fake_backend, table)
    history = get(client, table, hand_no, "/history", table["players"][3])
    pot = next(e["data"] for e in history["events"] if e["type"] == "PotAwarded")
    ended = history["events"][-1]["data"]
    loser = next(s for s in pot["eligible"] if s not in pot["winners"])
    for totals in (ended["stacks"], ended["net"]):
        for seat, share in pot["shares"].items():
            totals[seat] -= share
        totals[str(loser)] += pot["amount"]
    pot.update(winners=[loser], shares={str(loser): pot["amount"]})
    rechained(history["events"])
    keys = fake_backend.config.keys()
    receipt = {**history["receipt"]["receipt"], "head_hash": history["events"][-1]["hash"],
               "stacks": ended["stacks"]}
    history["receipt"] = {"receipt": receipt, "signature": keys.sign(receipt)}
    (tmp_path / "paid.json").write_text(json.dumps(history))
    result = verify(tmp_path / "paid.json", "--public-key", keys.public_key)
    assert result.returncode == 1, result.stdout
    assert "ok   receipt" in result.stdout and "ok   shown_hands" in result.stdout
    assert "FAIL rules: event" in result.stdout
    assert "are not what the hands shown make" in result.stdout


def test_a_history_without_its_receipt_proves_nothing_and_one_that_says_it_ended_fails(
        client, fake_backend, table, tmp_path):
    """Anyone can hash a chain: an ended hand cut before HandEnded, its pot given to a seat
    that folded, is unsigned. Said to have ended (its status, its revealed seed), it fails;
    with those removed too, it is only partly verified: nothing in it is signed."""
    hand_no = finished_hand(client, fake_backend, table)
    history = client.get(hand_url(table, hand_no, "/history"), headers=table["auditor"]).json
    events = history["events"][:-1]
    awarded = next(e for e in events if e["type"] == "PotAwarded")
    awarded["data"]["winners"], awarded["data"]["shares"] = [3], {"3": awarded["data"]["amount"]}
    history.update(events=rechained(events), version=len(events), receipt=None)
    key = client.get("/v1/fairness").json["public_key"]
    (tmp_path / "ended.json").write_text(json.dumps(history))
    result = verify(tmp_path / "ended.json", "--public-key", key)
    assert result.returncode == 1 and "FAIL receipt: the history says the hand has ended" in (
        result.stdout), result.stdout
    history.update(status="in_progress", server_seed=None)
    (tmp_path / "unsigned.json").write_text(json.dumps(history))
    result = verify(tmp_path / "unsigned.json", "--public-key", key)
    assert result.returncode == 3, result.stdout
    assert "partly verified: the history holds no receipt" in result.stdout


def test_an_operator_who_re_signs_a_deal_out_of_the_decks_order_fails_the_deck(
        client, fake_backend, table, tmp_path):
    """Whoever holds the signing key can rewrite and re-sign a history, but not its deck:
    two cards a seat was dealt, exchanged (each still dealt once, to that seat), are not
    the cards the deck deals there."""
    hand_no = finished_hand(client, fake_backend, table)
    history = client.get(hand_url(table, hand_no, "/history"), headers=table["auditor"]).json
    dealt = next(e for e in history["events"] if e["type"] == "CardsDealt")
    cards, openings = dealt["data"]["cards"], dealt["openings"]
    cards[0], cards[1] = cards[1], cards[0]
    openings["/cards/0"], openings["/cards/1"] = openings["/cards/1"], openings["/cards/0"]
    rechained(history["events"])
    keys, head = fake_backend.config.keys(), history["events"][-1]
    receipt = {**history["receipt"]["receipt"], "head_hash": head["hash"]}
    history["receipt"] = {"receipt": receipt, "signature": keys.sign(receipt)}
    (tmp_path / "resigned.json").write_text(json.dumps(history))
    result = verify(tmp_path / "resigned.json", "--public-key", keys.public_key)
    assert result.returncode == 1, result.stdout
    assert f"FAIL deck: event {dealt['version']}: CardsDealt does not deal the cards" in (
        result.stdout), result.stdout
    assert "ok   receipt" in result.stdout


def seat_2_draws_one_to_the_showdown(client, fake_backend, table, who) -> dict:
    """A hand where seat 2 throws its first card at the draw: its history as ``who`` gets it,
    which the verifier passes."""
    hand_no = start_hand(client, table)
    for seat, body in ((2, {"type": "bet", "amount": 25}), (3, {"type": "call"}),
                       (1, {"type": "call"})):
        assert act(client, table, hand_no, seat, **body).status_code == 201
    held = get(client, table, hand_no, "", table["players"][2])["seats"][1]["cards"]
    for seat, discards in ((2, held[:1]), (3, []), (1, [])):
        assert act(client, table, hand_no, seat, type="draw", cards=discards).status_code == 201
    for seat in (2, 3, 1):
        assert act(client, table, hand_no, seat, type="check").status_code == 201
    fake_backend.run_jobs()
    history = get(client, table, hand_no, "/history", who)
    assert all(c["ok"] for c in fairness.verify_history(history) if not c.get("skipped"))
    return history


def test_a_shown_hand_opens_what_the_draw_held_and_nothing_that_tells_what_it_drew(
        client, fake_backend, table):
    history = seat_2_draws_one_to_the_showdown(client, fake_backend, table, table["players"][3])
    seat_2 = [e for e in history["events"] if e["data"].get("seat") == 2 and "openings" in e
              and e["type"] in ("CardsDealt", "CardsDrawn")]
    assert [(e["type"], set(e["openings"])) for e in seat_2] == [
        ("CardsDealt", set()), ("CardsDrawn", {f"/held/{i}" for i in range(5)})]
    shown = next(e for e in history["events"] if e["type"] == "ShowdownEvaluated")
    hand = next(h for h in shown["data"]["hands"] if h["seat"] == 2)
    assert readable(seat_2[1], "held") == sorted(hand["cards"])


def test_a_draw_that_commits_to_a_card_the_seat_threw_away_fails_the_verifier(
        client, fake_backend, table):
    """An operator who rewrites seat 2's hand after the draw, and its showdown to match, to
    hold the card it threw away: the hand committed to again is not the one the cards dealt
    and drawn leave it."""
    history = seat_2_draws_one_to_the_showdown(client, fake_backend, table, table["auditor"])
    drawn = next(e for e in history["events"] if e["type"] == "CardsDrawn")
    thrown, dropped = drawn["openings"]["/discarded/0"]["value"], readable(drawn, "held")[0]
    held = sorted(readable(drawn, "held")[1:] + [thrown])
    for index, card in enumerate(held):
        salt = drawn["openings"][f"/held/{index}"]["salt"]
        drawn["openings"][f"/held/{index}"] = {"value": card, "salt": salt}
        drawn["data"]["held"][index] = {"commitment": fairness.commit(card, salt)}
    shown = next(e for e in history["events"] if e["type"] == "ShowdownEvaluated")
    hand = next(h for h in shown["data"]["hands"] if h["seat"] == 2)
    hand["cards"][hand["cards"].index(dropped)] = thrown
    rechained(history["events"])
    checks = {c["name"]: c for c in fairness.verify_history(history)}
    assert checks["commitments"]["ok"] and not checks["shown_hands"]["ok"]
    assert f"event {drawn['version']}: CardsDrawn's held is not" in checks["shown_hands"]["detail"]


def test_a_draw_that_receives_fewer_cards_than_it_throws_fails_and_crashes_nothing(
        client, fake_backend, table):
    history = seat_2_draws_one_to_the_showdown(client, fake_backend, table, table["auditor"])
    drawn = next(e for e in history["events"] if e["type"] == "CardsDrawn")
    drawn["data"]["received"], drawn["openings"] = [], {
        p: o for p, o in drawn["openings"].items() if not p.startswith("/received/")}
    rechained(history["events"])
    checks = {c["name"]: c for c in fairness.verify_history(history)}
    assert not checks["deck"]["ok"] and not checks["rules"]["ok"], checks
    assert "throws 1 cards and receives 0" in checks["rules"]["detail"]


def test_options_no_engine_would_take_fail_the_rules_check_without_a_traceback(
        client, fake_backend, table):
    history = seat_2_draws_one_to_the_showdown(client, fake_backend, table, table["players"][1])
    history["events"][0]["data"]["options"]["bet_unit"] = 0
    rechained(history["events"])
    checks = {c["name"]: c for c in fairness.verify_history(history)}
    assert not checks["rules"]["ok"] and "ZeroDivisionError" in checks["rules"]["detail"]


def test_a_shown_card_the_seat_threw_away_or_a_deck_left_unopened_fails_the_verifier(
        client, fake_backend, table):
    """A rewritten showdown in which seat 2 shows a card it discarded at the draw is not
    the hand the opened commitments leave it holding; and an auditor's history that
    reveals the server seed but not the deck fails the deck, not skips it."""
    history = seat_2_draws_one_to_the_showdown(client, fake_backend, table, table["auditor"])
    drawn = next(e for e in history["events"] if e["type"] == "CardsDrawn")
    thrown = drawn["openings"]["/discarded/0"]["value"]
    shown = next(e for e in history["events"] if e["type"] == "ShowdownEvaluated")
    hand = next(h for h in shown["data"]["hands"] if h["seat"] == 2)
    hand["cards"][0] = thrown
    del history["events"][0]["openings"]["/deck"]
    rechained(history["events"])
    checks = {c["name"]: c for c in fairness.verify_history(history)}
    assert not checks["shown_hands"]["ok"] and thrown in checks["shown_hands"]["detail"]
    assert not checks["deck"]["ok"] and "deck is not opened" in checks["deck"]["detail"]


@pytest.mark.parametrize("text", ["{}", '{"events": []}'])
def test_a_history_without_events_is_not_verified(tmp_path, text):
    (tmp_path / "empty.json").write_text(text)
    result = verify(tmp_path / "empty.json")
    assert result.returncode == 1 and "the history holds no events" in result.stdout


@pytest.mark.parametrize("text", ["[]", '{"events": "x"}', '{"events": [1, 2]}'])
def test_a_file_that_is_no_history_cannot_be_read(tmp_path, text):
    (tmp_path / "odd.json").write_text(text)
    result = verify(tmp_path / "odd.json")
    assert result.returncode == 2 and "is not a history" in result.stderr, result.stderr
    assert "Error" not in result.stdout + result.stderr


def test_a_public_key_that_is_no_key_is_named_so(tmp_path):
    (tmp_path / "empty.json").write_text("{}")
    result = verify(tmp_path / "empty.json", "--public-key", "nothex")
    assert result.returncode == 2, result.stdout
    assert "--public-key nothex is not an Ed25519 public key" in result.stderr


def test_a_file_nested_past_what_json_reads_is_unreadable_not_a_traceback(tmp_path):
    (tmp_path / "deep.json").write_text("[" * 100000 + "]" * 100000)
    result = verify(tmp_path / "deep.json")
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    assert "cannot read" in result.stderr


def test_what_a_file_holds_is_printed_escaped(client, fake_backend, table, tmp_path):
    hand_no = finished_hand(client, fake_backend, table)
    history = client.get(hand_url(table, hand_no, "/history"), headers=table["players"][2]).json
    shown = next(e for e in history["events"] if e["type"] == "ShowdownEvaluated")
    shown["data"]["hands"][0]["cards"][0] = "\ud800\x1b[31m"
    (tmp_path / "odd.json").write_text(json.dumps(history))  # as escapes: valid JSON
    result = verify(tmp_path / "odd.json")
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    assert "\\ud800\\x1b" in result.stdout and "\x1b" not in result.stdout


def test_a_copy_with_one_card_or_one_amount_changed_fails_naming_the_event(
        client, fake_backend, table, tmp_path):
    hand_no = finished_hand(client, fake_backend, table)
    history = client.get(hand_url(table, hand_no, "/history"), headers=table["players"][2]).json
    dealt = next(e for e in history["events"] if e["type"] == "CardsDealt" and e["openings"])
    pointer = next(iter(dealt["openings"]))
    card = dealt["openings"][pointer]["value"]
    dealt["openings"][pointer]["value"] = next(c for c in ALL_CARDS if c != card)
    (tmp_path / "card.json").write_text(json.dumps(history))
    result = verify(tmp_path / "card.json")
    assert result.returncode == 1
    assert f"event {dealt['version']}: opening {pointer} does not match" in result.stdout
    history = client.get(hand_url(table, hand_no, "/history"), headers=table["players"][2]).json
    bet = next(e for e in history["events"] if e["type"] == "BetPlaced")
    bet["data"]["to"] += 25
    (tmp_path / "amount.json").write_text(json.dumps(history))
    result = verify(tmp_path / "amount.json")
    assert result.returncode == 1
    assert f"event {bet['version']}: hash does not match its content" in result.stdout


# --- the audit catches every kind of tampering, under a named check ------------------


def _check(audit, name):
    return next(c for c in audit["checks"] if c["name"] == name)


def _failed(client, table, hand_no) -> set[str]:
    audit = get(client, table, hand_no, "/audit", table["auditor"])
    assert audit["valid"] == all(c["ok"] for c in audit["checks"])
    return {c["name"] for c in audit["checks"] if not c["ok"]}


def _rewrite(redis, stream, change, rechain=False):
    """Rewrite ``stream`` as ``change(entries)`` says, optionally recomputing the chain."""
    entries = [{k.decode(): v.decode() for k, v in fields.items()}
               for _, fields in redis.xrange(stream)]
    entries = change(entries)
    if rechain:
        previous = fairness.GENESIS_HASH
        for version, entry in enumerate(entries, start=1):
            entry["version"], entry["prev_hash"] = str(version), previous
            envelope = {**entry, "data": json.loads(entry["data"]),
                        "version": version, "command_id": entry.get("command_id")}
            entry["hash"] = previous = fairness.envelope_hash(envelope)
    redis.delete(stream)
    for position, entry in enumerate(entries, start=1):
        redis.xadd(stream, entry, id=f"0-{position}")


def _edit_bet(entries):
    for entry in entries:
        if entry["type"] == "BetPlaced":
            entry["data"] = entry["data"].replace('"to":25', '"to":50')
    return entries


TAMPERING = {
    "an edit keeping the hashes": (lambda e: _edit_bet(e), False, {"hash_chain"}),
    "an edit of the actor with the chain recomputed": (
        lambda e: [dict(x, actor="seat:9") if x["type"] == "BetPlaced" else x for x in e], True,
        {"receipt"}),
    "truncation with the chain intact": (lambda e: e[:-3], False, {"receipt", "completeness"}),
    "deletion in the middle": (lambda e: e[:5] + e[6:], False, {"hash_chain"}),
    "reordering": (lambda e: e[:5] + [e[6], e[5]] + e[7:], False, {"hash_chain"}),
}


@pytest.mark.parametrize("kind", sorted(TAMPERING))
def test_the_audit_catches_tampering_with_the_hand(client, fake_backend, table, kind):
    change, rechain, must_fail = TAMPERING[kind]
    hand_no = finished_hand(client, fake_backend, table)
    assert _failed(client, table, hand_no) == set()
    get(client, table, hand_no, "", table["auditor"])  # the API has the hand cached now
    _rewrite(fake_backend.redis, hand_stream(table["id"], hand_no), change, rechain)
    failed = _failed(client, table, hand_no)
    assert must_fail <= failed, failed
    if kind == "truncation with the chain intact":  # the cache notices the shorter stream
        assert get(client, table, hand_no, "", table["auditor"])["status"] != "ended"


GARBLED = {"data": ("data", "{not json"), "version": ("version", "x"),
           "NaN": ("data", '{"amount":NaN,"seat":2}'),  # Python's reader would take it
           "+version": ("version", "+4")}  # and int() this


def _garble(kind):
    def change(entries):
        field, value = GARBLED[kind]
        entries[3][field] = value
        return entries
    return change


@pytest.mark.parametrize("where", ["hand data", "hand version", "hand NaN", "hand +version",
                                   "table data", "receipt"])
def test_a_record_that_does_not_decode_fails_the_audit(client, fake_backend, table, where):
    """Something other than the service wrote it: the audit says so rather than failing."""
    hand_no = finished_hand(client, fake_backend, table)
    redis, table_id = fake_backend.redis, table["id"]
    if where == "receipt":
        redis.set(receipt_key(table_id, hand_no), b"\x00 not json")
    else:
        stream = (hand_stream(table_id, hand_no) if where.startswith("hand")
                  else table_stream(table_id))
        _rewrite(redis, stream, _garble(where.split()[1]))
    audit = get(client, table, hand_no, "/audit", table["auditor"])
    assert audit["valid"] is False and audit["status"] == "ended"
    [check] = audit["checks"]
    assert check["name"] == "stored_records" and not check["ok"]
    assert (receipt_key(table_id, hand_no) if where == "receipt" else ":events") in check["detail"]


@pytest.mark.parametrize("where", ["hand", "table", "receipt"])
def test_a_key_of_another_type_fails_the_audit_and_other_reads_say_so(
        client, fake_backend, table, where):
    """Only a direct write to Redis can leave one (Redis answers WRONGTYPE). The audit names
    the key; without its table nobody can be recognised, so every read answers the code of
    an unreadable record, as the other reads of the hand do."""
    hand_no = finished_hand(client, fake_backend, table)
    key = {"hand": hand_stream, "table": lambda t, _: table_stream(t),
           "receipt": receipt_key}[where](table["id"], hand_no)
    fake_backend.redis.delete(key)
    fake_backend.redis.hset(key, "not", "this")
    if where == "table":
        response = client.get(hand_url(table, hand_no, "/audit"), headers=table["auditor"])
        assert response.status_code == 500, response.json
        assert response.json["code"] == "stored_record_unreadable"
        return
    audit = get(client, table, hand_no, "/audit", table["auditor"])
    assert audit["valid"] is False and audit["status"] == "ended"
    [check] = audit["checks"]
    assert check["name"] == "stored_records" and check["detail"].startswith(
        f"a stored record does not decode: {key}: WRONGTYPE"), check
    if where == "hand":
        response = client.get(hand_url(table, hand_no, "/events"), headers=table["auditor"])
        assert response.status_code == 500, response.json
        assert response.json["code"] == "stored_record_unreadable"


@pytest.mark.parametrize("route", ["/events", "/history"])
def test_other_reads_of_a_record_that_does_not_decode_are_a_500_that_says_so(
        client, fake_backend, table, route):
    hand_no = finished_hand(client, fake_backend, table)
    _rewrite(fake_backend.redis, hand_stream(table["id"], hand_no), _garble("data"))
    response = client.get(f"/v1/tables/{table['id']}/hands/{hand_no}{route}",
                          headers=table["auditor"])
    assert response.status_code == 500 and response.mimetype == "application/problem+json"
    assert response.json["code"] == "stored_record_unreadable"


def _first(kind, change):
    """For ``_rewrite``: the first entry of type ``kind`` changed by ``change``."""
    def rewrite(entries):
        change(next(e for e in entries if e["type"] == kind))
        return entries
    return rewrite


def _data(entry, **fields):
    entry["data"] = json.dumps({**json.loads(entry["data"]), **fields})


NOT_REPLAYING = {  # records that decode, but are no event the rules apply
    "an unknown type": ("BetPlaced", lambda e: e.update(type="BetMade")),
    "a field missing": ("BetPlaced", lambda e: e.update(data=json.dumps(
        {k: v for k, v in json.loads(e["data"]).items() if k != "to"}))),
    "an amount in a string": ("BetPlaced", lambda e: _data(e, to="50")),
    "seats not a list": ("HandStarted", lambda e: _data(e, seats=7)),
    "a game nobody plays": ("HandStarted", lambda e: _data(e, game="bogus")),
    "cards of another shape": ("CardsDealt", lambda e: _data(e, cards=["As", "Ks"])),
    "shares not an object": ("PotAwarded", lambda e: _data(e, shares=[75])),
    "its openings gone": ("CardsDealt", lambda e: e.pop("openings")),
}
ODD = {  # records of the wrong shape that some reads pass on as they are
    "client seeds not an object": ("HandStarted", lambda e: _data(e, client_seeds=[])),
    "shown hands not a list of hands": ("ShowdownEvaluated", lambda e: _data(e, hands=[1])),
    "final stacks not an object": ("HandEnded", lambda e: _data(e, stacks=[1, 2])),
}
READS = ["", "?at=LAST", "/events", "/history", "/history?format=phh"]


@pytest.mark.parametrize("kind", sorted(NOT_REPLAYING) + sorted(ODD))
def test_a_record_that_decodes_but_does_not_replay_is_a_500_that_says_so(
        client, fake_backend, table, kind):
    """Only a direct write to Redis leaves one. Every read of the hand answers the code of
    an unreadable record (or, for some records of the wrong shape, passes them on), never
    an internal error, and the audit names what fails."""
    hand_no = finished_hand(client, fake_backend, table)
    last = get(client, table, hand_no, "", table["auditor"])["version"]
    _rewrite(fake_backend.redis, hand_stream(table["id"], hand_no),
             _first(*{**NOT_REPLAYING, **ODD}[kind]), rechain=True)
    client = create_app(backend=fake_backend).test_client()  # a process with nothing cached
    for suffix in READS:
        response = client.get(hand_url(table, hand_no, suffix.replace("LAST", str(last))),
                              headers=table["auditor"])
        if kind in ODD and response.status_code == 200:
            continue
        assert response.status_code == 500, (suffix, response.json)
        assert response.json["code"] == "stored_record_unreadable", (suffix, response.json)
    assert _failed(client, table, hand_no) - {"hash_chain", "receipt"}, kind


def test_a_stream_whose_hand_cannot_be_shown_closes_without_a_traceback(
        client, fake_backend, table, caplog):
    """Its headers are sent before the first view is made: the stream ends, and the log
    says why."""
    hand_no = finished_hand(client, fake_backend, table)
    _rewrite(fake_backend.redis, hand_stream(table["id"], hand_no),
             _first(*ODD["shown hands not a list of hands"]), rechain=True)
    response = client.get(hand_url(table, hand_no, "/events/stream"), buffered=False,
                          headers=table["auditor"])
    assert response.status_code == 200
    assert "".join(chunk.decode() for chunk in response.response) == ": open\n\n"
    assert "a stored record does not decode" in caplog.text


@pytest.mark.parametrize("kind", ["an unknown type", "a field missing"])
def test_a_table_record_that_does_not_replay_is_a_500_that_says_so(
        client, fake_backend, table, kind):
    hand_no = finished_hand(client, fake_backend, table)

    def change(entry):
        if kind == "an unknown type":
            entry.update(type="PlayerSat")
        else:
            entry.update(data=json.dumps({k: v for k, v in json.loads(entry["data"]).items()
                                          if k != "seat"}))
    _rewrite(fake_backend.redis, table_stream(table["id"]), _first("PlayerSeated", change),
             rechain=True)
    for url in (f"/v1/tables/{table['id']}", hand_url(table, hand_no, "/audit")):
        response = client.get(url, headers=table["auditor"])
        assert response.status_code == 500, (url, response.json)
        assert response.json["code"] == "stored_record_unreadable", (url, response.json)


@pytest.mark.parametrize("gone", [{"HandOpened"}, {"HandOpened", "HandSettled"}])
def test_a_hand_whose_opening_is_gone_from_the_table_is_audited_not_lost(
        client, fake_backend, table, gone):
    """The table's events, rechained without the hand's ``HandOpened``, no longer count the
    hand; its own events are still there, and the audit says what is wrong with them."""
    hand_no = finished_hand(client, fake_backend, table)
    _rewrite(fake_backend.redis, table_stream(table["id"]),
             lambda entries: [e for e in entries if e["type"] not in gone], rechain=True)
    audit = get(client, table, hand_no, "/audit", table["auditor"])
    assert audit["valid"] is False and audit["status"] == "ended"
    assert _check(audit, "table_start")["detail"] == "the table's events never open hand 1"
    missing = client.get(hand_url(table, hand_no + 1, "/audit"), headers=table["auditor"])
    assert missing.status_code == 404 and missing.json["code"] == "hand_not_found"


def test_a_later_hand_of_a_table_that_lost_an_opening_is_unreadable_not_a_500(
        client, fake_backend, table):
    finished_hand(client, fake_backend, table)
    later = finished_hand(client, fake_backend, table)

    def first_opening_gone(entries):
        first = next(i for i, e in enumerate(entries) if e["type"] == "HandOpened")
        return entries[:first] + entries[first + 1:]
    _rewrite(fake_backend.redis, table_stream(table["id"]), first_opening_gone, rechain=True)
    for suffix in READS:
        response = client.get(hand_url(table, later, suffix.replace("LAST", "2")),
                              headers=table["auditor"])
        assert response.status_code in (404, 500), (suffix, response.json)
        assert response.json["code"] in ("hand_not_found", "stored_record_unreadable"), suffix


@pytest.mark.parametrize("stored", [[1], "x", {}, {"receipt": [], "signature": "00"}])
def test_a_stored_receipt_that_is_none_is_unreadable_not_passed_on(
        client, fake_backend, table, stored):
    hand_no = finished_hand(client, fake_backend, table)
    fake_backend.redis.set(receipt_key(table["id"], hand_no), json.dumps(stored))
    for suffix in ("/receipt", "/history", "/history?format=phh"):
        response = client.get(hand_url(table, hand_no, suffix), headers=table["auditor"])
        assert response.status_code == 500, (suffix, response.json)
        assert response.json["code"] == "stored_record_unreadable", suffix


@pytest.mark.parametrize("hand_no", ["2", None, [2]])
def test_a_hand_number_of_another_kind_in_the_table_is_unreadable_not_a_500(
        client, fake_backend, table, hand_no):
    finished_hand(client, fake_backend, table)
    finished_hand(client, fake_backend, table)

    def renumbered(entries):
        last = [e for e in entries if e["type"] == "HandOpened"][-1]
        _data(last, hand_no=hand_no)
        return entries
    _rewrite(fake_backend.redis, table_stream(table["id"]), renumbered, rechain=True)
    for hand in (1, 2):
        for suffix in ("", "/events", "/audit"):
            response = client.get(hand_url(table, hand, suffix), headers=table["auditor"])
            if suffix == "/audit" and response.status_code == 200:  # it names what fails
                assert response.json["valid"] is False
                continue
            assert response.status_code == 500, (hand, suffix, response.json)
            assert response.json["code"] == "stored_record_unreadable", (hand, suffix)


def test_the_receipt_signs_the_table_so_a_rechained_seat_fails_the_audit(
        client, fake_backend, table):
    """Two seats' token hashes swapped and the table's chain made again over them: the
    chain holds, but the receipt signed the table's settlement as it was."""
    hand_no = finished_hand(client, fake_backend, table)
    assert _check(get(client, table, hand_no, "/audit", table["auditor"]), "table_signed")[
        "ok"]

    def swapped(entries):
        seated = [e for e in entries if e["type"] == "PlayerSeated"][:2]
        data = [json.loads(e["data"]) for e in seated]
        data[0]["token_hash"], data[1]["token_hash"] = data[1]["token_hash"], data[0]["token_hash"]
        for entry, changed in zip(seated, data):
            entry["data"] = fairness.canonical_json(changed)
        return entries
    _rewrite(fake_backend.redis, table_stream(table["id"]), swapped, rechain=True)
    audit = get(client, table, hand_no, "/audit", table["auditor"])
    assert {c["name"] for c in audit["checks"] if not c["ok"]} == {"table_signed"}
    assert "changed since" in _check(audit, "table_signed")["detail"]


@pytest.mark.parametrize("stored", [{}, {"receipt": 5, "signature": ""}, [1]])
def test_a_receipt_of_another_shape_fails_the_audit_without_a_500(
        client, fake_backend, table, stored):
    hand_no = finished_hand(client, fake_backend, table)
    fake_backend.redis.set(receipt_key(table["id"], hand_no), json.dumps(stored))
    audit = get(client, table, hand_no, "/audit", table["auditor"])
    assert not _check(audit, "receipt")["ok"] and _check(audit, "table_signed").get("skipped")


def test_a_receipt_signed_before_it_named_the_table_still_audits(
        client, fake_backend, table):
    hand_no = finished_hand(client, fake_backend, table)
    key = receipt_key(table["id"], hand_no)
    signed = json.loads(fake_backend.redis.get(key))
    old = {k: v for k, v in signed["receipt"].items()
           if k not in ("table_version", "table_head_hash")}
    keys = client.application.extensions["cardroom"].keys
    fake_backend.redis.set(key, fairness.canonical_json(
        {"receipt": old, "signature": keys.sign(old)}))
    audit = get(client, table, hand_no, "/audit", table["auditor"])
    assert audit["valid"], [c for c in audit["checks"] if not c["ok"]]
    assert _check(audit, "table_signed").get("skipped")


def test_the_audit_catches_an_edited_hand_settled_and_the_api_serves_the_edit(
        client, fake_backend, table):
    hand_no = finished_hand(client, fake_backend, table)
    assert _table(client, table)["seats"][0]["stack"] != 5000

    def richer(entries):
        for entry in entries:
            if entry["type"] == "HandSettled":
                entry["data"] = json.dumps({**json.loads(entry["data"]),
                                            "stacks": {"1": 5000, "2": 0, "3": 0}})
        return entries
    _rewrite(fake_backend.redis, table_stream(table["id"]), richer)
    assert _failed(client, table, hand_no) == {"table_chain", "table_settlement"}
    _rewrite(fake_backend.redis, table_stream(table["id"]), lambda e: e, rechain=True)
    assert _failed(client, table, hand_no) == {"table_settlement", "table_signed"}
    assert _table(client, table)["seats"][0]["stack"] == 5000  # a new head: no stale cache


REWRITTEN = {  # the data of one event in other bytes; whether its hash is made over them
    "the same value in other bytes, the hash kept": (lambda text: json.dumps(json.loads(text)),
                                                     False, True),
    "other bytes, hashed over them": (lambda text: json.dumps(json.loads(text)), True, False),
    "a float as orjson writes it, hashed over it": (  # 0.00001, where canonical JSON has 1e-05
        lambda text: orjson.dumps({**json.loads(text), "zz": 1e-05},
                                  option=orjson.OPT_SORT_KEYS).decode(), True, False),
    "a float in canonical JSON, hashed over it": (
        lambda text: fairness.canonical_json({**json.loads(text), "zz": 1e-05}), True, True),
}


@pytest.mark.parametrize("kind", sorted(REWRITTEN))
def test_the_audits_chain_verdict_is_the_verifiers_whatever_the_stored_bytes(
        client, fake_backend, table, kind):
    """The audit hashes a chain over the data as stored only where that is the canonical
    JSON the verifier writes: a stored record in other bytes gets the verifier's verdict."""
    rewrite, rehash, chained = REWRITTEN[kind]
    hand_no = start_hand(client, table)  # in progress: no receipt to catch the rewrite
    stream = hand_stream(table["id"], hand_no)
    entries = [{k.decode(): v.decode() for k, v in fields.items()}
               for _, fields in fake_backend.redis.xrange(stream)]
    entries[1]["data"] = rewrite(entries[1]["data"])
    previous = entries[0]["hash"]
    for version, entry in enumerate(entries[1:], start=2) if rehash else ():
        entry["prev_hash"] = previous
        envelope = {**entry, "version": version, "command_id": entry.get("command_id")}
        entry["hash"] = previous = fairness.envelope_hash(envelope, entry["data"])
    fake_backend.redis.delete(stream)
    for version, entry in enumerate(entries, start=1):
        fake_backend.redis.xadd(stream, entry, id=f"0-{version}")
    history = get(client, table, hand_no, "/history", table["auditor"])
    (verified,) = [c["ok"] for c in fairness.verify_history(history) if c["name"] == "hash_chain"]
    assert verified is chained
    assert ("hash_chain" not in _failed(client, table, hand_no)) is chained


def test_orjson_with_sorted_keys_writes_canonical_json_for_a_value_without_floats():
    """What ``service.jsonio.canonical_by_orjson`` relies on: every character, and values."""
    every_character = "".join(map(chr, [*range(0xD800), *range(0xE000, 0x110000)]))
    assert orjson.dumps(every_character).decode() == fairness.canonical_json(every_character)
    assert orjson.dumps(1e-05).decode() != fairness.canonical_json(1e-05)  # floats may differ


_NO_FLOATS = st.recursive(st.none() | st.booleans() | st.integers(-2**63, 2**64 - 1) | st.text(),
                          lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner),
                          max_leaves=12)


@given(_NO_FLOATS)
def test_orjson_with_sorted_keys_writes_canonical_json_of_any_value_without_floats(value):
    assert orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode() == fairness.canonical_json(
        value)


_NUMBERS_IN_TEXT = st.text() | st.sampled_from([":1.5", ",-20e3", "[7E", "12:30.25", "a:-"])
_ANY_JSON = st.recursive(st.none() | st.booleans() | st.integers(-2**63, 2**64 - 1)
                         | st.floats(allow_nan=False, allow_infinity=False) | _NUMBERS_IN_TEXT,
                         lambda inner: st.lists(inner) | st.dictionaries(_NUMBERS_IN_TEXT, inner),
                         max_leaves=12)


@given(st.dictionaries(_NUMBERS_IN_TEXT, _ANY_JSON))
def test_the_audit_hashes_the_data_as_stored_only_where_it_is_canonical_json(data):
    for stored in (orjson.dumps(data, option=orjson.OPT_SORT_KEYS).decode(),
                   fairness.canonical_json(data)):
        envelope = Envelope(type="BetPlaced", data=json.loads(stored), version=1, event_id="e",
                            occurred_at="t", actor="a", command_id=None, prev_hash="p", hash="h",
                            data_json=stored)
        assert reads.canonical_as_stored(envelope) in (None, fairness.canonical_json(data))


@given(_ANY_JSON | st.dictionaries(_NUMBERS_IN_TEXT, _ANY_JSON | st.integers())
       | st.dictionaries(st.integers(), st.integers()))
def test_the_service_writes_canonical_json_as_the_published_definition(value):
    assert jsonio.canonical(value) == fairness.canonical_json(value)


@given(st.binary() | _NUMBERS_IN_TEXT.map(str.encode))
def test_a_float_is_sought_as_a_value_of_digits_and_a_fraction_or_an_exponent(text):
    found = jsonio._FLOAT.search(text.translate(jsonio._CLASSES))
    assert bool(found) == bool(re.search(rb"[:,\[]-?[0-9]+[.eE]", text))


def test_during_a_hand_the_audit_says_so_and_checks_what_it_can(client, table):
    hand_no = start_hand(client, table)
    act(client, table, hand_no, 2, type="bet", amount=25)
    audit = get(client, table, hand_no, "/audit", table["auditor"])
    assert audit["status"] == "in_progress" and audit["valid"] and "in progress" in audit["note"]
    assert [c["name"] for c in audit["checks"]] == [
        "hash_chain", "commitments", "shown_hands", "table_chain", "completeness", "table_start"]


# --- idempotency keys ---------------------------------------------------------------


def test_a_join_key_reused_by_another_client_yields_no_token(client, fake_backend, table):
    url = f"/v1/tables/{table['id']}/players"
    key = {"Idempotency-Key": "join-once"}
    first = client.post(url, json={"name": "dee", "buy_in": 500}, headers=key)
    assert first.status_code == 201
    retry = client.post(url, json={"name": "dee", "buy_in": 500}, headers=key)
    assert retry.json == first.json  # the same token, derived again, never stored
    thief = client.post(url, json={"name": "eve", "buy_in": 500}, headers=key)
    assert thief.status_code == 422 and thief.json["code"] == "idempotency_key_reused"
    assert "token" not in thief.json and first.json["token"] not in thief.get_data(as_text=True)
    token = first.json["token"].encode()
    assert not any(token in _dump(fake_backend.redis, k) for k in fake_backend.redis.keys("*"))


def test_an_action_key_reused_for_another_action_is_refused(client, table):
    hand_no = start_hand(client, table)
    key = {"Idempotency-Key": "move-1"}
    url = hand_url(table, hand_no, "/actions")
    first = client.post(url, json={"type": "bet", "amount": 25},
                        headers=table["players"][2] | key)
    again = client.post(url, json={"type": "bet", "amount": 25},
                        headers=table["players"][2] | key)
    assert first.status_code == again.status_code == 201 and again.json == first.json
    other = client.post(url, json={"type": "check"}, headers=table["players"][2] | key)
    assert other.status_code == 422 and other.json["code"] == "idempotency_key_reused"


def test_the_published_deck_algorithm_reimplemented_from_its_text_gives_the_same_deck():
    """What GET /v1/fairness says is enough to re-implement the deck, byte for byte."""
    server_seed, client_seeds, hand_no = "7f" * 32, {"1": "ann", "3": "ünï"}, 12
    mixed = json.dumps({"client_seeds": client_seeds, "hand_no": hand_no}, sort_keys=True,
                       separators=(",", ":"), ensure_ascii=False).encode()
    deck_seed = hashlib.sha256(bytes.fromhex(server_seed) + mixed).digest()
    stream = b"".join(hashlib.sha256(deck_seed + i.to_bytes(8, "big")).digest()
                      for i in range(64))

    def draws():
        for offset in range(0, len(stream), 8):
            yield int.from_bytes(stream[offset:offset + 8], "big")
    source = draws()

    def draw(n):
        while (x := next(source)) >= 2**64 - 2**64 % n:
            pass
        return x % n
    deck = [rank + suit for rank in "23456789TJQKA" for suit in "cdhs"]
    for i in range(51, 0, -1):
        j = draw(i + 1)
        deck[i], deck[j] = deck[j], deck[i]
    assert deck == fairness.deck_order(server_seed, client_seeds, hand_no)


# --- a hand at any event (issue 8's replay) --------------------------------------


def test_a_hand_read_at_an_event_shows_what_the_reader_could_see_then(client, fake_backend,
                                                                      table):
    hand_no = start_hand(client, table)
    dealt = get(client, table, hand_no, "", table["players"][2])
    act(client, table, hand_no, 2, type="bet", amount=25)
    at = dealt["version"]
    then = get(client, table, hand_no, f"?at={at}", table["players"][2])
    assert then["version"] == at and then["current_bet"] == 0 and then["to_act"] == 2
    assert then["seats"][1]["cards"] == dealt["seats"][1]["cards"]
    assert then["seats"][0]["cards"] == [None] * 5  # still seat 1's secret
    early = get(client, table, hand_no, "?at=1", table["auditor"])
    assert early["seats"][0]["cards"] == [] and early["server_seed"] is None
    for seat in (3, 1):
        act(client, table, hand_no, seat, type="fold")
    ended = get(client, table, hand_no, f"?at={at}", table["auditor"])  # the hand has ended
    assert None not in ended["seats"][0]["cards"] and ended["server_seed"]
    player = get(client, table, hand_no, f"?at={at}", table["players"][2])
    assert player["seats"][0]["cards"] == [None] * 5 and player["server_seed"] is None
    last = get(client, table, hand_no, "", table["players"][2])["version"]
    for wrong in (0, last + 1):
        response = client.get(hand_url(table, hand_no, f"?at={wrong}"), headers=table["auditor"])
        assert response.status_code == 422
        assert response.json["code"] in ("version_out_of_range", "invalid_query")
    response = client.get(hand_url(table, hand_no, f"?at={last + 1}"), headers=table["auditor"])
    assert response.json["code"] == "version_out_of_range"


def test_the_history_gives_the_state_after_every_event_as_the_hand_read_at_it(
        client, fake_backend, table):
    hand_no = finished_hand(client, fake_backend, table)
    for who in (table["players"][2], table["auditor"]):
        history = get(client, table, hand_no, "/history", who)
        for event in history["events"][::3] + history["events"][-1:]:
            at = get(client, table, hand_no, f"?at={event['version']}", who)
            assert event["state"] == at and at["version"] == event["version"]
        assert history["events"][-1]["state"]["status"] == "ended"
        assert all(c["ok"] for c in fairness.verify_history(history))


def test_sealing_and_unsealing_follow_escaped_json_pointers():
    data = {"seats": {"a/b": [{"c~d": "Ah"}, "Kd"]}, "public": 3}
    pointers = ["/seats/a~1b/0/c~0d", "/seats/a~1b/1"]
    salts = iter(["00" * 16, "11" * 16])
    sealed, openings = fairness.seal(data, pointers, lambda: next(salts))
    assert sealed["seats"]["a/b"][0]["c~d"] == {
        "commitment": fairness.commit("Ah", "00" * 16)}
    assert set(openings) == set(pointers) and "Ah" not in json.dumps(sealed)
    assert fairness.unseal(sealed, openings) == data


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20)


@given(JSON_VALUES)
def test_canonical_json_is_the_published_definition(value):
    published = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert fairness.canonical_json(value) == published


@pytest.mark.parametrize("route", ["/events", "/history", "/audit"])
def test_a_hand_whose_stored_openings_were_removed_is_not_an_internal_error(
        client, fake_backend, table, route):
    """Only a direct write to Redis removes them: the reads say a record does not decode,
    and the audit finds the hand's cards unproven."""
    hand_no = finished_hand(client, fake_backend, table)

    def without_openings(entries):
        return [{k: v for k, v in e.items() if k != "openings"} for e in entries]
    _rewrite(fake_backend.redis, hand_stream(table["id"], hand_no), without_openings)
    response = client.get(hand_url(table, hand_no, route), headers=table["auditor"])
    if route == "/audit":
        assert response.status_code == 200 and response.json["valid"] is False, response.json
    else:
        assert response.status_code == 500, response.json
        assert response.json["code"] == "stored_record_unreadable"


def test_a_deck_opened_without_its_reshuffle_key_fails_the_deck(client, fake_backend, table):
    """The reshuffle key is opened to whom the deck is: an auditor's history whose key's
    opening was dropped (openings are not chained) would let a forged reshuffle pass
    unchecked, so it fails the deck check rather than skip it."""
    hand_no = finished_hand(client, fake_backend, table)
    history = client.get(hand_url(table, hand_no, "/history"), headers=table["auditor"]).json
    assert {c["name"]: c for c in fairness.verify_history(history)}["deck"]["ok"]
    del history["events"][0]["openings"]["/reshuffle_key"]
    deck = {c["name"]: c for c in fairness.verify_history(history)}["deck"]
    assert not deck["ok"] and "the reshuffle_key is not" in deck["detail"], deck


def _dealt(history: dict) -> dict:
    return next(e for e in history["events"] if e["type"] == "CardsDealt")


def _short_salt(history: dict) -> None:
    """A card's commitment made again with a salt of 13 bytes (any length hashes)."""
    dealt = _dealt(history)
    opening = dealt["openings"]["/cards/0"]
    opening["salt"] = opening["salt"][:26]
    dealt["data"]["cards"][0] = {"commitment": fairness.commit(opening["value"],
                                                               opening["salt"])}


@pytest.mark.parametrize("forge, check, reason", [
    (lambda h: _dealt(h)["openings"].pop("/cards/1"), "commitments",
     "the commitment at /cards/1 is not opened"),
    (lambda h: _dealt(h)["openings"].__setitem__("/cards/00", _dealt(h)["openings"]["/cards/0"]),
     "commitments", "opening /cards/00 has no commitment"),
    (_short_salt, "commitments", "opening /cards/0 does not match"),
    (lambda h: _dealt(h)["data"].pop("face_up"), "deck", "face_up is not true or false"),
    (lambda h: h["events"][0]["data"].__setitem__("hand_no", 7), "receipt",
     "the hand started as hand 7"),
    (lambda h: h["events"][0]["data"]["client_seeds"].__setitem__("9", "ground"), "deck",
     "client_seeds are not those of the seats dealt in")])
def test_an_auditors_history_bent_where_the_checks_once_looked_away_fails(
        client, fake_backend, table, forge, check, reason):
    """Each a kind of forgery that once passed, re-chained and re-signed with the service's
    key: a card left unopened beside the revealed seed (a discard so hidden once changed
    the winner), one opened twice under an alias of its pointer or with a short salt, a
    deal's face_up left out (the deal then read a seat at a time), the start's hand number
    or client seeds changed (another deck from the same seed)."""
    hand_no = finished_hand(client, fake_backend, table)
    history = client.get(hand_url(table, hand_no, "/history"), headers=table["auditor"]).json
    assert all(c["ok"] for c in fairness.verify_history(history))
    forge(history)
    rechained(history["events"])
    keys, head = fake_backend.config.keys(), history["events"][-1]
    receipt = {**history["receipt"]["receipt"], "head_hash": head["hash"]}
    history["receipt"] = {"receipt": receipt, "signature": keys.sign(receipt)}
    found = {c["name"]: c for c in fairness.verify_history(history, keys.public_key)}[check]
    assert not found["ok"] and reason in found["detail"], found


def test_at_a_table_that_reveals_to_everyone_an_ended_hand_without_its_seed_fails(
        client, fake_backend):
    table = new_table(client, reveal="everyone")
    hand_no = finished_hand(client, fake_backend, table)
    history = client.get(hand_url(table, hand_no, "/history"), headers=table["players"][1]).json
    assert all(c["ok"] and not c.get("skipped") for c in fairness.verify_history(history))
    del history["server_seed"]
    checks = {c["name"]: c for c in fairness.verify_history(history)}
    assert not checks["deck"]["ok"] and "reveals the server seed to everyone" in (
        checks["deck"]["detail"])


def test_a_deck_the_rules_cannot_deal_from_fails_the_rules_check_without_a_traceback(
        client, fake_backend, table):
    hand_no = finished_hand(client, fake_backend, table)
    history = client.get(hand_url(table, hand_no, "/history"), headers=table["players"][1]).json
    history["events"][0]["data"]["deck"] = {}
    rules = {c["name"]: c for c in fairness.verify_history(history)}["rules"]
    assert not rules["ok"] and rules["detail"] == "event 1: HandStarted's deck is {}, not a list"


@pytest.mark.parametrize("field, value, said", [
    ("seat", "2", "'2', not an integer"), ("seat", True, "True, not an integer"),
    ("seat", 2.0, "2.0, not an integer"), ("to", None, "None, not an integer")])
def test_a_field_of_the_wrong_kind_is_named_by_the_rules_check(client, fake_backend, table,
                                                                field, value, said):
    hand_no = finished_hand(client, fake_backend, table)
    history = client.get(hand_url(table, hand_no, "/history"), headers=table["auditor"]).json
    called = next(e for e in history["events"] if e["type"] == "PlayerCalled")
    called["data"][field] = value
    rules = {c["name"]: c for c in fairness.verify_history(history)}["rules"]
    assert rules["detail"] == f"event {called['version']}: PlayerCalled's {field} is {said}"


def test_a_commitment_left_unopened_fails_also_where_the_caller_counts_them_in_the_stored_text(
        client, fake_backend, table):
    """The audit gives the events' stored JSON (``data_json``), whose commitments are
    counted in the text rather than found by walking the data."""
    hand_no = finished_hand(client, fake_backend, table)
    history = client.get(hand_url(table, hand_no, "/history"), headers=table["auditor"]).json
    texts = [fairness.canonical_json(e["data"]) for e in history["events"]]
    assert all(c["ok"] for c in fairness.verify_history(history, None, texts))
    _dealt(history)["openings"].pop("/cards/1")
    found = {c["name"]: c for c in fairness.verify_history(history, None, texts)}
    assert not found["commitments"]["ok"] and "/cards/1 is not opened" in (
        found["commitments"]["detail"])
