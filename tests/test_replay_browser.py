"""GET /replay/{table_id}/{hand_no} in a real headless Chromium, against ``cardroom serve``
running for real (embedded): hands are played over HTTP, the page is driven like a person
would, and what it shows is compared with what the API says.

The page must show each event's hand as the history gives it, hide every card the token
may not see (in what it shows and in what it was sent), keep the token out of the URL and
the browser's storage, reach nothing outside the service, and follow a hand in progress on
the event stream (GET .../events/stream) without a reload.

Needs Debian's ``chromium`` (see tests/browser.py); skipped without it unless ``CI=true``.
Leaves /tmp/cardroom-replay.png (the auditor's view) and /tmp/cardroom-replay-player.png
(a player's) for a person to look at.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from tests.browser import RecordedPage
from tests.integration.client import Api, Table, create_table

pytestmark = pytest.mark.browser

SCREENSHOT = Path("/tmp/cardroom-replay.png")
PLAYER_SCREENSHOT = Path("/tmp/cardroom-replay-player.png")
WAIT_MS = 15_000  # a bound on each wait, never a measurement
SUITS = {"s": ("♠", "spades"), "h": ("♥", "hearts"), "d": ("♦", "diamonds"), "c": ("♣", "clubs")}
RANKS = {"A": ("A", "ace"), "K": ("K", "king"), "Q": ("Q", "queen"), "J": ("J", "jack"),
         "T": ("10", "ten"), "9": ("9", "nine"), "8": ("8", "eight"), "7": ("7", "seven"),
         "6": ("6", "six"), "5": ("5", "five"), "4": ("4", "four"), "3": ("3", "three"),
         "2": ("2", "two")}
AUDIT_REFUSED = ((403, "/audit"),)  # a player's token: the page shows the refusal politely


# --- the service, the browser, and hands played over HTTP ----------------------------


@pytest.fixture(scope="module")
def api(base_url) -> Api:
    return Api(base_url)


@pytest.fixture(scope="module")
def showdown(api) -> tuple[Table, int, dict]:
    """Hold'em for three, a bet on the flop, everyone called down to the showdown; with the
    auditor's history."""
    table = create_table(api, 3, game="texas-holdem")
    hand_no = table.start_hand()
    play(table, hand_no, bet_the_flop_and_call_down)
    table.wait_hand(hand_no, lambda hand: hand["status"] == "ended", "ended")
    return table, hand_no, table.history(hand_no)


@pytest.fixture(scope="module")
def folded(api) -> tuple[Table, int, dict]:
    """Hold'em for three where everyone folds to the big blind: nobody shows a card."""
    table = create_table(api, 3, game="texas-holdem")
    hand_no = table.start_hand()
    play(table, hand_no, fold_or_check)
    table.wait_hand(hand_no, lambda hand: hand["status"] == "ended", "ended")
    return table, hand_no, table.history(hand_no)


@pytest.fixture
def open_replay(browser, base_url):
    """Factory: the replay page of a hand, the token entered in its form, ready."""
    pages: list[RecordedPage] = []

    def open_page(table: Table, hand_no: int, token: str, refusals=()) -> RecordedPage:
        recorded = RecordedPage(browser, base_url, refusals, viewport={"width": 1400, "height": 1000})
        pages.append(recorded)
        page = recorded.page
        recorded.navigation = page.goto(f"{base_url}/replay/{table.table_id}/{hand_no}")
        page.get_by_label("Token", exact=True).fill(token)
        page.get_by_role("button", name="Show the hand").click()
        page.wait_for_selector("body[data-state=ready], body[data-state=error]", timeout=WAIT_MS)
        assert page.get_attribute("body", "data-state") == "ready", page.inner_text("#message")
        return recorded

    yield open_page
    for recorded in pages:
        recorded.page.close()


def play(table: Table, hand_no: int, choose, moves: int | None = None) -> list[dict]:
    """The awaited seats act with ``choose(legal, hand)`` until nobody is awaited (or for
    ``moves`` moves); the answers of the actions."""
    answers = []
    while moves is None or len(answers) < moves:
        hand = table.hand(hand_no)
        if not hand["awaiting"]:
            break
        seat = hand["awaiting"][0]
        mine = table.hand(hand_no, table.tokens[seat])
        legal = {action["type"]: action for action in mine["legal_actions"]}
        move = choose(legal, hand) | {"expected_version": mine["version"]}
        answers.append(table.api.ok(table.act(hand_no, seat, move), 201) | {"seat": seat,
                                                                            "move": move})
        assert len(answers) < 100, "the hand does not end"
    return answers


def bet_the_flop_and_call_down(legal: dict, hand: dict) -> dict:
    if "bet" in legal and hand["street"] == "bet_2":
        return {"type": "bet", "amount": legal["bet"]["min"]}
    return {"type": "call"} if "call" in legal else {"type": "check"}


def call_or_check(legal: dict, hand: dict) -> dict:
    return {"type": "call"} if "call" in legal else {"type": "check"}


def fold_or_check(legal: dict, hand: dict) -> dict:
    return {"type": "fold"} if "fold" in legal else {"type": "check"}


# --- what the page shows --------------------------------------------------------------


def shown(page) -> dict:
    """The step the page shows, read from its DOM."""
    return page.evaluate("""() => {
        const text = (id, root = document) => root.querySelector(`[data-testid="${id}"]`).textContent;
        const cards = (root) => [...root.querySelectorAll('[data-card]')].map(c => c.dataset.card);
        const seats = {};
        for (const seat of document.querySelectorAll('#seats [data-seat]')) {
            const n = seat.dataset.seat;
            seats[n] = {name: text(`seat-${n}-name`), cards: cards(seat.querySelector(`[data-testid="seat-${n}-cards"]`)),
                        stack: Number(text(`seat-${n}-stack`)), bet: Number(text(`seat-${n}-bet`))};
        }
        return {version: Number(text('event-version')), type: text('event-type'),
                description: text('event-description'), pot: Number(text('pot')),
                board: cards(document.querySelector('[data-testid=board]')), seats};
    }""")


def expected(state: dict, event: dict | None = None) -> dict:
    """What the page must show of a hand document (and of the event that led to it)."""
    seats = {str(s["seat"]): {"name": s["name"], "cards": [c or "back" for c in s["cards"]],
                              "stack": s["stack"], "bet": s["bet"]} for s in state["seats"]}
    view = {"version": state["version"], "pot": state["pot"], "board": state["board"],
            "seats": seats}
    if event is not None:
        view["type"] = event["type"]
    return view


def wait_for_step(page, version: int) -> dict:
    page.wait_for_selector(f"body[data-drawn='{version}']", timeout=WAIT_MS)
    seen = shown(page)
    assert seen["version"] == version
    return seen


def assert_shows_history_step(page, history: dict, version: int) -> dict:
    event = history["events"][version - 1]
    seen = wait_for_step(page, version)
    assert {k: seen[k] for k in ("version", "type", "pot", "board", "seats")} == expected(
        event["state"], event), f"the page's event {version} is not the history's"
    return seen


def version_of(history: dict, kind: str) -> int:
    return next(e["version"] for e in history["events"] if e["type"] == kind)


def go_to(page, version: int) -> None:
    """Drags the slider to ``version`` (the input event a person's drag fires)."""
    page.get_by_test_id("slider").fill(str(version))


def card_forms(card: str) -> list[str]:
    """Every way the page could write a card: its string, its face (A♥, 10♠), its name."""
    rank, suit = RANKS[card[0]], SUITS[card[1]]
    return [card, rank[0] + suit[0], f"{rank[1]} of {suit[1]}"]


def opponents_cards(table: Table, hand_no: int, seat: int, history: dict | None = None) -> set[str]:
    """The cards of every other seat: from the auditor's history once the hand has ended,
    else from each player's own hand read."""
    if history is not None:
        final = history["events"][-1]["state"]
        cards = {c for s in final["seats"] if s["seat"] != seat for c in s["cards"]}
    else:
        cards = set()
        for other, token in table.tokens.items():
            if other != seat:
                read = table.hand(hand_no, token)
                cards |= {c for s in read["seats"] if s["seat"] == other for c in s["cards"]}
    assert cards and None not in cards, f"the test could not learn the opponents' cards: {cards}"
    return cards


def assert_dom_hides(page, cards: set[str], where: str) -> None:
    content = page.content()
    for card in cards:
        for form in card_forms(card):
            pattern = rf"(?<![A-Za-z0-9]){re.escape(form)}(?![A-Za-z0-9])"
            assert not re.search(pattern, content), f"{where}: the page shows {form!r}"


def assert_responses_hide(recorded: RecordedPage, cards: set[str]) -> None:
    unreadable = []
    for response in recorded.responses:
        if not recorded.is_own(response.url) or response.url.startswith("blob:"):
            continue
        try:
            text = response.body().decode("utf-8", "replace")
        except Exception as error:  # a body the browser no longer holds
            unreadable.append(f"{response.url}: {error}")
            continue
        for card in cards:
            assert f'"{card}"' not in text, f"{response.url} sent the opponent's card {card}"
    assert not unreadable, unreadable
    assert any("/v1/" in r.url for r in recorded.responses)


# --- 1. a finished hand, step by step ---------------------------------------------------


def test_a_finished_hand_shows_each_events_hand_by_slider_and_by_buttons(open_replay, showdown):
    table, hand_no, history = showdown
    page = open_replay(table, hand_no, table.auditor).page
    last = history["version"]
    final = assert_shows_history_step(page, history, last)  # it opens on the end
    assert final["type"] == "HandEnded" and "back" not in str(final["seats"])  # auditor: all cards
    assert page.get_by_test_id("result").inner_text().strip()

    bet = version_of(history, "BetPlaced")
    go_to(page, bet)
    seen = assert_shows_history_step(page, history, bet)
    bettor = history["events"][bet - 1]["data"]
    assert seen["description"] == f"seat {bettor['seat']} bets {bettor['to']}"
    assert len(seen["board"]) == 3 and seen["pot"] != final["pot"]
    page.get_by_test_id("slider").press("ArrowLeft")
    assert_shows_history_step(page, history, bet - 1)

    page.get_by_role("button", name="First", exact=True).click()
    assert_shows_history_step(page, history, 1)
    assert page.get_by_role("button", name="Previous", exact=True).is_disabled()
    for version in (2, 3, 4, 5):
        page.get_by_role("button", name="Next", exact=True).click()
        assert_shows_history_step(page, history, version)
    page.get_by_role("button", name="Previous", exact=True).click()
    assert_shows_history_step(page, history, 4)
    page.get_by_role("button", name="Last", exact=True).click()
    assert_shows_history_step(page, history, last)
    assert page.get_by_role("button", name="Next", exact=True).is_disabled()

    flop = version_of(history, "BoardDealt")
    page.locator(f"#log button[data-version='{flop}']").click()
    assert_shows_history_step(page, history, flop)


def test_the_auditor_sees_the_audit_verdict_and_the_signed_receipt(open_replay, showdown):
    table, hand_no, history = showdown
    page = open_replay(table, hand_no, table.auditor).page
    receipt = table.api.ok(table.api.get(f"{table.hand_path(hand_no)}/receipt", token=table.auditor))
    audit = table.audit(hand_no)
    assert audit["valid"]
    page.get_by_test_id("audit-verdict").wait_for(timeout=WAIT_MS)
    assert "Valid" in page.get_by_test_id("audit-verdict").inner_text()
    audit_text = page.get_by_test_id("audit").inner_text()
    assert all(check["name"] in audit_text for check in audit["checks"])
    page.get_by_test_id("receipt-signature").wait_for(timeout=WAIT_MS)
    assert page.get_by_test_id("receipt-signature").inner_text() == receipt["signature"]
    assert page.get_by_test_id("receipt-head-hash").inner_text() == receipt["receipt"]["head_hash"]
    assert page.get_by_test_id("receipt-version").inner_text() == str(history["version"])
    assert page.get_by_test_id("receipt-public-key").inner_text() == receipt["public_key"]
    stacks = page.get_by_test_id("receipt-stacks").inner_text()
    assert all(f"seat {s}: {v}" in stacks for s, v in receipt["receipt"]["stacks"].items())
    text = page.get_by_test_id("receipt").inner_text()
    assert "Ed25519" in text and "GET /v1/fairness" in text


# --- 2. a player never sees an opponent's down cards ------------------------------------


def test_a_player_sees_no_opponents_down_card_before_the_showdown(open_replay, showdown):
    table, hand_no, history = showdown
    seat = 1
    recorded = open_replay(table, hand_no, table.tokens[seat], AUDIT_REFUSED)
    page = recorded.page
    hidden = opponents_cards(table, hand_no, seat, history)
    mine = [c for s in history["events"][-1]["state"]["seats"] if s["seat"] == seat
            for c in s["cards"]]
    own_history = table.history(hand_no, table.tokens[seat])
    dealt = next(e["version"] for e in history["events"]
                 if e["type"] == "CardsDealt" and e["data"]["seat"] == seat)
    for version in range(1, version_of(history, "ShowdownEvaluated")):
        go_to(page, version)
        seen = assert_shows_history_step(page, own_history, version)
        assert_dom_hides(page, hidden, f"seat {seat}'s page at event {version}")
        if version >= dealt:
            assert seen["seats"][str(seat)]["cards"] == mine
            assert all(c == "back" for s, v in seen["seats"].items() if s != str(seat)
                       for c in v["cards"])
    assert "auditor's token" in page.get_by_test_id("audit").inner_text()
    assert recorded.problems == []


def test_a_player_is_never_sent_the_cards_of_opponents_who_folded(open_replay, folded):
    table, hand_no, history = folded
    winner = next(s for s, n in history["events"][-1]["data"]["net"].items() if n > 0)
    seat = int(winner)
    recorded = open_replay(table, hand_no, table.tokens[seat], AUDIT_REFUSED)
    page = recorded.page
    hidden = opponents_cards(table, hand_no, seat, history)
    for version in range(1, history["version"] + 1):
        go_to(page, version)
        wait_for_step(page, version)
        assert_dom_hides(page, hidden, f"seat {seat}'s page at event {version}")
    page.get_by_test_id("receipt-signature").wait_for(timeout=WAIT_MS)
    assert_responses_hide(recorded, hidden)
    assert recorded.problems == []


def test_a_player_watching_a_hand_in_progress_is_never_sent_opponents_cards(open_replay, api):
    table = create_table(api, 3, game="texas-holdem")
    hand_no = table.start_hand()
    play(table, hand_no, call_or_check, moves=3)  # preflop done, the flop is out
    seat = 2
    hidden = opponents_cards(table, hand_no, seat)
    recorded = open_replay(table, hand_no, table.tokens[seat], AUDIT_REFUSED)
    page = recorded.page
    now = table.hand(hand_no, table.tokens[seat])
    seen = wait_for_step(page, now["version"])
    assert {k: seen[k] for k in ("version", "pot", "board", "seats")} == expected(now)
    for version in range(now["version"], 0, -1):  # back to the start: each read at ?at=v
        go_to(page, version)
        seen = wait_for_step(page, version)
        assert_dom_hides(page, hidden, f"seat {seat}'s page at event {version} (in progress)")
    at_the_flop = table.api.ok(table.api.get(
        f"{table.hand_path(hand_no)}?at={now['version']}", token=table.tokens[seat]))
    go_to(page, now["version"])
    assert {k: wait_for_step(page, now["version"])[k] for k in ("pot", "board", "seats")} == {
        k: v for k, v in expected(at_the_flop).items() if k in ("pot", "board", "seats")}

    play(table, hand_no, fold_or_check)  # everyone folds: no card is ever shown
    table.wait_hand(hand_no, lambda hand: hand["status"] == "ended", "ended")
    if page.get_attribute("body", "data-live") in ("open", "connecting", "reconnecting"):
        page.wait_for_selector("body[data-live=ended][data-mode=history]", timeout=WAIT_MS)
    assert_dom_hides(page, hidden, f"seat {seat}'s page after the end")
    assert_responses_hide(recorded, hidden)


# --- 3 and 4. the token stays in the page; the page stays on the service ----------------


def test_the_token_stays_out_of_the_url_the_storage_and_the_cookies(open_replay, base_url,
                                                                    showdown):
    table, hand_no, _ = showdown
    token = table.tokens[2]
    recorded = open_replay(table, hand_no, token, AUDIT_REFUSED)
    page = recorded.page
    assert page.get_by_label("Token", exact=True).get_attribute("type") == "password"
    page.get_by_test_id("receipt-signature").wait_for(timeout=WAIT_MS)
    go_to(page, 3)
    wait_for_step(page, 3)
    assert page.url == f"{base_url}/replay/{table.table_id}/{hand_no}"
    stored = page.evaluate("""() => JSON.stringify({local: {...localStorage},
        session: {...sessionStorage}, cookie: document.cookie, state: history.state,
        entries: performance.getEntries().map(e => e.name)})""")
    assert token not in stored
    assert page.context.cookies() == []
    assert page.get_by_label("Token", exact=True).input_value() == ""
    assert token not in page.content()
    assert all(token not in request.url for request in recorded.requests)
    calls = [request for request in recorded.requests if "/v1/" in request.url]
    assert calls and all(request.all_headers().get("authorization") == f"Bearer {token}"
                         for request in calls)


def test_the_page_reaches_only_the_service_and_logs_no_error(open_replay, showdown, api):
    table, hand_no, history = showdown
    recorded = open_replay(table, hand_no, table.auditor)
    page = recorded.page
    policy = recorded.navigation.all_headers()["content-security-policy"]
    assert "default-src 'none'" in policy and "connect-src 'self'" in policy
    page.get_by_test_id("audit-verdict").wait_for(timeout=WAIT_MS)
    page.get_by_test_id("receipt-signature").wait_for(timeout=WAIT_MS)
    page.get_by_role("button", name="First", exact=True).click()
    wait_for_step(page, 1)
    go_to(page, history["version"] // 2)
    wait_for_step(page, history["version"] // 2)

    with page.expect_download(timeout=WAIT_MS) as info:
        page.get_by_role("button", name="Download the PHH file").click()
    download = info.value
    assert download.suggested_filename == f"{table.table_id}-hand-{hand_no}.phh"
    phh = api.get(f"{table.hand_path(hand_no)}/history?format=phh", token=table.auditor,
                  headers={"Accept": "application/toml"})
    assert phh.status == 200
    assert Path(download.path()).read_bytes() == phh.raw
    export = [r for r in recorded.requests if "format=phh" in r.url]
    assert len(export) == 1 and export[0].all_headers()["authorization"] == f"Bearer {table.auditor}"

    assert recorded.outside == []
    assert all(recorded.is_own(request.url) for request in recorded.requests)
    assert recorded.problems == []


# --- 5. following a hand live -----------------------------------------------------------


def test_a_live_hand_shows_each_new_move_without_a_reload(open_replay, api):
    """The page follows GET .../events/stream: a snapshot, then each event with its hand."""
    table = create_table(api, 3, game="texas-holdem")
    hand_no = table.start_hand()
    seat = 3
    recorded = open_replay(table, hand_no, table.tokens[seat], AUDIT_REFUSED)
    page = recorded.page
    page.wait_for_selector("body[data-live=open], body[data-live=unavailable]", timeout=WAIT_MS)
    assert page.get_attribute("body", "data-live") == "open", (
        "the page does not follow the hand live: " + page.get_by_test_id("live-status").inner_text())
    page.evaluate("() => { window.sameDocument = true; }")

    def newest_shows(answer: dict) -> None:
        version = answer["version"]
        expect_text(page, "event-count", str(version))
        move = answer["events"][0]
        verb = {"call": "calls", "check": "checks", "fold": "folds"}[answer["move"]["type"]]
        log_line = page.locator(f"#log button[data-version='{move['version']}']").inner_text()
        assert f"seat {answer['seat']} {verb}" in log_line
        assert page.get_by_test_id("slider").get_attribute("max") == str(version)

    first = play(table, hand_no, call_or_check, moves=1)[0]
    newest_shows(first)
    expect_text(page, "event-version", str(first["version"]))  # it follows the newest event
    now = table.hand(hand_no, table.tokens[seat])
    assert {k: wait_for_step(page, first["version"])[k] for k in ("pot", "seats")} == {
        k: v for k, v in expected(now).items() if k in ("pot", "seats")}

    page.get_by_role("button", name="Previous", exact=True).click()  # stepped back: it stays there
    second = play(table, hand_no, call_or_check, moves=1)[0]
    newest_shows(second)
    assert page.get_by_test_id("event-version").inner_text() == str(first["version"] - 1)

    page.get_by_role("button", name="Last", exact=True).click()  # at the newest again: it follows
    third = play(table, hand_no, call_or_check, moves=1)[0]
    newest_shows(third)
    expect_text(page, "event-version", str(third["version"]))

    play(table, hand_no, fold_or_check)
    page.wait_for_selector("body[data-live=ended][data-mode=history]", timeout=WAIT_MS)
    expect_text(page, "status-badge", "ended")
    assert page.evaluate("() => window.sameDocument") is True


def test_a_page_refused_a_stream_for_its_address_tries_again_after_retry_after(open_replay,
                                                                                api, base_url):
    """Another client on the page's address holds its 8 streams (on another hand): the page
    is refused (429), says it will reconnect, and follows the hand once they close."""
    from tests.integration.test_live_stream import Stream

    watched, busy = (create_table(api, 3, game="texas-holdem") for _ in range(2))
    watched_hand, busy_hand = watched.start_hand(), busy.start_hand()
    path = f"/v1/tables/{busy.table_id}/hands/{busy_hand}/events/stream"
    held = [Stream(base_url, path, busy.admin) for _ in range(8)]
    try:
        assert [stream.response.status for stream in held] == [200] * 8
        page = open_replay(watched, watched_hand, watched.tokens[1],
                           AUDIT_REFUSED + ((429, "/events/stream"),)).page
        page.wait_for_selector("body[data-live=reconnecting]", timeout=WAIT_MS)
        assert "close one first; reconnecting in 5 s" in page.get_by_test_id(
            "live-status").inner_text()
        play(busy, busy_hand, fold_or_check)  # its streams end, and their slots are free
        page.wait_for_selector("body[data-live=open]", timeout=WAIT_MS)
    finally:
        for stream in held:
            stream.close()


def expect_text(page, testid: str, text: str) -> None:
    from playwright.sync_api import expect

    expect(page.get_by_test_id(testid)).to_have_text(text, timeout=WAIT_MS)


# --- 6. screenshots for a person ---------------------------------------------------------


def test_screenshots_of_the_auditors_and_a_players_view(open_replay, showdown, tmp_path):
    """Leaves /tmp/cardroom-replay.png (the auditor on the flop's bet) and
    /tmp/cardroom-replay-player.png (seat 1 there: the others' cards face down)."""
    table, hand_no, history = showdown
    bet = version_of(history, "BetPlaced")
    for token, path, refusals in ((table.auditor, SCREENSHOT, ()),
                                  (table.tokens[1], PLAYER_SCREENSHOT, AUDIT_REFUSED)):
        page = open_replay(table, hand_no, token, refusals).page
        page.get_by_test_id("receipt-signature").wait_for(timeout=WAIT_MS)
        go_to(page, bet)
        wait_for_step(page, bet)
        page.screenshot(path=str(tmp_path / path.name), full_page=True)
        shutil.copyfile(tmp_path / path.name, path)
        print(f"screenshot: {path} (and {tmp_path / path.name})")
        assert path.stat().st_size > 10_000
    player = open_replay(table, hand_no, table.tokens[1], AUDIT_REFUSED).page
    go_to(player, bet)
    wait_for_step(player, bet)
    assert player.locator("#seats [data-card=back]").count() == 4  # two opponents, two cards
