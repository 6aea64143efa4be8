"""How a hand is proved: the exact algorithms, and a verifier anyone can run.

Everything here is the standard library only (the Ed25519 signature check uses
the ``cryptography`` package when it is installed and says so when it is not; the
rules check replays the hand with the poker engine, ``domain.poker.replayed``),
so ``python3 -m domain.fairness verify FILE --public-key KEY`` runs from a bare
checkout. FILE is the JSON body of ``GET /v1/tables/{table_id}/hands/{hand_no}/
history`` exactly as downloaded, by a player or by the auditor; KEY is the
service's public key (``GET /v1/fairness``). Its exit status: 0 verified, 1 a check
failed, 2 the file cannot be read (or is no history, or the key given is no key), 3
partly verified (no receipt, as in a hand in progress; a hand imported from a document;
the receipt's signature not checked, or only against the key the file names, which a
forger would choose).

The algorithms (``ALGORITHMS`` says the same for ``GET /v1/fairness``):

* canonical JSON: ``json.dumps(value, sort_keys=True, separators=(",", ":"),
  ensure_ascii=False)`` encoded as UTF-8.
* chain: each event's ``hash = sha256(prev_hash + canonical JSON of its fields
  type, data, version, event_id, occurred_at, actor, command_id, prev_hash)``,
  hex; the first ``prev_hash`` is 64 zeros. ``openings`` are outside the chain.
* commitments: a value some viewer may not see (a down card, a discard, a
  replacement, the deck) stands in ``data`` as ``{"commitment": c}`` with
  ``c = sha256(bytes.fromhex(salt) + canonical_json(value))``, hex, and a salt
  of 16 random bytes. A viewer receives, in ``openings``, ``{pointer: {"value",
  "salt"}}`` for exactly the values they may see (RFC 6901 JSON pointers into
  ``data``, such as ``/cards/0``).
* seeds: ``HandStarted.seed_commitment = sha256(bytes.fromhex(server_seed))``,
  published by the table as ``next_seed_commitment`` before the hand. The deck
  is ``domain.cards.shuffled(STANDARD_DECK, deck_seed)`` with ``deck_seed =
  sha256(bytes.fromhex(server_seed) + canonical_json({"client_seeds": {seat:
  client_seed of every seat dealt in}, "hand_no": n}))``, hex.
* receipts: Ed25519 over the canonical JSON of the receipt ``{"table_id",
  "hand_no", "version", "head_hash", "stacks", "table_version",
  "table_head_hash"}``, where ``head_hash`` is the hash of the hand's last event
  and ``table_head_hash`` that of the table's event at ``table_version`` (its
  ``HandSettled``). Receipts signed before the table's fields were added lack
  them; a verifier checks the signature over the receipt as it is.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache, partial
from json.encoder import encode_basestring
from typing import Any

from domain.cards import STANDARD_DECK, codes, parse_cards, shuffled
from domain.errors import DomainError

JSON_SCALARS = frozenset({str, int, float, bool, type(None)})  # the types of JSON's scalars

GENESIS_HASH = "0" * 64
CHAINED_FIELDS = ("type", "data", "version", "event_id", "occurred_at", "actor", "command_id",
                  "prev_hash")
SALT_BYTES = 16
_CARDS = codes(STANDARD_DECK)  # a whole deck, as an imported hand's must be
_INDEX = re.compile(r"0|[1-9][0-9]*")  # an array index in a JSON pointer (RFC 6901)
_SALT = re.compile(f"[0-9a-f]{{{2 * SALT_BYTES}}}")

ALGORITHMS = {
    "canonical_json": "json.dumps(value, sort_keys=True, separators=(',', ':'), "
                      "ensure_ascii=False), UTF-8 encoded",
    "chain": "hash = sha256(prev_hash + canonical_json({type, data, version, event_id, "
             "occurred_at, actor, command_id, prev_hash})) as lowercase hex; the first event's "
             "prev_hash is 64 zeros; openings are not part of the chain",
    "commitment": "a hidden value stands in data as {\"commitment\": sha256(bytes.fromhex(salt) "
                  "+ canonical_json(value))} with a 16-byte random salt; an opening is "
                  "{\"value\", \"salt\"} under the RFC 6901 JSON pointer of the value in data",
    "seed_commitment": "sha256(bytes.fromhex(server_seed)) as hex; the table publishes it as "
                       "next_seed_commitment before the hand and HandStarted repeats it",
    "deck": "deck_seed = sha256(bytes.fromhex(server_seed) + canonical_json({\"client_seeds\": "
            "{seat: client_seed for every seat dealt in}, \"hand_no\": hand_no})), its 32 "
            "bytes, not their hex (a reshuffle shuffles the same way from its own seed); the "
            "stream is sha256(deck_seed + counter) for counter = 0, 1, 2, ... as 8-byte "
            "big-endian integers, concatenated; draw(n) reads the stream's next 8 bytes as a "
            "big-endian integer x, reads again while x >= 2**64 - 2**64 % n, and returns x % "
            "n; the deck starts as the 52 cards in index order (2c 2d 2h 2s 3c ... Ks Ac Ad "
            "Ah As) and for i from 51 down to 1 card i and card draw(i + 1) swap places; "
            "cards are dealt from index 0",
    "dealing": "cards come off the top of the stub (first the deck) in the order of the "
               "events: a run of alike CardsDealt events (as many cards each, all face up or "
               "all down) deals a round at a time, so with m events of c cards the j-th "
               "event's r-th card (from 0) is the stub's (r * m + j)-th; BoardDealt and each "
               "CardsDrawn's received cards take the next in turn. StubReshuffled makes a "
               "new stub: shuffled(rest + mucked) seeded with sha256(bytes.fromhex(key) + "
               "canonical_json({\"stub\": rest, \"mucked\": mucked})) as hex, where rest is "
               "what is left of the stub and mucked the cards mucked since the last reshuffle, "
               "in order: a discard's cards as discarded, a folded hand's as its seat held "
               "them (a draw's cards in the places of its discards); key is HandStarted's "
               "hidden reshuffle_key, sha256(bytes.fromhex(server_seed) + "
               "b\"cardroom/reshuffle\") as hex, so that nobody who knows the cards can "
               "foretell the new stub (empty in a hand imported, or started before 24 "
               "November 2026 or at a table whose options lack reshuffle: seeded); an "
               "imported hand's reshuffles make instead, in turn, the stubs of "
               "HandStarted's hidden source.stubs, each of the same cards as rest + mucked. A "
               "CardsDrawn's held is the seat's hand after the draw (the cards it did not "
               "discard and those received), sorted as strings; a hand shown at the showdown "
               "opens its last draw's held, not the cards dealt and drawn (held is empty at a "
               "table whose options lack shown_draws: hidden)",
    "receipt": "Ed25519 signature, hex, over canonical_json(receipt) where receipt is "
               "{table_id, hand_no, version, head_hash, stacks, table_version, "
               "table_head_hash}; head_hash is the hash of the hand's last event, stacks maps "
               "each seat (as a string) to its final stack, and table_head_hash is the hash "
               "of the table's event at table_version, its HandSettled for the hand (receipts "
               "signed before these two were added lack them)",
    "verify": "python3 -m domain.fairness verify HISTORY.json --public-key HEX",
}


# --- the algorithms -------------------------------------------------------------

def canonical_json(value: Any) -> str:
    return _CANONICAL.encode(value)


# json.dumps with these arguments makes a new encoder at every call
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def envelope_hash(envelope: dict, data_json: str | None = None) -> str:
    """The chain hash of a stored event (only ``CHAINED_FIELDS`` count). ``data_json``: the
    canonical JSON of its ``data`` where the caller holds it already (as it was stored),
    written into the body as it is rather than encoded again."""
    get = envelope.get
    if data_json is None:
        data_json = canonical_json(get("data"))
    # canonical_json of the chained fields, keys in order, written field by field: several
    # times faster than encoding the whole object (the fields are scalars but for data)
    body = (f'{{"actor":{_scalar(get("actor"))},"command_id":{_scalar(get("command_id"))},'
            f'"data":{data_json},"event_id":{_scalar(get("event_id"))},'
            f'"occurred_at":{_scalar(get("occurred_at"))},"prev_hash":{_scalar(get("prev_hash"))},'
            f'"type":{_scalar(get("type"))},"version":{_scalar(get("version"))}}}')
    return hashlib.sha256((get("prev_hash") + body).encode()).hexdigest()


def _scalar(value: Any) -> str:
    """``canonical_json(value)``, at once for the kinds of value a chained field (or a
    hidden card) holds."""
    kind = type(value)
    if kind is str:
        return encode_basestring(value)
    if kind is int:
        return int.__repr__(value)
    return "null" if value is None else canonical_json(value)


def commit(value: Any, salt: str) -> str:
    return hashlib.sha256(bytes.fromhex(salt) + _scalar(value).encode()).hexdigest()


def seed_commitment(server_seed: str) -> str:
    return hashlib.sha256(bytes.fromhex(server_seed)).hexdigest()


def deck_order(server_seed: str, client_seeds: dict, hand_no: int) -> list[str]:
    """The deck of a hand, top card first."""
    mixed = canonical_json({"client_seeds": {str(k): v for k, v in client_seeds.items()},
                            "hand_no": hand_no})
    deck_seed = hashlib.sha256(bytes.fromhex(server_seed) + mixed.encode()).hexdigest()
    return list(_deck_of_seed(deck_seed))


@lru_cache(maxsize=4)  # an audit shuffles a hand's deck twice: to check it, to replay
def _deck_of_seed(deck_seed: str) -> tuple[str, ...]:
    return tuple(codes(shuffled(STANDARD_DECK, deck_seed)))


def reshuffle_key(server_seed: str) -> str:
    """The secret a hand's reshuffles mix in (``HandStarted.reshuffle_key``)."""
    return hashlib.sha256(bytes.fromhex(server_seed) + b"cardroom/reshuffle").hexdigest()


def reshuffled_stub(stub: Sequence[str], mucked: Sequence[str], key: str = "") -> list[str]:
    """The new stub when the old runs short: what is left of it and the mucked cards,
    shuffled by them and the hand's ``reshuffle_key`` (none: the cards alone)."""
    mixed = canonical_json({"stub": stub, "mucked": mucked}).encode()
    seed = hashlib.sha256(bytes.fromhex(key) + mixed).hexdigest()
    return codes(shuffled(parse_cards([*stub, *mucked]), seed))


def receipt_message(receipt: dict) -> bytes:
    return canonical_json(receipt).encode()


def seal(data: dict, pointers: Iterable[str], new_salt: Callable[[], str],
         ) -> tuple[dict, dict[str, dict]]:
    """``data`` (plain JSON: dicts with string keys, lists and scalars, as an event's
    ``to_dict`` gives it) with the values at ``pointers`` replaced by commitments, and
    their openings. ``data`` itself is left as it was."""
    sealed = _copied(data)
    openings = {}
    for pointer in pointers:
        value, salt = resolve(sealed, pointer), new_salt()
        openings[pointer] = {"value": value, "salt": salt}
        _assign(sealed, pointer, {"commitment": commit(value, salt)})
    return sealed, openings


def unseal(sealed: dict, openings: dict[str, dict]) -> dict:
    """The data with the given openings put back in place of their commitments (``sealed``
    itself when there are none: most events hide nothing)."""
    if not openings:
        return sealed
    data = _copied(sealed)
    for pointer, opening in openings.items():
        _assign(data, pointer, opening["value"])
    return data


def _copied(value: Any) -> Any:
    """A copy of JSON data, its lists and objects copied all the way down (a scalar item,
    the most common, is taken as it is, with no call)."""
    if isinstance(value, dict):
        return {key: item if type(item) in JSON_SCALARS else _copied(item)
                for key, item in value.items()}
    if isinstance(value, list):
        return [item if type(item) in JSON_SCALARS else _copied(item) for item in value]
    return value


def resolve(data: Any, pointer: str) -> Any:
    return _walk(data, _tokens(pointer))


def _assign(data: Any, pointer: str, value: Any) -> None:
    *parents, last = _tokens(pointer)
    node = _walk(data, parents)
    if isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value


def _walk(node: Any, tokens) -> Any:
    for token in tokens:
        node = node[int(token)] if isinstance(node, list) else node[token]
    return node


@lru_cache(maxsize=4096)  # a game's pointers are few, and every hidden value is behind one
def _tokens(pointer: str) -> tuple[str, ...]:
    if not pointer.startswith("/"):
        raise ValueError(f"not a JSON pointer: {pointer!r}")
    return tuple(t.replace("~1", "/").replace("~0", "~") for t in pointer[1:].split("/"))


# --- the verifier ---------------------------------------------------------------

class Problem(Exception):
    """The first thing found wrong, naming the event by its version."""


class Skipped(Exception):
    """A check this history cannot support (the seed not revealed to its viewer, say)."""


def verify_history(history: dict, public_key: str | None = None,
                   data_json: list[str | None] | None = None,
                   rules_replayed: bool = False) -> list[dict]:
    """The checks of a downloaded history, each ``{"name", "ok", "detail"}`` (and
    ``"skipped": true`` for one this history cannot support). ``data_json``: for each
    event, the canonical JSON of its data where the caller holds it (``envelope_hash``).
    ``rules_replayed``: the caller decides every move again by the rules (the audit), which
    pays each pot again from every hand, so the rules check, a lesser copy, is left out."""
    events = history.get("events") or []
    checks = [("hash_chain", partial(_hash_chain, data_json=data_json)),
              ("commitments", partial(_commitments, data_json=data_json)),
              ("shown_hands", _shown_hands),
              *([] if rules_replayed else [("rules", _rules)]),
              ("seed_commitment", _seed), ("deck", _deck), ("receipt", _receipt)]
    results = []
    for name, check in checks:
        try:
            detail = check(history, events, public_key)
            results.append({"name": name, "ok": True, "detail": detail})
        except Skipped as reason:
            results.append({"name": name, "ok": True, "skipped": True, "detail": str(reason)})
        except Problem as problem:
            results.append({"name": name, "ok": False, "detail": str(problem)})
        except (KeyError, TypeError, ValueError, IndexError, AttributeError, StopIteration,
                ArithmeticError, RecursionError, RuntimeError, DomainError) as error:  # from
            # events and options no engine would make (RuntimeError: a generator's
            # StopIteration; DomainError: the rules refuse what they are given)
            results.append({"name": name, "ok": False,
                            "detail": f"malformed history: {type(error).__name__}: {error}"})
    return results


def _hash_chain(history, events, _key, data_json=None) -> str:
    if not events:
        raise Problem("the history holds no events")
    problem = chain_problem(events, data_json)
    if problem:
        raise Problem(problem)
    if history.get("version") not in (None, len(events)):
        raise Problem(f"the history says version {history['version']} but holds "
                      f"{len(events)} events")
    return f"{len(events)} events chained"


def chain_problem(events: list[dict], data_json: list[str | None] | None = None) -> str | None:
    """The first break in a stream's chain (versions 1..n, links, hashes), or None.
    ``data_json``: as ``verify_history``'s."""
    previous = GENESIS_HASH
    for position, event in enumerate(events, start=1):
        version = event.get("version")
        if type(version) is not int or version != position:
            return (f"event {version}: found at position {position}; events are missing "
                    "or out of order")
        if event.get("prev_hash") != previous:
            return f"event {version}: prev_hash is not the hash of event {version - 1}"
        try:
            hashed = envelope_hash(event, data_json and data_json[position - 1])
        except RecursionError:
            return f"event {version}: its data is nested too deeply to be hashed"
        if hashed != event.get("hash"):
            return f"event {version}: hash does not match its content"
        previous = event["hash"]
    return None


def table_signed_problem(receipt: dict, table_events: list[dict]) -> str | None:
    """Whether ``receipt`` signs the table's events as they are: its ``table_head_hash`` is
    the hash of the table's event at ``table_version``, so every table event up to the
    hand's settlement is as it was when the hand ended (given an unbroken chain and a
    valid signature, checked apart). None when it does."""
    version = receipt.get("table_version")
    found = next((e for e in table_events if e.get("version") == version), None)
    if found is None:
        return (f"the receipt signs the table's event {version}, which the table's events "
                "do not hold")
    if found.get("hash") != receipt.get("table_head_hash"):
        return (f"the table's event {version} is not the one the receipt signs: the table's "
                "events up to the hand's settlement were changed since")
    return None


def _commitments(history, events, _key, data_json=None) -> str:
    """Each opening matches its commitment, under the one pointer that names it (array
    indices written as RFC 6901 writes them) and with a salt of ``SALT_BYTES``; with the
    server seed revealed, the reader sees everything, so every commitment is opened (each
    opening being another commitment's, as many openings as commitments; ``data_json``
    counts these where the caller holds it)."""
    count = 0
    for index, event in enumerate(events):
        openings = event.get("openings") or {}
        for pointer, opening in openings.items():
            sealed = _named(event["data"], pointer)
            if not isinstance(sealed, dict) or "commitment" not in sealed:
                raise Problem(f"event {event['version']}: opening {pointer} has no commitment")
            if not _SALT.fullmatch(str(opening["salt"])) or commit(
                    opening["value"], opening["salt"]) != sealed["commitment"]:
                raise Problem(f"event {event['version']}: opening {pointer} does not match "
                              "its commitment")
            count += 1
        text = data_json[index] if data_json else None
        if history.get("server_seed") and len(openings) < (
                text.count('{"commitment":') if text else len(_sealed(event["data"]))):
            unopened = next((p for p in _sealed(event["data"]) if p not in openings), "?")
            raise Problem(f"event {event['version']}: the server seed is revealed, the "
                          f"commitment at {unopened} is not opened")
    return f"{count} openings match their commitments"


def _named(data: Any, pointer: str) -> Any:
    """The value ``pointer`` names in ``data`` as RFC 6901 writes it (an array index as
    digits with no sign, space or leading zero, which ``int`` would take); None if none."""
    node = data
    for token in _tokens(pointer):
        if isinstance(node, list):
            if not _INDEX.fullmatch(token) or int(token) >= len(node):
                return None
            node = node[int(token)]
        elif isinstance(node, dict) and token in node:
            node = node[token]
        else:
            return None
    return node


def _sealed(data: dict) -> list[str]:
    """The pointers of the commitments in an event's ``data`` (most of it scalars, passed
    over at once)."""
    found, nodes = [], [(data, "")]
    while nodes:
        node, pointer = nodes.pop()
        if type(node) is dict:
            if len(node) == 1 and "commitment" in node:
                found.append(pointer)
                continue
            nodes += [(item, f"{pointer}/{key.replace('~', '~0').replace('/', '~1')}")
                      for key, item in node.items() if type(item) not in JSON_SCALARS]
        elif type(node) is list:
            nodes += [(item, f"{pointer}/{index}") for index, item in enumerate(node)
                      if type(item) not in JSON_SCALARS]
    return found


def _shown_hands(_history, events, _key) -> str:
    held: dict[int, set] = {}  # by the opened commitments: what each seat holds at the end
    unopened: set[int] = set()  # seats some of whose cards this viewer may not read
    for event in events:
        kind, data = event["type"], event["data"]
        if kind == "CardsDealt":
            held.setdefault(data["seat"], set()).update(_opened_cards(event, "cards"))
            if len(_opened_cards(event, "cards")) < len(data["cards"]):
                unopened.add(data["seat"])
        elif kind == "CardsDrawn":
            cards = held.setdefault(data["seat"], set())
            cards.difference_update(_opened_cards(event, "discarded"))
            cards.update(_opened_cards(event, "received"))
            if any(len(_opened_cards(event, f)) < len(data[f]) for f in ("discarded", "received")):
                unopened.add(data["seat"])
            if data.get("held"):  # the hand committed to again: what its showdown opens
                _check_held(event, cards if data["seat"] not in unopened else None)
                held[data["seat"]] = set(_opened_cards(event, "held"))
    shown = [h for e in events if e["type"] == "ShowdownEvaluated" for h in e["data"]["hands"]]
    for hand in shown:
        strangers = [c for c in hand["cards"] if c not in held.get(hand["seat"], set())]
        if strangers:
            version = next(e["version"] for e in events if e["type"] == "ShowdownEvaluated")
            raise Problem(f"event {version}: seat {hand['seat']} shows {' '.join(strangers)}, "
                          "which the opened commitments do not leave that seat holding")
    return f"{len(shown)} shown hands match the cards committed to them"


def _rules(_history, events, _key) -> str:
    from domain.poker.replayed import rules_problem  # here: the engine imports this module
    if not any(event["type"] == "HandEnded" for event in events):
        raise Skipped("the hand has not ended")
    problem = rules_problem(events)
    if problem:
        raise Problem(problem)
    return ("the moves, the hands shown and the pots are as the rules make them, and the "
            "stacks as the bets and pots leave them")


def _check_held(event: dict, cards: set | None) -> None:
    """A draw's ``held`` is the hand the cards dealt and drawn leave the seat holding, sorted
    (``cards``: that hand, where this viewer may read all of it)."""
    held = _opened_cards(event, "held")
    if len(held) == len(event["data"]["held"]) and (
            held != sorted(held) or cards is not None and set(held) != cards):
        raise Problem(f"event {event['version']}: CardsDrawn's held is not the seat's hand "
                      "after the draw, sorted")


def _seed(history, events, _key) -> str:
    seed = _revealed_seed(history, events, "the server seed")
    started = _started(events)
    if _imported(started):
        return "no seed: the hand was imported, its cards came from its document"
    if seed_commitment(seed) != started["data"]["seed_commitment"]:
        raise Problem(f"event {started['version']}: the server seed does not match "
                      "seed_commitment")
    return "the server seed matches its commitment"


def _revealed_seed(history, events, what: str) -> str:
    """The server seed; Skipped where this reader may not have it, but a hand ended at a
    table whose options reveal it to everyone."""
    seed = history.get("server_seed")
    if seed:
        return seed
    started = _started(events) if events else None
    if started and started["data"]["options"].get("reveal") == "everyone" and (
            events[-1]["type"] == "HandEnded"):
        raise Problem(f"event {events[-1]['version']}: the hand has ended at a table that "
                      "reveals the server seed to everyone, and the history holds none")
    raise Skipped(f"{what} is not revealed to this viewer")


def _deck(history, events, _key) -> str:
    seed = _revealed_seed(history, events, "the deck")
    started = _started(events) if events else None
    opening = started and (started.get("openings") or {}).get("/deck")
    if not opening:
        raise Problem(f"event {started['version']}: the server seed is revealed, the deck "
                      "is not opened")
    data, deck = started["data"], opening["value"]
    if not _imported(started) and set(data["client_seeds"]) != {
            str(seat["seat"]) for seat in data["seats"]}:
        raise Problem(f"event {started['version']}: client_seeds are not those of the seats "
                      "dealt in")
    if not _imported(started) and deck != deck_order(seed, data["client_seeds"], data["hand_no"]):
        raise Problem(f"event {started['version']}: the deck is not the one the seeds determine")
    if _imported(started) and (not isinstance(deck, list) or not all(
            isinstance(card, str) for card in deck) or sorted(deck) != sorted(_CARDS)):
        raise Problem(f"event {started['version']}: the imported deck is not the 52 cards, "
                      "each once")
    seeded = data["options"].get("reshuffle") == "seeded" and not _imported(started)
    if _reshuffle_key(started) != (reshuffle_key(seed) if seeded else ""):
        raise Problem(f"event {started['version']}: the reshuffle_key is not the one the "
                      "server seed determines")
    dealt = dealt_in_order(deck, events)
    origin = "was imported" if _imported(started) else "matches the seeds"
    return f"the deck {origin}; {dealt} dealt cards came off it in the order dealing takes"


def dealt_in_order(deck: list[str], events: list[dict]) -> int:
    """How many cards ``events`` (as a history holds them, their hidden values opened or
    in the clear) deal, each checked to be the one ``ALGORITHMS["dealing"]`` takes off the
    stub there, and each reshuffled stub the one it makes; Problem at the first that is not."""
    stub, top, count, position = list(deck), 0, 0, 0
    started = events[0] if events and events[0]["type"] == "HandStarted" else None
    key = _reshuffle_key(started) if started else ""
    stubs = iter(_given_stubs(started) if started else ())
    held: dict[Any, list[str]] = {}
    mucked: list[str] = []
    while position < len(events):
        event = events[position]
        kind, data = event["type"], event["data"]
        if kind == "CardsDealt":
            run = _alike_deals(events, position)
            for j, dealt in enumerate(run):
                taken = [_taken(stub, top + r * len(run) + j, dealt)
                         for r in range(len(dealt["data"]["cards"]))]
                _expect(dealt, "cards", taken)
                held.setdefault(dealt["data"]["seat"], []).extend(taken)
                count += len(taken)
            top += sum(len(dealt["data"]["cards"]) for dealt in run)
            position += len(run)
            continue
        if kind in ("BoardDealt", "CardsDrawn"):
            field = "cards" if kind == "BoardDealt" else "received"
            taken = [_taken(stub, top + i, event) for i in range(len(data[field]))]
            _expect(event, field, taken)
            top, count = top + len(taken), count + len(taken)
            if kind == "CardsDrawn":
                discarded = _opened_cards(event, "discarded")
                replacements = iter(taken)
                held[data["seat"]] = [next(replacements) if card in discarded else card
                                      for card in held.get(data["seat"], [])]
                mucked += discarded
        elif kind == "PlayerFolded":
            mucked += held.pop(data["seat"], [])
        elif kind == "StubReshuffled":
            rest, given = stub[top:] + mucked, next(stubs, None)
            if given is not None and sorted(given) != sorted(rest):
                raise Problem(f"event {event['version']}: the imported hand's reshuffled stub "
                              "does not hold the rest of the stub and the mucked cards")
            stub = given if given is not None else reshuffled_stub(stub[top:], mucked, key)
            top, mucked = 0, []
            opened = data["cards"] if isinstance(data["cards"], list) else (
                (event.get("openings") or {}).get("/cards") or {}).get("value")
            if opened != stub:
                raise Problem(f"event {event['version']}: the reshuffled stub is not the one "
                              "the rest of the stub and the mucked cards make")
        position += 1
    if next(stubs, None) is not None:
        raise Problem(f"event {started['version']}: the imported hand's source.stubs holds a "
                      "stub no reshuffle makes")
    return count


def _alike_deals(events: list[dict], position: int) -> list[dict]:
    """The CardsDealt events from ``position`` dealt together, a round at a time."""
    first, run = events[position]["data"], []
    for event in events[position:]:
        data = event["data"]
        if event["type"] == "CardsDealt" and type(data.get("face_up")) is not bool:
            raise Problem(f"event {event['version']}: CardsDealt's face_up is not true or "
                          "false")
        if event["type"] != "CardsDealt" or data.get("face_up") != first.get("face_up") or (
                len(data["cards"]) != len(first["cards"])):
            break
        run.append(event)
    return run


def _taken(stub: list[str], index: int, event: dict) -> str:
    if index >= len(stub):
        raise Problem(f"event {event['version']}: it deals more cards than the stub holds")
    return stub[index]


def _expect(event: dict, field: str, cards: list[str]) -> None:
    if _opened_cards(event, field) != cards:
        raise Problem(f"event {event['version']}: {event['type']} does not deal the cards "
                      f"dealing takes off the stub there ({' '.join(cards)})")


def _reshuffle_key(started: dict) -> str:
    """HandStarted's reshuffle_key, in the clear or opened ("" where it has none); asked
    only of a reader the deck is opened to, who has every opening of HandStarted."""
    key = started["data"].get("reshuffle_key", "")
    if isinstance(key, dict):  # a commitment: its opening
        key = ((started.get("openings") or {}).get("/reshuffle_key") or {}).get("value")
    if not isinstance(key, str):
        raise Problem(f"event {started['version']}: the deck is opened, the reshuffle_key "
                      "is not")
    return key


def _given_stubs(started: dict) -> list[list[str]]:
    """An imported hand's reshuffled stubs (``source["stubs"]``), opened (asked as
    ``_reshuffle_key`` is)."""
    stubs = (started["data"].get("source") or {}).get("stubs", [])
    if isinstance(stubs, dict):  # a commitment: its opening
        stubs = ((started.get("openings") or {}).get("/source/stubs") or {}).get("value")
    if not isinstance(stubs, list) or not all(
            isinstance(stub, list) and all(isinstance(card, str) for card in stub)
            for stub in stubs):
        raise Problem(f"event {started['version']}: the deck is opened, the imported "
                      "hand's reshuffled stubs are not (source.stubs: lists of cards)")
    return stubs


def _imported(started: dict) -> bool:
    return bool(started["data"].get("source"))


def _receipt(history, events, public_key) -> str:
    signed = history.get("receipt")
    ended = bool(events) and events[-1]["type"] == "HandEnded"
    if signed is None:
        if ended:
            raise Problem(f"event {events[-1]['version']}: the hand has ended but the history "
                          "holds no receipt")
        if history.get("status") == "ended" or history.get("server_seed"):
            raise Problem("the history says the hand has ended (its status or its revealed "
                          "server seed) but holds neither HandEnded nor a receipt")
        raise Skipped("the hand has not ended")
    receipt, head = signed["receipt"], events[-1] if events else None
    if head is None or receipt["head_hash"] != head["hash"] or receipt["version"] != head["version"]:
        where = f"event {head['version']}" if head else "the history"
        raise Problem(f"{where}: the receipt was signed over version {receipt['version']} with "
                      f"head {receipt['head_hash'][:16]}..., not this history's last event")
    for name in ("table_id", "hand_no"):
        if name in history and receipt[name] != history[name]:
            raise Problem(f"the receipt is for {name} {receipt[name]!r}, not "
                          f"{history[name]!r}")
    started = _started(events)
    if receipt["hand_no"] != started["data"]["hand_no"]:
        raise Problem(f"event {started['version']}: the hand started as hand "
                      f"{started['data']['hand_no']!r}, the receipt is for hand "
                      f"{receipt['hand_no']!r}")
    if not ended or receipt["stacks"] != head["data"]["stacks"]:
        raise Problem(f"event {head['version']}: the receipt's stacks are not the hand's final "
                      "stacks")
    key = public_key or history.get("public_key")
    verdict = signature_valid(key, receipt, signed["signature"])
    if verdict is None:
        raise Skipped("head and stacks match; the signature is not checked: the cryptography "
                      "package is not installed")
    if not verdict:
        raise Problem(f"event {head['version']}: the receipt's signature is not valid for "
                      f"public key {key}")
    return f"signed receipt matches the head and the final stacks (public key {key})"


def signature_valid(public_key: str, receipt: dict, signature: str) -> bool | None:
    """True or False; None when the ``cryptography`` package is not installed."""
    try:
        from cryptography.exceptions import InvalidSignature
    except ImportError:
        return None
    try:
        _verifying_key(public_key).verify(bytes.fromhex(signature), receipt_message(receipt))
    except (InvalidSignature, ValueError, TypeError):
        return False
    return True


@lru_cache(maxsize=16)  # a service signs with one key: its receipts are checked against it
def _verifying_key(public_key: str):
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
    return Ed25519PublicKey.from_public_bytes(bytes.fromhex(public_key))


def _started(events) -> dict:
    if not events or events[0]["type"] != "HandStarted":
        raise Problem("event 1: the hand does not begin with HandStarted")
    return events[0]


def _opened_cards(event: dict, field: str) -> list[str]:
    """The cards of ``field`` this viewer can read: public ones and opened commitments."""
    openings = event.get("openings") or {}
    cards = []
    for index, card in enumerate(event["data"][field]):
        if isinstance(card, str):
            cards.append(card)
        elif f"/{field}/{index}" in openings:
            cards.append(openings[f"/{field}/{index}"]["value"])
    return cards


# --- the command line -----------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m domain.fairness",
                                     description="Verify a downloaded cardroom hand history.")
    commands = parser.add_subparsers(dest="command", required=True)
    verify = commands.add_parser("verify", help="check a history JSON file")
    verify.add_argument("file", help="the JSON body of GET .../hands/{hand_no}/history")
    verify.add_argument("--public-key", help="the service's Ed25519 public key in hex (from GET "
                        "/v1/fairness); without it, the key the file names is used, and the "
                        "verdict says so (exit status 3)")
    args = parser.parse_args(argv)
    try:
        with open(args.file, encoding="utf-8") as handle:
            history = json.load(handle)
    except (OSError, ValueError, RecursionError) as error:
        print(_printable(f"cannot read {args.file}: {error}"), file=sys.stderr)
        return 2
    events = history.get("events", []) if isinstance(history, dict) else None
    if not isinstance(events, list) or not all(isinstance(e, dict) for e in events):
        print(f"{args.file} is not a history (a JSON object with a list of events)",
              file=sys.stderr)
        return 2
    if args.public_key is not None and not re.fullmatch(r"[0-9a-fA-F]{64}", args.public_key):
        print(_printable(f"--public-key {args.public_key} is not an Ed25519 public key "
                         "(64 hex digits)"), file=sys.stderr)
        return 2
    checks = verify_history(history, args.public_key)
    for check in checks:
        verdict = "skip" if check.get("skipped") else "ok  " if check["ok"] else "FAIL"
        print(_printable(f"{verdict} {check['name']}: {check['detail']}"))
    print("note: the hand beside each event (its \"state\") is the service's view of the "
          "events, neither chained nor signed: what is verified is the events")
    failed = next((c for c in checks if not c["ok"]), None)
    if failed:
        print("\nnot verified: " + _printable(failed["detail"]), file=sys.stderr)
        return 1
    return _verdict(history, checks, args.public_key)


def _verdict(history: dict, checks: list[dict], public_key: str | None) -> int:
    """0 when the receipt's signature was checked against the key given; 3 when there is no
    receipt (a hand in progress), the hand says it was imported (its cards are a
    document's, not the seeds'), or the signature could not be checked, or only against
    the key the file names (a forger would name their own)."""
    receipt = next(c for c in checks if c["name"] == "receipt")
    if history.get("receipt") is None:
        print("\npartly verified: the history holds no receipt, as a hand in progress has none "
              "yet: nothing in it is signed, so it proves nothing against a forger")
        return 3
    if _imported(_started(history["events"])):
        print("\npartly verified: the history says the hand was imported, so its cards came "
              "from a document, not from seeds; whether its table is an import table is "
              "checked online (GET .../audit, check table_start)")
        return 3
    if receipt.get("skipped"):
        print("\npartly verified: the receipt's signature is not checked (install the "
              "cryptography package)")
        return 3
    if not public_key:
        print("\npartly verified: the receipt is signed by the public key the file names; it "
              "proves the hand only if that is the service's key (GET /v1/fairness): pass it "
              "as --public-key")
        return 3
    print("\nverified")
    return 0


def _printable(text: str) -> str:
    """``text`` with what a terminal would not show as it is (a control character, a lone
    surrogate from the file) escaped."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


if __name__ == "__main__":
    sys.exit(main())
