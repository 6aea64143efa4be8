"""PHH over HTTP: ``GET .../history?format=phh`` and ``POST /v1/imports/phh``."""

from __future__ import annotations

import random
import tomllib
from pathlib import Path

import pytest
import tomli_w

from domain import fairness, phh
from tests.poker.play import calling_hand, play_out, start
from tests.test_api import act, assert_problem, auth, hand_url, read, start_hand
from tests.test_fairness import verify

DOCUMENT = (Path(__file__).parent / "data" / "phh" / "dwan-ivey-2009.phh").read_text()
IMPORTS = "/v1/imports/phh"


def keys_of(fake_backend) -> set:
    return set(fake_backend.redis.keys("*"))


def test_an_imported_hand_is_stored_settled_and_audited(client):
    imported = client.post(IMPORTS, json={"phh": DOCUMENT})
    assert imported.status_code == 201, imported.json
    body = imported.json
    assert body["stacks"] == {"1": 572100, "2": 1997500, "3": 1109500}
    url = f"/v1/tables/{body['table_id']}/hands/1"
    auditor = auth(body["auditor_token"])
    audit = client.get(url + "/audit", headers=auditor).json
    assert audit["valid"] and all(c["ok"] for c in audit["checks"]), audit
    history = client.get(url + "/history", headers=auditor).json
    started = history["events"][0]
    assert started["data"]["source"]["format"] == "phh"
    assert history["events"][-1]["state"]["status"] == "ended"
    exported = tomllib.loads(client.get(url + "/history?format=phh", headers=auditor).text)
    assert exported["variant"] == "NT" and exported["finishing_stacks"] == [572100, 1997500,
                                                                            1109500]
    assert exported["actions"][:3] == ["d dh p1 Ac2d", "d dh p2 ????", "d dh p3 7h6h"]
    assert exported["_table_id"] == body["table_id"] and exported["_receipt"]["signature"]


def test_the_verifier_calls_an_imported_hand_only_partly_verified(client, tmp_path):
    """Its cards came from a document, not from seeds: offline, nothing shows that its table
    is an import table (the audit's table_start does, online)."""
    body = client.post(IMPORTS, json={"phh": DOCUMENT}).json
    url = f"/v1/tables/{body['table_id']}/hands/1/history"
    (tmp_path / "imported.json").write_bytes(
        client.get(url, headers=auth(body["auditor_token"])).data)
    result = verify(tmp_path / "imported.json", "--public-key",
                    client.get("/v1/fairness").json["public_key"])
    assert result.returncode == 3, result.stdout + result.stderr
    assert "ok   receipt: signed receipt" in result.stdout
    assert "partly verified: the history says the hand was imported" in result.stdout


def test_more_hands_go_to_an_import_table_with_its_admin_token_once_per_key(client):
    first = client.post(IMPORTS, json={"phh": DOCUMENT}).json
    again = {"phh": DOCUMENT, "table_id": first["table_id"]}
    assert_problem(client.post(IMPORTS, json=again), 401, "unauthorized")
    assert_problem(client.post(IMPORTS, json=again, headers=auth(first["auditor_token"])),
                   403, "forbidden")
    admin = {**auth(first["admin_token"]), "Idempotency-Key": "second"}
    second = client.post(IMPORTS, json=again, headers=admin)
    retried = client.post(IMPORTS, json=again, headers=admin)
    assert second.status_code == retried.status_code == 201
    assert second.json["hand_no"] == retried.json["hand_no"] == 2
    assert retried.data == second.data  # the same bytes, keys in the same order
    table_read = client.get(f"/v1/tables/{first['table_id']}", headers=admin).json
    assert table_read["last_hand"] == 2
    assert_problem(client.post(f"/v1/tables/{first['table_id']}/players",
                               json={"name": "eve", "buy_in": 10}), 422, "import_table")


def test_a_retried_import_to_a_new_table_makes_one_table(client, fake_backend):
    key = {"Idempotency-Key": "import-1"}
    first = client.post(IMPORTS, json={"phh": DOCUMENT}, headers=key)
    again = client.post(IMPORTS, json={"phh": DOCUMENT}, headers=key)
    assert (first.status_code, again.status_code) == (201, 201), again.json
    assert "Idempotent-Replayed" not in first.headers
    assert again.headers["Idempotent-Replayed"] == "true" and again.data == first.data
    assert len(fake_backend.redis.keys("t:{*}:events")) == 1  # one table
    audit = client.get(f"/v1/tables/{again.json['table_id']}/hands/1/audit",
                       headers=auth(again.json["auditor_token"]))
    assert audit.json["valid"], audit.json
    other = client.post(IMPORTS, json={"phh": DOCUMENT.replace("Dwan", "Dwan2")}, headers=key)
    assert_problem(other, 422, "idempotency_key_reused")
    creation = client.post("/v1/tables", json={"game": "five-card-draw"}, headers=key)
    assert_problem(creation, 422, "idempotency_key_reused")
    fresh = client.post(IMPORTS, json={"phh": DOCUMENT}, headers={"Idempotency-Key": "import-2"})
    assert fresh.status_code == 201 and fresh.json["table_id"] != first.json["table_id"]


def test_hands_are_not_imported_at_a_played_table(client, table):
    response = client.post(IMPORTS, json={"phh": DOCUMENT, "table_id": table["id"]},
                           headers=table["admin"])
    assert_problem(response, 422, "not_an_import_table")


def test_a_refused_document_says_where_and_stores_nothing(client, fake_backend):
    before = keys_of(fake_backend)
    illegal = DOCUMENT.replace('"p2 f",', '"p1 f",')
    response = client.post(IMPORTS, json={"phh": illegal})
    assert_problem(response, 422, "phh_rejected")
    assert response.json["action_index"] == 5 and "p2" in response.json["reason"]
    wrong = client.post(IMPORTS, json={"phh": DOCUMENT + "finishing_stacks = [1, 2, 3]\n"})
    assert_problem(wrong, 422, "phh_stacks_mismatch")
    assert wrong.json["replayed"] == [572100, 1997500, 1109500]
    assert_problem(client.post(IMPORTS, json={"phh": "variant = "}), 422, "phh_rejected")
    assert_problem(client.post(IMPORTS, json={"phh": DOCUMENT.replace('"NT"', '"FR"')}),
                   422, "phh_rejected")
    assert_problem(client.post(IMPORTS, json={}), 422, "invalid_request")
    # a value of cardroom's own options no table takes, though the standard fields replace it
    odd = client.post(IMPORTS, json={"phh": DOCUMENT + '[_options]\nstructure = "lol"\n'})
    assert_problem(odd, 422, "phh_rejected")
    assert odd.json["detail"].startswith("the document: _options: option structure")
    assert keys_of(fake_backend) == before


def test_a_document_past_what_cardroom_reads_is_refused_and_stores_nothing(
        client, fake_backend):
    before = keys_of(fake_backend)
    nested = "x = " + "[" * 1000 + "]" * 1000  # past the TOML parser's recursion
    huge_stack = DOCUMENT.replace("[1125600,", "[1e300,")
    huge_bet = DOCUMENT.replace('"p3 cbr 7000"', '"p3 cbr 100000000000000000000000"')
    endless = "9" * 5000  # more digits than Python turns into an integer
    endless_bet = DOCUMENT.replace('"p3 cbr 7000"', f'"p3 cbr {endless}"')
    endless_integer = f"x = {endless}\n" + DOCUMENT
    with_decimals = DOCUMENT.replace("[1125600,", "[1125600.5,")  # rescaled: every amount
    for document, where in ((nested, "nested too deeply"), (huge_stack, "starting_stacks"),
                            (huge_bet, "cbr"), (endless_bet, "cbr 99999"),
                            (endless_integer, "not TOML that cardroom reads"),
                            (with_decimals.replace('"p3 cbr 7000"', '"p3 cbr 1e5000"'), "cbr"),
                            (with_decimals.replace('"p3 cbr 7000"', '"p3 cbr 1e999999"'), "cbr")):
        response = client.post(IMPORTS, json={"phh": document})
        assert_problem(response, 422, "phh_rejected")
        assert where in response.json["reason"]
    assert keys_of(fake_backend) == before


def test_a_players_export_shows_only_what_they_may_see(client, table):
    hand_no = start_hand(client, table)
    assert_problem(client.get(hand_url(table, hand_no, "/history?format=phh"),
                              headers=table["players"][2]), 409, "hand_not_ended")
    assert act(client, table, hand_no, 2, type="bet", amount=25).status_code == 201
    for seat in (3, 1):
        assert act(client, table, hand_no, seat, type="fold").status_code == 201
    text = client.get(hand_url(table, hand_no, "/history?format=phh"),
                      headers=table["players"][2]).text
    document = tomllib.loads(text)
    assert "variant" not in document and document["_variant"] == "five-card-draw"
    dealt = {line.split()[2]: line.split()[3] for line in document["actions"]
             if line.startswith("d dh")}
    own = client.get(hand_url(table, hand_no), headers=table["players"][2]).json
    mine = next(s for s in own["seats"] if s["seat"] == 2)["cards"]
    seat_of = dict(zip(document["_seats"], (f"p{i}" for i in range(1, 4))))
    assert dealt[seat_of[2]] == "".join(mine)
    assert dealt[seat_of[1]] == dealt[seat_of[3]] == "??" * 5
    assert_problem(client.get(hand_url(table, hand_no, "/history?format=xml"),
                              headers=table["players"][2]), 422, "invalid_query")


def test_every_viewers_export_of_a_draw_imports_and_audits_valid(client, fake_backend, table):
    """Each player's and the admin's export leaves the others' discards unknown; each imports
    to the hand's stacks, and the imported hand audits valid."""
    hand_no = start_hand(client, table)
    for seat, body in ((2, {"type": "bet", "amount": 25}), (3, {"type": "call"}),
                       (1, {"type": "call"})):
        assert act(client, table, hand_no, seat, **body).status_code == 201
    for seat in (2, 3, 1):
        cards = read(client, table, hand_no, seat)["seats"][seat - 1]["cards"][:seat]
        assert act(client, table, hand_no, seat, type="draw", cards=cards).status_code == 201
    for seat in (2, 3, 1):
        assert act(client, table, hand_no, seat, type="check").status_code == 201
    assert fake_backend.run_jobs()
    stacks = client.get(hand_url(table, hand_no), headers=table["admin"]).json["seats"]
    for viewer in (table["admin"], *table["players"].values()):
        text = client.get(hand_url(table, hand_no, "/history?format=phh"), headers=viewer).text
        assert " sd ??" in text
        imported = client.post(IMPORTS, json={"phh": text})
        assert imported.status_code == 201, imported.json
        order = tomllib.loads(text)["_seats"]
        assert [imported.json["stacks"][str(n)] for n in range(1, 4)] == [
            stacks[seat - 1]["stack"] for seat in order]
        url = f"/v1/tables/{imported.json['table_id']}/hands/1/audit"
        assert client.get(url, headers=auth(imported.json["auditor_token"])).json["valid"]


def test_a_stack_won_past_the_largest_buy_in_is_bet_whole_and_its_hand_imports_again(client):
    """Stacks bought in at the most one amount may name (10**9) grow past it by winning: the
    winner may bet it all, may add no chips, and the hand's PHH imports again."""
    created = client.post("/v1/tables", json={"game": "texas-holdem",
                                              "options": {"bet_unit": 1}}).json
    table, admin = f"/v1/tables/{created['table_id']}", auth(created["admin_token"])
    tokens = {}

    def join(name):
        joined = client.post(f"{table}/players", json={"name": name, "buy_in": 10**9}).json
        tokens[joined["seat"]] = auth(joined["token"])

    def play_all_in() -> str:
        hand = client.post(f"{table}/hands", headers=admin).json["hand_no"]
        url = f"{table}/hands/{hand}"
        while awaiting := client.get(url, headers=admin).json["awaiting"]:
            legal = {a["type"]: a for a in client.get(url, headers=tokens[awaiting[0]]).json[
                "legal_actions"]}
            move = next(({"type": kind, "amount": legal[kind]["max"]}
                         for kind in ("raise", "bet") if kind in legal), {"type": "call"})
            answer = client.post(f"{url}/actions", json=move, headers=tokens[awaiting[0]])
            assert answer.status_code == 201, (move, answer.json)
        client.application.extensions["cardroom"].settle_showdown(created["table_id"], hand)
        return url

    for name in ("ann", "bob", "cy"):
        join(name)
    for hand in range(5):  # all in, until one stack is past 10**9 (a three-way split is not)
        played = play_all_in()
        seats = client.get(table, headers=admin).json["seats"]
        if max(s["stack"] for s in seats) > 10**9:
            break
        join(f"new{hand}")
    big = max(seats, key=lambda s: s["stack"])
    refused = client.post(f"{table}/players/{big['seat']}/chips", json={"amount": 1},
                          headers=tokens[big["seat"]])
    assert_problem(refused, 422, "amount_out_of_range")
    assert "may add up to 0" in refused.json["detail"]
    join("dee")
    played = play_all_in()  # the big stack raises past 10**9 or calls an all-in
    document = client.get(f"{played}/history?format=phh", headers=admin).text
    phh = tomllib.loads(document)
    assert max(phh["starting_stacks"]) > 10**9 and sum(phh["finishing_stacks"]) > 3 * 10**9
    imported = client.post(IMPORTS, json={"phh": document})
    assert imported.status_code == 201, imported.json
    assert list(imported.json["stacks"].values()) == phh["finishing_stacks"]


def test_a_document_whose_chips_pass_the_most_a_table_holds_is_refused(client, fake_backend):
    """Each stack may be up to 2**53 - 1, but not all of them together: chips are kept, and
    a stack past it would be read wrong by JSON readers."""
    document = "\n".join([
        'variant = "NT"', "antes = [0, 0]", "blinds_or_straddles = [1, 2]", "min_bet = 2",
        f"starting_stacks = [{2**53 - 1}, 1]",
        'actions = ["d dh p1 AcAd", "d dh p2 7h2c", "p2 cc", "p1 cc"]'])
    before = keys_of(fake_backend)
    refused = client.post(IMPORTS, json={"phh": document})
    assert_problem(refused, 422, "phh_rejected")
    assert str(2**53) in refused.json["detail"] and keys_of(fake_backend) == before


def test_a_fixed_limit_hand_whose_big_blind_is_not_its_small_bet_imports_again(client):
    """PHH's FT opens at its small bet (its import makes that the big blind): a table whose
    big blind is another amount exports its hands with ``_variant``, and they import again."""
    created = client.post("/v1/tables", json={"game": "texas-holdem", "options": {
        "structure": "fixed-limit", "small_bet": 2}}).json
    table, admin = f"/v1/tables/{created['table_id']}", auth(created["admin_token"])
    tokens = {}
    for name in ("ann", "bob"):
        joined = client.post(f"{table}/players", json={"name": name, "buy_in": 1000}).json
        tokens[joined["seat"]] = auth(joined["token"])
    url = f"{table}/hands/{client.post(f'{table}/hands', headers=admin).json['hand_no']}"
    for kind in ("raise", "fold"):
        seat = client.get(url, headers=admin).json["awaiting"][0]
        legal = {a["type"]: a for a in client.get(url, headers=tokens[seat]).json[
            "legal_actions"]}
        answer = client.post(f"{url}/actions", headers=tokens[seat],
                             json={"type": kind, "amount": legal[kind].get("min")})
        assert answer.status_code == 201, answer.json
    document = client.get(f"{url}/history?format=phh", headers=auth(created["auditor_token"]))
    assert tomllib.loads(document.text)["_variant"] == "texas-holdem"
    imported = client.post(IMPORTS, json={"phh": document.text})
    assert imported.status_code == 201, imported.json
    assert list(imported.json["stacks"].values()) == tomllib.loads(document.text)[
        "finishing_stacks"]


def test_a_house_stud_hand_imports_at_a_table_of_its_rules(client):
    """House stud seats 2 to 6 (000): its export imports again at a table of 6 seats, and a
    document of 7 players under house rules is refused."""
    state, events = start([500] * 4, game="seven-card-stud", rules="house", seed="cd" * 32)
    _, more = play_out(state, random.Random(3))
    text = phh.export(events + more, {})
    imported = client.post(IMPORTS, json={"phh": text})
    assert imported.status_code == 201, imported.json
    table = client.get(f"/v1/tables/{imported.json['table_id']}",
                       headers=auth(imported.json["admin_token"])).json
    assert table["max_seats"] == 6
    document = tomllib.loads(text)
    crowded = {**document, "starting_stacks": [500] * 7, "antes": [25] * 7,
               "players": list("abcdefg"), "_seats": list(range(1, 8))}
    refused = client.post(IMPORTS, json={"phh": tomli_w.dumps(crowded)})
    assert_problem(refused, 422, "phh_rejected")
    assert "at most 6 players" in refused.json["detail"]


def test_cards_the_document_leaves_unknown_stay_unknown_to_every_viewer(client):
    """dwan-ivey-2009 leaves p2's hole cards unknown: the cards filled in for them are no
    one's to see, the auditor's neither (the other players' are)."""
    body = client.post(IMPORTS, json={"phh": DOCUMENT}).json
    url = f"/v1/tables/{body['table_id']}/hands/1"
    seats = client.get(url, headers=auth(body["auditor_token"])).json["seats"]
    assert [seat["cards"] for seat in seats] == [["Ac", "2d"], [None, None], ["7h", "6h"]]


def test_a_hand_whose_stub_was_reshuffled_imports_with_its_stubs_shown_to_the_auditor_only(
        client, tmp_path):
    """An eight-player stud hand whose reshuffle dealt a mucked card again: its import
    audits valid, the admin's history holds the reshuffled stubs only as a commitment,
    and the auditor's opens them, which the verifier checks each dealt card against."""
    events = next(e for e in (calling_hand("seven-card-stud", 8, n, {}) for n in range(40))
                  if any(event.type == "StubReshuffled" for event in e))
    body = client.post(IMPORTS, json={"phh": phh.export(events, {})})
    assert body.status_code == 201, body.json
    body = body.json
    url = f"/v1/tables/{body['table_id']}/hands/1"
    auditor = auth(body["auditor_token"])
    audit = client.get(url + "/audit", headers=auditor).json
    assert audit["valid"], audit
    admin = client.get(url + "/history", headers=auth(body["admin_token"])).json["events"][0]
    assert set(admin["data"]["source"]["stubs"]) == {"commitment"}
    assert "/source/stubs" not in admin["openings"]
    history = client.get(url + "/history", headers=auditor)
    assert history.json["events"][0]["openings"]["/source/stubs"]["value"]
    (tmp_path / "imported.json").write_bytes(history.data)
    result = verify(tmp_path / "imported.json", "--public-key",
                    client.get("/v1/fairness").json["public_key"])
    assert "ok   deck: the deck was imported" in result.stdout, result.stdout
    assert "FAIL" not in result.stdout, result.stdout


@pytest.mark.parametrize("forge, reason", [
    (lambda started: started["openings"].pop("/source/stubs"), "reshuffled stubs are not"),
    (lambda started: started["openings"]["/source/stubs"]["value"].append(["As"]),
     "holds a stub no reshuffle makes"),
    (lambda started: started["openings"]["/deck"]["value"].__setitem__(
        1, started["openings"]["/deck"]["value"][0]), "not the 52 cards, each once")])
def test_an_imported_deck_or_stubs_left_unopened_or_forged_fail_the_deck(client, forge, reason):
    """The auditor's history of an imported hand that reshuffled, its HandStarted altered
    (openings are not chained): reshuffled stubs not opened beside the deck, one stub more
    than the hand reshuffles, a deck holding a card twice. Each fails the deck check; none
    skips it."""
    events = next(e for e in (calling_hand("seven-card-stud", 8, n, {}) for n in range(40))
                  if any(event.type == "StubReshuffled" for event in e))
    body = client.post(IMPORTS, json={"phh": phh.export(events, {})}).json
    history = client.get(f"/v1/tables/{body['table_id']}/hands/1/history",
                         headers=auth(body["auditor_token"])).json
    assert {c["name"]: c for c in fairness.verify_history(history)}["deck"]["ok"]
    forge(history["events"][0])
    deck = {c["name"]: c for c in fairness.verify_history(history)}["deck"]
    assert not deck["ok"] and not deck.get("skipped") and reason in deck["detail"], deck
