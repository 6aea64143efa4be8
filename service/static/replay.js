/* The replay viewer (GET /replay/{table_id}/{hand_no}).

   The token lives in the variable `token` below and nowhere else: not in the URL, a
   cookie or the browser's storage. Every API call sends it as `Authorization: Bearer`.

   An ended hand is read from its history (each event with the hand just after it). A
   hand in progress is followed on GET .../events/stream, read with fetch (EventSource
   cannot send the Authorization header) and parsed here: `event: snapshot` (the hand
   read), `event: event` (a projected event with its `state`), `event: end`; comment
   lines are heartbeats; a dropped stream is resumed with `Last-Event-ID`. Earlier
   events of a live hand come from GET .../events and their hands, when stepped to,
   from GET .../hands/{n}?at=v. Everything shown is written with textContent: names
   and problem texts are never parsed as HTML. */

"use strict";

(() => {
  const SUITS = {s: ["♠", "spades"], h: ["♥", "hearts"], d: ["♦", "diamonds"], c: ["♣", "clubs"]};
  const RANKS = {A: ["A", "ace"], K: ["K", "king"], Q: ["Q", "queen"], J: ["J", "jack"],
                 T: ["10", "ten"], 9: ["9", "nine"], 8: ["8", "eight"], 7: ["7", "seven"],
                 6: ["6", "six"], 5: ["5", "five"], 4: ["4", "four"], 3: ["3", "three"],
                 2: ["2", "two"]};
  const STREET_KINDS = {deal: "the deal", bet: "a betting round begins", draw: "the draw begins",
                        showdown: "the showdown"};
  const RETRY_MS = [1000, 2000, 5000, 10000];

  const $ = (id) => document.getElementById(id);
  const [tableId, handNo] = idsFromPath(location.pathname);

  let token = null;      // the only place the token is kept
  let session = 0;       // bumped whenever the hand is (re)opened; older answers are dropped
  let steps = [];        // steps[version] = {version, type, data, state}
  let last = 0;          // the newest version known
  let current = 0;       // the version shown
  let follow = true;     // a live hand moves to each new event unless the user stepped back
  let stream = null;     // the AbortController of the live stream

  // --- opening the hand ------------------------------------------------------

  $("where").textContent = `Table ${tableId} · hand ${handNo}`;
  $("token-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const value = $("token").value.trim();
    $("token").value = "";
    if (!value) return;
    token = value;
    $("token").placeholder = "token set; enter another to switch";
    openHand();
  });
  $("first").addEventListener("click", () => userGo(1));
  $("previous").addEventListener("click", () => userGo(current - 1));
  $("next").addEventListener("click", () => userGo(current + 1));
  $("last").addEventListener("click", () => userGo(last));
  $("slider").addEventListener("input", () => userGo(Number($("slider").value)));
  $("log").addEventListener("click", (event) => {
    const button = event.target.closest("button[data-version]");
    if (button) userGo(Number(button.dataset.version));
  });
  $("phh").addEventListener("click", downloadPhh);
  window.addEventListener("pagehide", stopStream);

  async function openHand() {
    const mine = ++session;
    stopStream();
    steps = []; last = 0; current = 0; follow = true;
    setBody({state: "loading", mode: "", live: ""});
    say("Reading the hand…");
    const answer = await api("");
    if (mine !== session) return;
    if (!answer.ok) return fail(`The hand could not be read. ${problemText(answer)}`);
    const hand = answer.body;
    $("where").textContent = `Table ${tableId} · hand ${handNo} · ${hand.game}`;
    handStatus(hand.status);
    $("replay").hidden = false;
    const opened = hand.status === "ended" ? await loadHistory(mine) : await followLive(mine, hand);
    if (mine !== session || !opened) return;
    loadAudit(mine);
    loadReceipt(mine, hand.status);
  }

  /** Every event of the hand with the hand just after it; keeps the step shown, if any. */
  async function loadHistory(mine) {
    const answer = await api("/history");
    if (mine !== session) return false;
    if (!answer.ok) return fail(`The history could not be read. ${problemText(answer)}`);
    steps = [];
    for (const event of answer.body.events) steps[event.version] = step(event, event.state);
    last = answer.body.version;
    setBody({state: "ready", mode: "history"});
    say(answer.body.status === "ended" ? "The hand has ended: step through its events."
        : "The hand is in progress (the auditor reads its history at any time).");
    rebuildLog();
    go(current && !follow ? Math.min(current, last) : last);
    return true;
  }

  /** The hand as read now, its earlier events, then the live stream. */
  async function followLive(mine, hand) {
    steps[hand.version] = step({version: hand.version}, hand);
    last = hand.version;
    await fillEvents(mine, 0, last);
    if (mine !== session) return false;
    setBody({state: "ready", mode: "live"});
    say("The hand is in progress.");
    rebuildLog();
    go(last);
    listen(mine, null, 0);
    return true;
  }

  /** The types and data of events after..upTo (their hands are read when stepped to). */
  async function fillEvents(mine, after, upTo) {
    const answer = await api(`/events?after=${after}`);
    if (mine !== session || !answer.ok) return;
    for (const event of answer.body.events) {
      if (event.version > upTo) break;
      const known = steps[event.version];
      steps[event.version] = step(event, known ? known.state : null);
    }
  }

  function step(event, state) {
    return {version: event.version, type: event.type || null, data: event.data || null,
            state: state || null};
  }

  // --- the live stream ---------------------------------------------------------

  async function listen(mine, lastId, attempt) {
    const controller = new AbortController();
    stream = controller;
    setBody({live: attempt ? "reconnecting" : "connecting"});
    const headers = {Accept: "text/event-stream"};
    if (lastId !== null) headers["Last-Event-ID"] = String(lastId);
    let response;
    try {
      response = await fetch(`${handPath()}/events/stream`, {
        headers: {...headers, Authorization: `Bearer ${token}`}, cache: "no-store",
        signal: controller.signal});
    } catch (error) {
      return controller.signal.aborted || retry(mine, lastId, attempt);
    }
    if (!response.ok) {
      const answer = await answerOf(response);
      if (mine !== session) return;
      if (response.status >= 500 || response.status === 429) {  // busy: try again later
        return retry(mine, lastId, attempt, problemText(answer), retryAfterMs(response));
      }
      setBody({live: "unavailable"});
      return liveSay(`Live updates are unavailable. ${problemText(answer)}`);
    }
    const parser = sseParser();
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let ended = false;
    setBody({live: "open"});
    liveSay("Following live: new events appear as they happen.");
    try {
      for (;;) {
        const {value, done} = await reader.read();
        const messages = parser.feed(done ? decoder.decode() : decoder.decode(value, {stream: true}),
                                     done);
        for (const message of messages) {
          if (mine !== session) return;
          if (message.id !== null) lastId = Number(message.id);
          attempt = 0;
          if (message.event === "end") ended = true;
          await onMessage(mine, message);
        }
        if (done || ended) break;
      }
    } catch (error) {
      if (controller.signal.aborted || mine !== session) return;
    }
    if (ended || mine !== session) return controller.abort();
    retry(mine, lastId, attempt);
  }

  function retry(mine, lastId, attempt, why = "The live stream dropped", atLeastMs = 0) {
    if (mine !== session) return;
    const wait = Math.max(atLeastMs, RETRY_MS[Math.min(attempt, RETRY_MS.length - 1)]);
    setBody({live: "reconnecting"});
    liveSay(`${why}; reconnecting in ${wait / 1000} s…`);
    setTimeout(() => mine === session && listen(mine, lastId, attempt + 1), wait);
  }

  function retryAfterMs(response) {
    const seconds = Number(response.headers.get("Retry-After"));
    return Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : 0;
  }

  async function onMessage(mine, message) {
    if (message.event === "snapshot") {
      const version = Number(message.id);
      if (version > last) await fillEvents(mine, last, version);
      if (mine !== session) return;
      steps[version] = step(steps[version] || {version}, JSON.parse(message.data));
      grow(version);
    } else if (message.event === "event") {
      const event = JSON.parse(message.data);
      if (event.version - 1 > last) await fillEvents(mine, last, event.version - 1);
      if (mine !== session) return;
      steps[event.version] = step(event, event.state);
      grow(event.version);
    } else if (message.event === "end") {
      setBody({live: "ended"});
      handStatus("ended");
      liveSay("The hand has ended.");
      $("live-badge").hidden = true;
      if (await loadHistory(mine)) {
        loadAudit(mine);
        loadReceipt(mine, "ended");
      }
    }
  }

  function grow(version) {
    last = Math.max(last, version);
    rebuildLog();
    go(follow ? last : current);
  }

  /** A parser of text/event-stream: feed it text, get the messages it completes. */
  function sseParser() {
    let buffer = "";
    let message = {event: "", data: [], id: null};
    return {
      feed(text, done) {
        buffer += text;
        const messages = [];
        let start = 0;
        for (let i = 0; i < buffer.length; i++) {
          const c = buffer[i];
          if (c !== "\n" && c !== "\r") continue;
          if (c === "\r" && i + 1 === buffer.length && !done) break;  // "\r\n" split in two
          line(buffer.slice(start, i), messages);
          if (c === "\r" && buffer[i + 1] === "\n") i++;
          start = i + 1;
        }
        buffer = buffer.slice(start);
        return messages;
      },
    };

    function line(text, messages) {
      if (text === "") {
        if (message.data.length || message.event) {
          messages.push({event: message.event || "message", data: message.data.join("\n"),
                         id: message.id});
        }
        message = {event: "", data: [], id: null};
        return;
      }
      if (text.startsWith(":")) return;  // a heartbeat
      const colon = text.indexOf(":");
      const field = colon < 0 ? text : text.slice(0, colon);
      let value = colon < 0 ? "" : text.slice(colon + 1);
      if (value.startsWith(" ")) value = value.slice(1);
      if (field === "event") message.event = value;
      else if (field === "data") message.data.push(value);
      else if (field === "id" && !value.includes("\0")) message.id = value;
    }
  }

  function stopStream() {
    if (stream) stream.abort();
    stream = null;
  }

  // --- stepping ------------------------------------------------------------------

  function userGo(version) {
    go(version);
    follow = current === last;
  }

  function go(version) {
    if (!last) return;
    current = Math.max(1, Math.min(last, version || 1));
    const slider = $("slider");
    slider.max = String(last);
    slider.value = String(current);
    slider.setAttribute("aria-valuetext", `event ${current} of ${last}`);
    $("first").disabled = $("previous").disabled = current <= 1;
    $("next").disabled = $("last").disabled = current >= last;
    const shown = steps[current] || step({version: current}, null);
    $("event-version").textContent = String(current);
    $("event-count").textContent = String(last);
    $("event-type").textContent = shown.type || "";
    $("event-description").textContent = describe(shown, shown.state);
    $("live-badge").hidden = document.body.dataset.live !== "open";
    $("live-badge").textContent = follow ? "live" : "live (stepped back)";
    markLog();
    if (shown.state) drawHand(shown.state);
    else loadState(session, current);
  }

  async function loadState(mine, version) {
    const pending = steps[version] || (steps[version] = step({version}, null));
    document.body.dataset.drawn = "loading";
    if (pending.loading) return;
    pending.loading = true;
    const answer = await api(`?at=${version}`);
    pending.loading = false;
    if (mine !== session) return;
    if (!answer.ok) return say(`The hand at event ${version} could not be read. ${problemText(answer)}`, true);
    pending.state = answer.body;
    if (current === version) go(current);
  }

  // --- drawing the hand ------------------------------------------------------------

  function drawHand(hand) {
    $("status").textContent = `at this event: ${hand.status.replace(/_/g, " ")}`;
    $("street").textContent = streetName(hand.street);
    $("board").replaceChildren(...hand.board.map(cardElement));
    $("pot").textContent = String(hand.pot);
    $("current-bet").textContent = String(hand.current_bet);
    drawResult(hand);
    const awaiting = new Set(hand.awaiting && hand.awaiting.length ? hand.awaiting
                             : hand.to_act ? [hand.to_act] : []);
    const shown = new Map(((hand.result && hand.result.hands) || []).map((h) => [h.seat, h]));
    const net = (hand.result && hand.result.net) || {};
    const count = hand.seats.length;
    $("seats").replaceChildren(...hand.seats.map((seat, i) => {
      const item = element("li", "seat");
      item.dataset.testid = `seat-${seat.seat}`;
      item.dataset.seat = String(seat.seat);
      item.classList.toggle("to-act", awaiting.has(seat.seat));
      item.classList.toggle("folded", seat.status === "folded");
      item.classList.toggle("winner", (net[seat.seat] || 0) > 0);
      const angle = Math.PI / 2 + (2 * Math.PI * i) / count;  // the first seat at the bottom
      item.style.left = `calc(50% + ${Math.cos(angle).toFixed(4)} * (50% - 6.6rem))`;  // inside
      item.style.top = `${50 + 44 * Math.sin(angle)}%`;

      const head = element("div", "seat-head");
      head.append(element("span", "seat-no", `Seat ${seat.seat}`),
                  testid(element("span", "name", seat.name), `seat-${seat.seat}-name`));
      if (seat.seat === hand.button) {
        const button = testid(element("span", "dealer", "D"), "button");
        button.title = "the button";
        head.append(button);
      }
      const cards = testid(element("div", "cards"), `seat-${seat.seat}-cards`);
      cards.setAttribute("aria-label", `seat ${seat.seat}'s cards`);
      cards.classList.toggle("many", seat.cards.length > 4);
      cards.append(...seat.cards.map(cardElement));
      const money = element("div", "money");
      money.append(labelled("Stack", seat.stack, `seat-${seat.seat}-stack`),
                   labelled("Bet", seat.bet, `seat-${seat.seat}-bet`, seat.bet ? "bet" : "bet none"));
      const notes = testid(element("div", "notes"), `seat-${seat.seat}-status`);
      if (awaiting.has(seat.seat)) notes.append(element("span", "tag act", "to act"));
      if (seat.status !== "active") notes.append(element("span", `tag ${seat.status}`,
                                                         seat.status.replace(/_/g, " ")));
      if (seat.seat in net) {
        const change = net[seat.seat];
        notes.append(element("span", `tag ${change > 0 ? "won" : change < 0 ? "lost" : ""}`,
                             change > 0 ? `+${change}` : change < 0 ? `−${-change}` : "±0"));
      }
      if (shown.has(seat.seat)) notes.append(element("span", "hand-name",
                                                     shown.get(seat.seat).description));
      item.append(head, cards, money, notes);
      return item;
    }));
    document.body.dataset.drawn = String(hand.version);
  }

  function drawResult(hand) {
    const box = $("result");
    box.replaceChildren();
    if (!hand.result) return;
    for (const pot of hand.result.pots) {
      const winners = pot.winners.map((w) => `seat ${w.seat} (${nameOf(hand, w.seat)}) ${w.amount}`);
      box.append(element("p", "", `${potName(pot.pot)} ${pot.amount}: ${winners.join(", ")}` +
                         (pot.reason === "uncontested" ? ", uncontested" : "")));
    }
  }

  function cardElement(card) {
    const face = element("span", "card");
    face.setAttribute("role", "img");
    if (card === null || card === undefined) {
      face.classList.add("back");
      face.dataset.card = "back";
      face.setAttribute("aria-label", "a face-down card");
      return face;
    }
    face.dataset.card = card;
    const suit = SUITS[card[1]];
    const rank = RANKS[card[0]];
    if (!suit || !rank) {  // a joker, or a card this page does not know
      face.classList.add("joker");
      face.append(element("span", "rank", card[1] === "j" ? "★" : card), element("span", "suit", "joker"));
      face.setAttribute("aria-label", card[1] === "j" ? "a joker" : card);
      return face;
    }
    face.classList.add(card[1] === "h" || card[1] === "d" ? "red" : "black");
    face.append(element("span", "rank", rank[0]), element("span", "suit", suit[0]));
    face.setAttribute("aria-label", `${rank[1]} of ${suit[1]}`);
    return face;
  }

  function cardsText(cards) {
    return cards.map((c) => typeof c === "string" && SUITS[c[1]] && RANKS[c[0]]
                     ? RANKS[c[0]][0] + SUITS[c[1]][0] : "a card").join(" ");
  }

  // --- the event log and descriptions ------------------------------------------------

  function rebuildLog() {
    const log = $("log");
    const items = [];
    for (let version = 1; version <= last; version++) {
      const known = steps[version] || step({version}, null);
      const button = element("button", "", "");
      button.type = "button";
      button.dataset.version = String(version);
      button.append(element("span", "v", String(version)), element("span", "", describe(known, known.state)));
      const item = element("li");
      item.append(button);
      items.push(item);
    }
    log.replaceChildren(...items);
  }

  function markLog() {
    const log = $("log");
    for (const button of log.querySelectorAll("button[aria-current]")) button.removeAttribute("aria-current");
    const button = log.querySelector(`button[data-version="${current}"]`);
    if (!button) return;
    button.setAttribute("aria-current", "step");
    const top = button.offsetTop;
    if (top < log.scrollTop || top + button.offsetHeight > log.scrollTop + log.clientHeight) {
      log.scrollTop = top - log.clientHeight / 2;
    }
  }

  function describe(shown, hand) {
    const d = shown.data || {};
    const seat = `seat ${d.seat}`;
    const allIn = hand && hand.seats.some((s) => s.seat === d.seat && s.status === "all_in")
      ? " and is all in" : "";
    switch (shown.type) {
      case null: return shown.version === last && document.body.dataset.mode === "live"
        ? "the hand as it stood when you opened it" : "";
      case "HandStarted": return `hand ${d.hand_no} of ${d.game} starts; the button is seat ${d.button}`;
      case "AntePosted": return `${seat} antes ${d.amount}`;
      case "BlindPosted": return `${seat} posts the ${d.blind} blind of ${d.amount}`;
      case "CardsDealt": return d.face_up ? `${seat} is dealt ${cardsText(d.cards)} face up`
        : `${seat} is dealt ${plural(d.cards.length, "card")} face down`;
      case "BoardDealt": return `the board: ${cardsText(d.cards)}`;
      case "StubReshuffled": return "the stub runs short and is reshuffled";
      case "StreetStarted": return `${STREET_KINDS[d.kind] || d.kind}` +
        (hand && hand.street ? ` (${streetName(hand.street)})` : "");
      case "ActionOn": return `${seatList(d.seats)} to act`;
      case "PlayerChecked": return `${seat} checks`;
      case "BetPlaced": return `${seat} bets ${d.to}${allIn}`;
      case "BringInPosted": return `${seat} brings in for ${d.to}${allIn}`;
      case "BetCompleted": return `${seat} completes to ${d.to}${allIn}`;
      case "PlayerCalled": return `${seat} calls ${d.added}${allIn}`;
      case "PlayerRaised": return `${seat} raises to ${d.to}${allIn}`;
      case "ChipsBought": return `${seat} adds ${d.amount} chips to cover the bet`;
      case "PlayerFolded": return `${seat} folds`;
      case "CardsDrawn": return d.discarded.length ? `${seat} discards and draws ${plural(d.received.length, "card")}`
        : `${seat} stands pat`;
      case "BetReturned": return `${d.amount} nobody called goes back to ${seat}`;
      case "BettingRoundClosed": return `the betting round closes with ${d.pot} in the pot`;
      case "ShowdownEvaluated": return d.hands.length > 2 ? `${d.hands.length} hands are shown`
        : d.hands.map((h) => `seat ${h.seat} shows ${lower(h.description)}` +
                      (h.low ? ` and ${lower(h.low.description)}` : "")).join("; ") || "no hand is shown";
      case "PotAwarded": return `${seatList(d.winners)} ${d.winners.length > 1 ? "split" : "wins"} ` +
        `${lower(potName(d.pot))} of ${d.amount}${d.reason === "uncontested" ? ", uncontested" : ""}`;
      case "HandEnded": return "the hand ends: " + Object.entries(d.net).map(([s, change]) =>
        `seat ${s} ${change > 0 ? "+" : change < 0 ? "−" : "±"}${Math.abs(change)}`).join(", ");
      default: return shown.type;
    }
  }

  function streetName(street) {
    if (!street) return "before the deal";
    if (street === "showdown") return "showdown";
    const [kind, number] = street.split("_");
    return {bet: `betting round ${number}`, deal: `deal ${number}`, board: `board ${number}`,
            draw: `draw ${number}`}[kind] || street.replace(/_/g, " ");
  }

  const potName = (pot) => (pot === 0 ? "Main pot" : `Side pot ${pot}`);
  const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;
  const lower = (text) => (text ? text[0].toLowerCase() + text.slice(1) : "");
  const nameOf = (hand, seat) => (hand.seats.find((s) => s.seat === seat) || {}).name || "";

  function seatList(seats) {
    if (seats.length === 1) return `seat ${seats[0]}`;
    return `seats ${seats.slice(0, -1).join(", ")} and ${seats[seats.length - 1]}`;
  }

  // --- audit, receipt, export ----------------------------------------------------------

  async function loadAudit(mine) {
    const box = $("audit");
    box.replaceChildren(element("p", "muted", "Reading the audit…"));
    const answer = await api("/audit");
    if (mine !== session) return;
    if (answer.status === 403) {
      return box.replaceChildren(element("p", "", "The audit is open to the auditor's token."),
                                 element("p", "muted", problemText(answer)));
    }
    if (!answer.ok) return box.replaceChildren(element("p", "error", problemText(answer)));
    const audit = answer.body;
    const verdict = testid(element("p", `verdict ${audit.valid ? "ok" : "bad"}`,
                                   audit.valid ? "✓ Valid: every check passed" : "✗ Not valid"),
                           "audit-verdict");
    const checks = element("ul", "checks");
    for (const check of audit.checks) {
      const item = element("li", check.ok ? "ok" : "bad");
      item.append(element("span", "mark", check.ok ? "✓" : "✗"), element("code", "", check.name),
                  element("span", "muted", ` ${check.detail || ""}`));
      checks.append(item);
    }
    box.replaceChildren(verdict, ...(audit.note ? [element("p", "muted", audit.note)] : []), checks);
  }

  async function loadReceipt(mine, status) {
    const box = $("receipt");
    if (status !== "ended") {
      return box.replaceChildren(element("p", "muted", "The receipt is signed when the hand ends."));
    }
    box.replaceChildren(element("p", "muted", "Reading the receipt…"));
    const answer = await api("/receipt");
    if (mine !== session) return;
    if (answer.status === 403) {
      return box.replaceChildren(
        element("p", "", "The receipt is open to the seats dealt into the hand and to the auditor's token."),
        element("p", "muted", problemText(answer)));
    }
    if (!answer.ok) return box.replaceChildren(element("p", "error", problemText(answer)));
    const {receipt, signature, public_key: publicKey} = answer.body;
    const list = element("dl", "receipt");
    const row = (term, value, id, mono) => {
      list.append(element("dt", "", term), testid(element("dd", mono ? "mono" : "", value), id));
    };
    row("Version", String(receipt.version), "receipt-version");
    row("Head hash", receipt.head_hash, "receipt-head-hash", true);
    row("Stacks", Object.entries(receipt.stacks).map(([s, v]) => `seat ${s}: ${v}`).join(", "),
        "receipt-stacks");
    row("Signature", signature, "receipt-signature", true);
    row("Public key", publicKey, "receipt-public-key", true);
    const note = element("p", "muted", "An Ed25519 signature over the receipt's canonical JSON; " +
                         "verify it with the public key of ");
    const link = element("a", "", "GET /v1/fairness");
    link.href = "/v1/fairness";
    note.append(link, ".");
    box.replaceChildren(list, note);
  }

  async function downloadPhh() {
    const status = $("phh-status");
    if (!token) return;
    status.textContent = "Fetching the PHH document…";
    let response;
    try {
      response = await fetch(`${handPath()}/history?format=phh`, {
        headers: {Authorization: `Bearer ${token}`, Accept: "application/toml"}, cache: "no-store"});
    } catch (error) {
      status.textContent = `The service did not answer: ${error.message}`;
      return;
    }
    if (!response.ok) {
      status.textContent = `No PHH document. ${problemText(await answerOf(response))}`;
      return;
    }
    const blob = await response.blob();
    const url = URL.createObjectURL(blob);
    const link = document.createElement("a");
    link.href = url;
    link.download = `${tableId.replace(/[^A-Za-z0-9_-]/g, "_")}-hand-${handNo}.phh`;
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 60000);
    status.textContent = `Saved ${link.download} (${blob.size} bytes, ${blob.type || "text"}).`;
  }

  // --- the API and the page's state ------------------------------------------------------

  function handPath() {
    return `/v1/tables/${encodeURIComponent(tableId)}/hands/${handNo}`;
  }

  /** GET handPath()+suffix with the token: {ok, status, body} (body: JSON or problem, or null). */
  async function api(suffix) {
    try {
      const response = await fetch(handPath() + suffix, {
        headers: {Authorization: `Bearer ${token}`, Accept: "application/json"}, cache: "no-store"});
      return answerOf(response);
    } catch (error) {
      return {ok: false, status: 0, body: {title: "No answer", detail: error.message}};
    }
  }

  async function answerOf(response) {
    let body = null;
    try {
      body = JSON.parse(await response.text());
    } catch (error) {
      body = null;
    }
    return {ok: response.ok, status: response.status, body};
  }

  function problemText(answer) {
    const body = answer.body || {};
    if (body.title || body.detail) return [body.title, body.detail].filter(Boolean).join(": ");
    return `The service answered ${answer.status}.`;
  }

  function fail(text) {
    stopStream();
    setBody({state: "error"});
    $("replay").hidden = true;
    say(text, true);
    return false;
  }

  function say(text, error) {
    $("message").textContent = text;
    $("message").classList.toggle("error", Boolean(error));
  }

  function handStatus(status) {
    $("status-badge").hidden = false;
    $("status-badge").textContent = status === "ended" ? "ended" : "in progress";
  }

  function liveSay(text) {
    $("live-status").hidden = false;
    $("live-status").textContent = text;
    $("live-badge").hidden = document.body.dataset.live !== "open";
  }

  function setBody(values) {
    for (const [key, value] of Object.entries(values)) document.body.dataset[key] = value;
  }

  function idsFromPath(path) {
    const parts = path.split("/").filter(Boolean);  // ["replay", table_id, hand_no]
    return [decodeURIComponent(parts[1] || ""), Number(parts[2])];
  }

  function element(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function testid(node, id) {
    node.dataset.testid = id;
    return node;
  }

  function labelled(label, value, id, className) {
    const wrap = element("span", className || "");
    wrap.append(`${label} `, testid(element("b", "", String(value)), id));
    return wrap;
  }
})();
