"""openapi.yaml is the contract: a valid OpenAPI 3.1 document that lists exactly the
app's routes, whose request schemas say what the marshmallow schemas accept, whose
error-code list matches the codes the code raises, and whose response schemas
accept the real answers of a played hand (and its refusals)."""

from __future__ import annotations

import ast
import dataclasses
import json
import re
from pathlib import Path

import pytest
import yaml
from marshmallow import fields as ma_fields
from marshmallow import validate as ma_validate
from openapi_schema_validator import OAS31Validator
from openapi_spec_validator import validate as validate_spec
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from domain.events import EVENT_TYPES
from service import schemas
from service.problems import DOMAIN_STATUS
from service.store import receipt_key

ROOT = Path(__file__).resolve().parent.parent
SPEC_PATH = ROOT / "openapi.yaml"
SPEC_URI = "urn:cardroom:openapi"
IGNORED_METHODS = {"HEAD", "OPTIONS"}


@pytest.fixture(scope="module")
def spec() -> dict:
    return yaml.safe_load(SPEC_PATH.read_text())


# --- the document ------------------------------------------------------------


def test_spec_is_valid_openapi_3_1(spec):
    assert spec["openapi"].startswith("3.1")
    validate_spec(spec)


def test_service_serves_the_spec_file(client):
    response = client.get("/openapi.yaml")
    assert response.status_code == 200
    assert response.mimetype == "application/yaml"
    assert response.get_data(as_text=True) == SPEC_PATH.read_text()


def test_every_route_of_the_app_is_in_the_spec_with_the_same_methods(client, spec):
    routes: dict[str, set[str]] = {}
    for rule in client.application.url_map.iter_rules():
        if rule.endpoint == "static":
            continue
        path = re.sub(r"<(?:[^:<>]+:)?([^<>]+)>", r"{\1}", rule.rule)
        routes.setdefault(path, set()).update(rule.methods - IGNORED_METHODS)
    documented = {path: {m.upper() for m in item if m in _HTTP_METHODS}
                  for path, item in spec["paths"].items()}
    assert routes == documented


_HTTP_METHODS = {"get", "put", "post", "delete", "patch", "head", "options", "trace"}


def test_every_example_validates_against_its_schema(spec):
    """A client copies the examples: each is an answer its schema accepts (a problem's
    ``request_id`` included)."""
    contract = Contract(None, spec)
    examples = list(_examples(spec, ""))
    assert len(examples) > 20  # the walk still finds them
    for example, pointer in examples:
        contract._validate(example, pointer, f"example at {pointer}")


def _examples(node, pointer: str):
    """Each example in ``node`` with the pointer of the schema it illustrates: a media
    type's ``example`` and a schema's ``examples``."""
    if not isinstance(node, dict):
        if isinstance(node, list):
            for index, item in enumerate(node):
                yield from _examples(item, pointer + _pointer(str(index)))
        return
    if "schema" in node and "example" in node:
        yield node["example"], pointer + "/schema"
    if isinstance(node.get("examples"), list) and {"type", "$ref", "allOf"} & set(node):
        yield from ((example, pointer) for example in node["examples"])
    for name, value in node.items():
        if name not in ("example", "examples"):
            yield from _examples(value, pointer + _pointer(name))


def test_path_parameters_are_declared_for_every_placeholder(spec):
    for path, item in spec["paths"].items():
        placeholders = set(re.findall(r"{([^}]+)}", path))
        for method in _HTTP_METHODS & set(item):
            declared = {p["name"] for p in _parameters(spec, item, item[method])
                        if p["in"] == "path"}
            assert declared == placeholders, f"{method.upper()} {path}"


# --- requests: the spec says what marshmallow accepts ------------------------

REQUEST_SCHEMAS = {
    "CreateTableRequest": schemas.CreateTable,
    "JoinTableRequest": schemas.JoinTable,
    "ClientSeedRequest": schemas.ClientSeed,
    "AddChipsRequest": schemas.AddChips,
    "StartHandRequest": schemas.StartHand,
    "ActionRequest": schemas.Action,
    "ImportPhhRequest": schemas.ImportPhh,
}


@pytest.mark.parametrize("name", sorted(REQUEST_SCHEMAS))
def test_request_schema_matches_its_marshmallow_schema(spec, name):
    documented = spec["components"]["schemas"][name]
    marshmallow_schema = REQUEST_SCHEMAS[name]()
    assert documented["additionalProperties"] is False  # unknown fields are refused
    assert set(documented["properties"]) == set(marshmallow_schema.fields)
    assert set(documented.get("required", ())) == {
        n for n, f in marshmallow_schema.fields.items() if f.required}
    for field_name, field in marshmallow_schema.fields.items():
        prop = _resolve(spec, documented["properties"][field_name])
        _assert_bounds_match(field, prop, f"{name}.{field_name}")


def test_after_query_parameter_matches_the_events_query_schema(spec):
    after = spec["components"]["parameters"]["After"]
    field = schemas.EventsQuery().fields["after"]
    _assert_bounds_match(field, after["schema"], "after")
    assert after["schema"]["default"] == field.load_default


def _assert_bounds_match(field: ma_fields.Field, prop: dict, where: str) -> None:
    types = prop["type"] if isinstance(prop["type"], list) else [prop["type"]]
    assert ("null" in types) == field.allow_none, f"{where}: nullability"
    if isinstance(field, ma_fields.List):
        assert "array" in types, where
        item = field.inner
    else:
        item = None
    for validator in field.validators:
        if isinstance(validator, ma_validate.Range):
            assert prop.get("minimum") == validator.min, f"{where}: minimum"
            assert prop.get("maximum") == validator.max, f"{where}: maximum"
        elif isinstance(validator, ma_validate.Length):
            low, high = ("minItems", "maxItems") if item else ("minLength", "maxLength")
            assert prop.get(low, 0) == (validator.min or 0), f"{where}: {low}"
            assert prop.get(high) == validator.max, f"{where}: {high}"
        elif isinstance(validator, ma_validate.OneOf):
            assert prop.get("enum") == list(validator.choices), f"{where}: enum"


# --- errors: every code the code raises is listed with its status -------------

_RAISES = [
    (re.compile(r'DomainError\(\s*"([a-z_]+)"'), lambda code, _: DOMAIN_STATUS.get(code, 422)),
    (re.compile(r'ApiError\(\s*(\d+),\s*"([a-z_]+)"'), lambda status, code: int(status)),
    (re.compile(r'NotFound\(\s*"([a-z_]+)"'), lambda code, _: 404),
    (re.compile(r'problem\(\s*(\d+),\s*"([a-z_]+)"'), lambda status, code: int(status)),
]


def _raised_codes() -> dict[str, int]:
    codes: dict[str, int] = {}
    for source in [*(ROOT / "domain").rglob("*.py"), *(ROOT / "service").rglob("*.py")]:
        text = source.read_text()
        for pattern, status_of in _RAISES:
            for match in pattern.finditer(text):
                groups = match.groups()
                code = groups[-1] if len(groups) == 2 else groups[0]
                codes[code] = status_of(*groups) if len(groups) == 2 else status_of(code, None)
    return codes


def _listed_codes(spec) -> dict[str, int]:
    rows = re.findall(r"^\|\s*`([a-z_]+)`\s*\|\s*(\d{3})\s*\|", spec["info"]["description"], re.M)
    return {code: int(status) for code, status in rows}


def test_every_error_code_raised_is_listed_in_the_description_with_its_status(spec):
    raised, listed = _raised_codes(), _listed_codes(spec)
    assert len(raised) > 20  # the patterns still find the raises
    missing = {code: status for code, status in raised.items() if code not in listed}
    assert not missing, f"codes raised but not listed in info.description: {missing}"
    wrong = {code: (listed[code], status) for code, status in raised.items()
             if listed[code] != status}
    assert not wrong, f"code: (listed status, actual status): {wrong}"


def test_every_field_a_problem_adds_is_a_property_of_problem(spec):
    """A field the code adds to a problem (a keyword of the call that names a listed code,
    such as ``max_body_bytes=``) is documented, with the codes that require it."""
    problem = spec["components"]["schemas"]["Problem"]
    required = {branch["if"]["properties"]["code"]["const"]: set(branch["then"]["required"])
                for branch in problem["allOf"]}
    added = _added_fields(set(_listed_codes(spec)))
    assert len(added) > 5  # the walk still finds them
    for code, field in added:
        assert field in problem["properties"], f"{code} adds {field}, not in Problem"
        assert field in required.get(code, ()), f"{code} adds {field}; Problem requires it not"


def _added_fields(codes: set[str]) -> set[tuple[str, str]]:
    """(code, field) for each keyword argument (but ``headers``) of a call in domain/ or
    service/ that names one of ``codes`` as a plain string argument."""
    added = set()
    for source in [*(ROOT / "domain").rglob("*.py"), *(ROOT / "service").rglob("*.py")]:
        for call in ast.walk(ast.parse(source.read_text())):
            if not isinstance(call, ast.Call):
                continue
            named = {arg.value for arg in call.args if isinstance(arg, ast.Constant)} & codes
            added |= {(code, keyword.arg) for code in named for keyword in call.keywords
                      if keyword.arg not in (None, "headers")}
    return added


def test_every_v1_operation_documents_its_422(spec):
    """Every ``/v1`` route answers 422 ``invalid_query`` to a query parameter it does not
    take (``routes.refuse_unknown_query``), so every one of them lists a 422."""
    missing = [f"{method.upper()} {path}" for path, item in spec["paths"].items()
               if path.startswith("/v1/") for method, operation in item.items()
               if method in _HTTP_METHODS and "422" not in operation["responses"]]
    assert missing == []



def test_every_problem_response_documents_its_request_id_header(spec):
    """Every answer carries ``X-Request-Id``, and a problem repeats it as ``request_id``:
    each problem response, shared or an operation's own, lists the header."""
    responses = {f"components {name}": response
                 for name, response in spec["components"]["responses"].items()}
    responses |= {f"{method.upper()} {path} {status}": response
                  for path, item in spec["paths"].items()
                  for method, operation in item.items() if method in _HTTP_METHODS
                  for status, response in operation["responses"].items()
                  if "$ref" not in response}
    missing = [where for where, response in responses.items()
               if "application/problem+json" in response.get("content", {})
               and "X-Request-Id" not in response.get("headers", {})]
    assert missing == []


def test_every_write_documents_its_replay_header_alike(spec):
    """``Idempotent-Replayed`` is only ever ``true`` (``routes.answered``), on every write."""
    schemas = {f"{method.upper()} {path}": response["headers"]["Idempotent-Replayed"]["schema"]
               for path, item in spec["paths"].items()
               for method, operation in item.items() if method in _HTTP_METHODS
               for response in operation["responses"].values()
               if "Idempotent-Replayed" in response.get("headers", {})}
    assert len(schemas) == 7
    assert {where: schema for where, schema in schemas.items()
            if schema != {"type": "string", "const": "true"}} == {}


def test_every_operation_that_reads_no_body_documents_the_refusal_of_one(spec):
    """A GET or DELETE with a body not sent as JSON gets 415 (``routes.refuse_stray_body``),
    one over the limit 413, one sent with a transfer coding besides chunked 501."""
    missing = [f"{method.upper()} {path} {status}" for path, item in spec["paths"].items()
               for method, operation in item.items() if method in ("get", "delete")
               for status in ("413", "415", "501") if status not in operation["responses"]]
    assert missing == []

# --- events: one data schema per hand event, with the dataclass's fields -----


# fields added after hands were stored without them: a stored event may lack one
ADDED_LATER = {"BlindPosted": {"call_to"}, "BringInPosted": {"call_to"},
               "HandStarted": {"reshuffle_key", "blinds"}, "CardsDrawn": {"held"}}


def test_every_documented_event_type_has_a_data_schema_with_the_events_fields(spec):
    documented = spec["components"]["schemas"]
    for type_name in documented["EventEnvelope"]["properties"]["type"]["enum"]:
        assert type_name in EVENT_TYPES, f"{type_name} is not an event type of domain/events.py"
        data = _resolve(spec, documented[type_name])
        names = {f.name for f in dataclasses.fields(EVENT_TYPES[type_name])}
        assert set(data["properties"]) == names, type_name
        assert set(data["required"]) == names - ADDED_LATER.get(type_name, set()), type_name
        branch = {"if": {"properties": {"type": {"const": type_name}}},
                  "then": {"properties": {"data": {"$ref": f"#/components/schemas/{type_name}"}}}}
        assert branch in documented["EventEnvelope"]["allOf"], type_name


TABLE_EVENTS = {"TableCreated", "PlayerSeated", "ClientSeedChanged", "ChipsAdded", "PlayerLeft",
                "HandOpened", "HandImported", "HandSettled"}  # a table's stream, which no route answers


def test_every_event_type_of_a_hand_is_documented(spec):
    documented = spec["components"]["schemas"]["EventEnvelope"]["properties"]["type"]["enum"]
    assert set(documented) == set(EVENT_TYPES) - TABLE_EVENTS


# --- responses: real answers validate against the spec ----------------------


class Contract:
    """Sends requests through the test client and checks each answer against the spec."""

    def __init__(self, client, spec):
        self.client, self.spec = client, spec
        self.registry = Registry().with_resource(
            SPEC_URI, Resource(contents=spec, specification=DRAFT202012))
        self.checked: set[tuple[str, str, int]] = set()

    def call(self, method: str, template: str, *, token: str | None = None,
             headers: dict | None = None, expect: int | None = None, **kwargs):
        params = kwargs.pop("path", {})
        url = template.format(**params)
        headers = dict(headers or {})
        if token:
            headers["Authorization"] = f"Bearer {token}"
        response = self.client.open(url, method=method, headers=headers, **kwargs)
        if expect is not None:
            assert response.status_code == expect, (method, url, response.get_json())
        self.check(method, template, response)
        return response

    def check(self, method: str, template: str, response) -> None:
        where = f"{method} {template} -> {response.status_code}"
        operation = self.spec["paths"][template][method.lower()]
        status = str(response.status_code)
        assert status in operation["responses"], f"{where}: status not documented"
        documented = _resolve(self.spec, operation["responses"][status])
        assert response.mimetype in documented["content"], f"{where}: {response.mimetype}"
        reference = operation["responses"][status].get("$ref")
        base = reference[1:] if reference else _pointer(
            "paths", template, method.lower(), "responses", status)
        for name, header in documented.get("headers", {}).items():
            if name not in response.headers:
                assert not _resolve(self.spec, header).get("required"), (
                    f"{where}: header {name} missing")
                continue
            at = header["$ref"][1:] if "$ref" in header else base + _pointer("headers", name)
            self._validate(response.headers[name], at + "/schema", where)
        if response.mimetype.endswith("json"):
            self._validate(response.get_json(),
                           base + _pointer("content", response.mimetype, "schema"), where)
        self.checked.add((method, template, response.status_code))

    def _validate(self, instance, pointer: str, where: str) -> None:
        validator = OAS31Validator({"$ref": f"{SPEC_URI}#{pointer}"}, registry=self.registry,
                                   format_checker=OAS31Validator.FORMAT_CHECKER)
        errors = sorted(validator.iter_errors(instance), key=lambda e: list(e.absolute_path))
        assert not errors, f"{where}: " + "; ".join(
            f"{'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message[:300]}"
            for e in errors[:5])


def _pointer(*parts: str) -> str:
    return "/" + "/".join(p.replace("~", "~0").replace("/", "~1") for p in parts)


def _resolve(spec: dict, node: dict) -> dict:
    while "$ref" in node:
        target = spec
        for part in node["$ref"].removeprefix("#/").split("/"):
            target = target[part.replace("~1", "/").replace("~0", "~")]
        node = target
    return node


def _parameters(spec: dict, item: dict, operation: dict) -> list[dict]:
    return [_resolve(spec, p) for p in item.get("parameters", []) + operation.get("parameters", [])]


TABLES = "/v1/tables"
TABLE = "/v1/tables/{table_id}"
PLAYERS = "/v1/tables/{table_id}/players"
CHIPS = "/v1/tables/{table_id}/players/{seat}/chips"
SEED = "/v1/tables/{table_id}/players/{seat}/seed"
SEAT = "/v1/tables/{table_id}/players/{seat}"
HANDS = "/v1/tables/{table_id}/hands"
HAND = "/v1/tables/{table_id}/hands/{hand_no}"
ACTIONS = "/v1/tables/{table_id}/hands/{hand_no}/actions"
EVENTS = "/v1/tables/{table_id}/hands/{hand_no}/events"
STREAM = "/v1/tables/{table_id}/hands/{hand_no}/events/stream"
HISTORY = "/v1/tables/{table_id}/hands/{hand_no}/history"
RECEIPT = "/v1/tables/{table_id}/hands/{hand_no}/receipt"
AUDIT = "/v1/tables/{table_id}/hands/{hand_no}/audit"
REPLAY = "/replay/{table_id}/{hand_no}"


@pytest.fixture
def contract(client, spec):
    return Contract(client, spec)


def test_a_played_hand_answers_as_the_spec_says(contract, fake_backend):
    c = contract
    assert c.call("GET", "/", expect=302).headers["Location"] == "/docs"
    c.call("GET", "/healthz", expect=200)
    c.call("GET", "/metrics", expect=200)
    c.call("GET", "/openapi.yaml", expect=200)
    c.call("GET", "/openapi.json", expect=200)
    c.call("GET", "/docs", expect=200)
    c.call("GET", "/v1/games", expect=200)
    c.call("GET", "/v1/fairness", expect=200)
    table = c.call("POST", TABLES, json={"game": "five-card-draw", "options": {"max_raises": None}},
                   expect=201).get_json()
    at = {"table_id": table["table_id"]}
    admin, auditor = table["admin_token"], table["auditor_token"]
    tokens = {}
    for name in ("ann", "bob", "cy", "dee"):
        seed = {"client_seed": f"{name}'s socks"} if name == "ann" else {}
        seated = c.call("POST", PLAYERS, path=at, json={"name": name, "buy_in": 1000} | seed,
                        headers={"Idempotency-Key": f"join-{name}"}, expect=201).get_json()
        tokens[seated["seat"]] = seated["token"]
    again = c.call("POST", PLAYERS, path=at, json={"name": "bob", "buy_in": 1000},
                   headers={"Idempotency-Key": "join-bob"}, expect=201)
    assert again.headers["Idempotent-Replayed"] == "true"
    c.call("POST", CHIPS, path=at | {"seat": 1}, token=tokens[1], json={"amount": 100},
           expect=201)
    c.call("PUT", SEED, path=at | {"seat": 2}, token=tokens[2], json={"client_seed": "dice"},
           expect=200)
    c.call("DELETE", SEAT, path=at | {"seat": 4}, token=tokens.pop(4), expect=200)
    c.call("GET", TABLE, path=at, token=admin, expect=200)

    hand_no = c.call("POST", HANDS, path=at, token=admin, headers={"Idempotency-Key": "h1"},
                     expect=201).get_json()["hand_no"]
    hand_at = at | {"hand_no": hand_no}
    c.call("GET", REPLAY, path=hand_at, expect=200)
    c.call("GET", TABLE, path=at, token=tokens[1], expect=200)
    c.call("GET", HISTORY, path=hand_at, token=auditor, expect=200)

    played = _play_to_showdown(c, hand_at, admin, tokens)
    assert {"check", "bet", "raise", "call", "fold", "draw"} <= played
    assert c.call("GET", HAND, path=hand_at, token=admin).get_json()["status"] == \
        "showdown_pending"
    assert fake_backend.run_jobs()

    ended = c.call("GET", HAND, path=hand_at, token=tokens[1], expect=200).get_json()
    assert ended["status"] == "ended" and ended["result"]["hands"]
    c.call("GET", HAND, path=hand_at, token=auditor, expect=200)
    c.call("GET", EVENTS, path=hand_at, token=tokens[2], expect=200)
    c.call("GET", EVENTS, path=hand_at, token=tokens[2], query_string={"after": 5}, expect=200)
    _check_stream(c, hand_at, tokens[2])
    c.call("GET", HISTORY, path=hand_at, token=tokens[3], expect=200)
    c.call("GET", HISTORY, path=hand_at, token=auditor, expect=200)
    c.call("GET", RECEIPT, path=hand_at, token=tokens[3], expect=200)
    c.call("GET", RECEIPT, path=hand_at, token=auditor, expect=200)
    audit = c.call("GET", AUDIT, path=hand_at, token=auditor, expect=200).get_json()
    assert audit["valid"]
    c.call("GET", HISTORY, path=hand_at, token=tokens[3], query_string={"format": "phh"},
           expect=200)
    document = (ROOT / "tests" / "data" / "phh" / "dwan-ivey-2009.phh").read_text()
    imported = c.call("POST", "/v1/imports/phh", json={"phh": document}, expect=201).get_json()
    c.call("POST", "/v1/imports/phh", token=imported["admin_token"],
           json={"phh": document, "table_id": imported["table_id"]}, expect=201)

    successes = {(m, p) for m, p, status in c.checked if status < 400}
    assert successes == {(m.upper(), p) for p, item in c.spec["paths"].items()
                         for m in item if m in _HTTP_METHODS}


def _check_stream(c: Contract, hand_at: dict, token: str) -> None:
    """The stream of an ended hand, resumed from event 5: its events validate as the event
    envelopes of ``GET .../events``, each with a hand read as ``?at=v`` answers it."""
    stream = c.call("GET", STREAM, path=hand_at, token=token, headers={"Last-Event-ID": "5"},
                    expect=200).get_data(as_text=True)
    data = [json.loads(line[len("data: "):]) for line in stream.splitlines()
            if line.startswith("data: ")]
    assert [d.get("version") for d in data[:-1]] == list(range(6, 6 + len(data) - 1))
    events = _pointer("paths", EVENTS, "get", "responses", "200", "content", "application/json",
                      "schema")
    hand = _pointer("paths", HAND, "get", "responses", "200", "content", "application/json",
                    "schema")
    for event in data[:-1]:
        c._validate({"events": [{k: v for k, v in event.items() if k != "state"}]}, events,
                    "stream event")
        c._validate(event["state"], hand, "stream event state")
    c.call("GET", STREAM, path=hand_at, token=token, headers={"Last-Event-ID": "x"}, expect=422)


def _play_to_showdown(c: Contract, hand_at: dict, admin: str, tokens: dict) -> set[str]:
    """Plays until the showdown, using each action type once where it is legal; returns them."""
    played: set[str] = set()
    checked_on: set[str] = set()
    for _ in range(40):
        public = c.call("GET", HAND, path=hand_at, token=admin, expect=200).get_json()
        if public["status"] not in ("betting", "drawing"):
            return played
        seat = public["to_act"]
        response = c.call("GET", HAND, path=hand_at, token=tokens[seat], expect=200)
        mine = response.get_json()
        legal = {a["type"]: a for a in mine["legal_actions"]}
        cards = next(s["cards"] for s in mine["seats"] if s["seat"] == seat)
        if "draw" in legal:
            body = {"type": "draw", "cards": cards[:2]}
        elif "check" in legal and mine["street"] not in checked_on:
            checked_on.add(mine["street"])
            body = {"type": "check"}
        elif "bet" in legal:
            body = {"type": "bet", "amount": legal["bet"]["min"]}
        elif "raise" in legal and "raise" not in played:
            body = {"type": "raise", "amount": legal["raise"]["min"]}
        elif "fold" in legal and "fold" not in played:
            body = {"type": "fold"}
        elif "call" in legal:
            body = {"type": "call"}
        else:
            body = {"type": "check"}
        headers = {"If-Match": response.headers["ETag"], "Idempotency-Key": f"a{mine['version']}"}
        c.call("POST", ACTIONS, path=hand_at, token=tokens[seat], json=body, headers=headers,
               expect=201)
        played.add(body["type"])
    raise AssertionError("the hand did not reach the showdown in 40 actions")


def test_refusals_answer_problem_details_as_the_spec_says(contract, monkeypatch, fake_backend):
    c = contract
    c.call("POST", TABLES, data="{not json", content_type="application/json", expect=400)
    assert c.call("POST", TABLES, data='{"game": "five-card-draw"}', content_type="text/plain",
                  expect=415).get_json()["code"] == "unsupported_media_type"
    problem = c.call("POST", TABLES, json={"game": "five-card-draw", "colour": "red"},
                     expect=422).get_json()
    assert problem["code"] == "invalid_request" and "colour" in problem["errors"]
    assert c.call("POST", TABLES, json={"game": "go-fish"}, expect=422).get_json()["code"] == \
        "unknown_game"
    table = c.call("POST", TABLES, json={"game": "five-card-draw",
                                         "options": {"reveal": "everyone"}},
                   expect=201).get_json()
    at = {"table_id": table["table_id"]}
    admin = table["admin_token"]
    tokens = {}
    for name in ("ann", "bob"):
        seated = c.call("POST", PLAYERS, path=at, json={"name": name, "buy_in": 500},
                        expect=201).get_json()
        tokens[seated["seat"]] = seated["token"]
    chips = {"Idempotency-Key": "chips-1"}
    c.call("POST", CHIPS, path=at | {"seat": 1}, token=tokens[1], json={"amount": 5},
           headers=chips, expect=201)
    assert c.call("POST", CHIPS, path=at | {"seat": 1}, token=tokens[1], json={"amount": 6},
                  headers=chips, expect=422).get_json()["code"] == "idempotency_key_reused"
    c.call("PUT", SEED, path=at | {"seat": 2}, token=tokens[1], json={"client_seed": "x"},
           expect=403)
    c.call("PUT", SEED, path=at | {"seat": 1}, token=tokens[1], json={"client_seed": ""},
           expect=422)
    c.call("GET", TABLE, path=at, expect=401)
    c.call("GET", TABLE, path={"table_id": "nosuchtable"}, token=admin, expect=404)
    c.call("POST", CHIPS, path=at | {"seat": 2}, token=tokens[1], json={"amount": 5}, expect=403)
    c.call("POST", HANDS, path=at, token=tokens[1], expect=403)
    hand_at = at | {"hand_no": c.call("POST", HANDS, path=at, token=admin,
                                      expect=201).get_json()["hand_no"]}
    assert c.call("POST", HANDS, path=at, token=admin, expect=409).get_json()["code"] == \
        "hand_in_progress"
    c.call("DELETE", SEAT, path=at | {"seat": 1}, token=admin, expect=409)
    c.call("GET", HAND, path=at | {"hand_no": 9}, token=admin, expect=404)
    c.call("GET", AUDIT, path=hand_at, token=tokens[1], expect=403)
    assert c.call("GET", HISTORY, path=hand_at, token=tokens[1], expect=409).get_json()["code"] \
        == "hand_not_ended"
    assert c.call("GET", RECEIPT, path=hand_at, token=tokens[1], expect=409).get_json()["code"] \
        == "hand_not_ended"
    c.call("GET", RECEIPT, path=hand_at, token=admin, expect=403)
    assert c.call("GET", EVENTS, path=hand_at, token=tokens[1], query_string={"after": "x"},
                  expect=422).get_json()["code"] == "invalid_query"
    c.call("GET", HAND, path=hand_at, token=tokens[1], query_string={"at": "x"}, expect=422)
    c.call("GET", HISTORY, path=hand_at, token=admin, query_string={"format": "xml"}, expect=422)

    hand = c.call("GET", HAND, path=hand_at, token=admin, expect=200).get_json()
    to_act, other = hand["to_act"], next(s for s in tokens if s != hand["to_act"])
    assert c.call("POST", ACTIONS, path=hand_at, token=tokens[other], json={"type": "check"},
                  expect=403).get_json()["code"] == "not_your_turn"
    conflict = c.call("POST", ACTIONS, path=hand_at, token=tokens[to_act],
                      json={"type": "check", "expected_version": hand["version"] - 1},
                      expect=409).get_json()
    assert conflict["code"] == "version_conflict"
    assert conflict["current_version"] == hand["version"]
    c.call("POST", ACTIONS, path=hand_at, token=tokens[to_act],
           headers={"If-Match": "yesterday"}, json={"type": "check"}, expect=422)
    refused = c.call("POST", ACTIONS, path=hand_at, token=tokens[to_act],
                     json={"type": "bet", "amount": 10**9}, expect=422).get_json()
    assert refused["code"] == "amount_out_of_range"
    c.call("POST", ACTIONS, path=hand_at, token=tokens[to_act], json={"type": "fly"}, expect=422)
    c.call("POST", ACTIONS, path=hand_at, token=tokens[to_act], data="[", expect=400,
           content_type="application/json")

    c.call("POST", ACTIONS, path=hand_at, token=tokens[to_act], json={"type": "fold"}, expect=201)
    revealed = c.call("GET", HISTORY, path=hand_at, token=tokens[other], expect=200).get_json()
    assert revealed["server_seed"] and revealed["events"][0]["openings"]["/deck"]  # to everyone
    fake_backend.redis.delete(receipt_key(table["table_id"], hand_at["hand_no"]))
    assert c.call("GET", RECEIPT, path=hand_at, token=tokens[1], expect=404).get_json()["code"] \
        == "receipt_not_found"

    document = {"phh": (ROOT / "tests" / "data" / "phh" / "dwan-ivey-2009.phh").read_text()}
    c.call("POST", "/v1/imports/phh", json=document, headers={"Idempotency-Key": "i-1"},
           expect=201)
    for record in fake_backend.redis.keys("t:*:idem:*"):
        fake_backend.redis.delete(record)  # as its 24 hours' expiry would
    assert c.call("POST", "/v1/imports/phh", json=document, headers={"Idempotency-Key": "i-1"},
                  expect=409).get_json()["code"] == "table_exists"

    def unreachable():
        raise ConnectionError("store is down")
    monkeypatch.setattr(fake_backend.redis, "ping", unreachable)
    assert c.call("GET", "/healthz", expect=503).get_json()["code"] == "store_unavailable"


def test_a_path_number_written_otherwise_is_a_documented_404(contract, spec):
    """A number in a path written otherwise than in the digits 0-9 without leading zeros,
    16 at most (``routes.Number``), names no route: every operation with a hand's or a
    seat's number in its path, the replay page's too, documents that 404 ``not_found``."""
    numbered = [(method.upper(), path) for path, item in spec["paths"].items()
                if "{hand_no}" in path or "{seat}" in path
                for method in item if method in _HTTP_METHODS]
    assert len(numbered) == 11
    for method, template in numbered:
        for written in ("-1", "01", "null,null", "1" * 17):
            names = {"table_id": "6fcf63e6ec7c4e16", "hand_no": written, "seat": written}
            assert contract.call(method, template, path=names, expect=404).get_json()["code"] \
                == "not_found"


def test_an_imported_hand_answers_as_the_spec_says(contract):
    """An imported hand has no seed: its reads carry an empty seed commitment."""
    c = contract
    document = {"phh": (ROOT / "tests" / "data" / "phh" / "dwan-ivey-2009.phh").read_text()}
    imported = c.call("POST", "/v1/imports/phh", json=document, expect=201).get_json()
    at = {"table_id": imported["table_id"]}
    hand_at = at | {"hand_no": imported["hand_no"]}
    admin, auditor = imported["admin_token"], imported["auditor_token"]
    c.call("GET", TABLE, path=at, token=admin, expect=200)
    for token in (admin, auditor):
        assert c.call("GET", HAND, path=hand_at, token=token,
                      expect=200).get_json()["seed_commitment"] == ""
        c.call("GET", EVENTS, path=hand_at, token=token, expect=200)
        c.call("GET", HISTORY, path=hand_at, token=token, expect=200)
        c.call("GET", HISTORY, path=hand_at, token=token, query_string={"format": "phh"},
               expect=200)
    c.call("GET", RECEIPT, path=hand_at, token=auditor, expect=200)
    assert c.call("GET", AUDIT, path=hand_at, token=auditor, expect=200).get_json()["valid"]


def test_every_game_and_the_dealers_choice_answer_as_the_spec_says(contract, fake_backend):
    c = contract
    games = [g["id"] for g in c.call("GET", "/v1/games", expect=200).get_json()["games"]]
    assert set(games) == {"five-card-draw", "seven-card-stud", "five-card-stud", "texas-holdem",
                          "omaha", "omaha-hi-lo"}
    table = c.call("POST", TABLES, json={"game": "texas-holdem",
                                         "options": {"dealers_choice": True}},
                   expect=201).get_json()
    assert table["options"]["dealers_choice"] is True
    at = {"table_id": table["table_id"]}
    admin, auditor = table["admin_token"], table["auditor_token"]
    tokens = {}
    for name, buy_in in (("ann", 3000), ("bob", 3000), ("cy", 120)):
        seated = c.call("POST", PLAYERS, path=at, json={"name": name, "buy_in": buy_in},
                        expect=201).get_json()
        tokens[seated["seat"]] = seated["token"]
    assert c.call("POST", HANDS, path=at, token=admin, json={"game": "go-fish"},
                  expect=422).get_json()["code"] == "unknown_game"
    assert c.call("POST", HANDS, path=at, token=admin, json={"game": ""},
                  expect=422).get_json()["code"] == "invalid_request"
    c.call("POST", HANDS, path=at, token=admin, data="{", content_type="application/json",
           expect=400)

    played: set[str] = set()
    seen: set[str] = set()
    pots: list[dict] = []
    # Everyone folds to the big blind (its uncalled part goes back); then a hand of each game.
    for number, game in enumerate([None, "texas-holdem", "seven-card-stud", "five-card-stud",
                                   "omaha", "omaha-hi-lo", "five-card-draw"], 1):
        body = {} if game is None else {"game": game}
        hand_at = at | {"hand_no": c.call("POST", HANDS, path=at, token=admin, json=body,
                                          expect=201).get_json()["hand_no"]}
        assert hand_at["hand_no"] == number
        choose = _fold if game is None else _stay_in
        played |= _play_hand(c, hand_at, admin, tokens, choose, played)
        fake_backend.run_jobs()
        ended = c.call("GET", HAND, path=hand_at, token=auditor, expect=200).get_json()
        assert ended["status"] == "ended" and ended["game"] == (game or "texas-holdem")
        pots += ended["result"]["pots"]
        player = next(s["seat"] for s in ended["seats"])
        c.call("GET", HAND, path=hand_at, token=tokens[player], expect=200)
        c.call("GET", EVENTS, path=hand_at, token=tokens[player], expect=200)
        history = c.call("GET", HISTORY, path=hand_at, token=auditor, expect=200).get_json()
        seen |= {event["type"] for event in history["events"]}
        audit = c.call("GET", AUDIT, path=hand_at, token=auditor, expect=200).get_json()
        assert audit["valid"], audit
    assert {"bring_in", "complete", "bet", "call", "check", "fold", "draw"} <= played
    assert {"BlindPosted", "BoardDealt", "ActionOn", "BringInPosted", "BetCompleted",
            "BetReturned", "PotAwarded"} <= seen
    assert any(pot.get("halves") for pot in pots)  # omaha-hi-lo splits its pots


def test_covered_bets_and_a_reshuffled_stub_answer_as_the_spec_says(contract, fake_backend):
    """Club rules with all bets covered: six players who discard five cards each run the stub
    out at the draw, and the short stack adds chips during the hand to call."""
    c = contract
    table = c.call("POST", TABLES, json={"game": "five-card-draw", "options": {
        "rules": "club", "all_in": "forbidden"}}, expect=201).get_json()
    assert table["options"]["max_discard"] == 5  # brought by rules: club
    at = {"table_id": table["table_id"]}
    admin, auditor = table["admin_token"], table["auditor_token"]
    tokens = {}
    for number in range(6):
        seated = c.call("POST", PLAYERS, path=at, json={"name": f"p{number}",
                                                        "buy_in": 3 if number == 5 else 500},
                        expect=201).get_json()
        tokens[seated["seat"]] = seated["token"]
    assert c.call("POST", HANDS, path=at, token=admin, json={"game": "omaha"},
                  expect=422).get_json()["code"] == "dealers_choice_off"
    hand_at = at | {"hand_no": c.call("POST", HANDS, path=at, token=admin,
                                      json={"game": "five-card-draw"}, expect=201,
                                      ).get_json()["hand_no"]}
    played = _play_hand(c, hand_at, admin, tokens, _bet_the_most, set())
    assert {"add_chips", "draw", "bet", "call"} <= played
    assert fake_backend.run_jobs()
    history = c.call("GET", HISTORY, path=hand_at, token=auditor, expect=200).get_json()
    types = [event["type"] for event in history["events"]]
    assert "ChipsBought" in types and "StubReshuffled" in types
    reshuffled = history["events"][types.index("StubReshuffled")]
    assert reshuffled["openings"]["/cards"]["value"]  # the new stub, for the reveal
    audit = c.call("GET", AUDIT, path=hand_at, token=auditor, expect=200).get_json()
    assert audit["valid"], [x for x in audit["checks"] if not x["ok"]]


def _play_hand(c: Contract, hand_at: dict, admin: str, tokens: dict, choose,
               played: set[str]) -> set[str]:
    """Plays until the hand awaits nobody, each awaited seat choosing with ``choose``; returns
    the action types played."""
    played = set(played)
    for _ in range(200):
        public = c.call("GET", HAND, path=hand_at, token=admin, expect=200).get_json()
        if not public["awaiting"]:
            return played
        seat = public["awaiting"][0]
        assert public["to_act"] == seat
        response = c.call("GET", HAND, path=hand_at, token=tokens[seat], expect=200)
        mine = response.get_json()
        legal = {a["type"]: a for a in mine["legal_actions"]}
        cards = next(s["cards"] for s in mine["seats"] if s["seat"] == seat)
        body = choose(legal, cards, played)
        c.call("POST", ACTIONS, path=hand_at, token=tokens[seat], json=body,
               headers={"If-Match": response.headers["ETag"]}, expect=201)
        played.add(body["type"])
    raise AssertionError("the hand did not end in 200 actions")


def _fold(legal: dict, cards: list, played: set[str]) -> dict:
    return {"type": "fold"} if "fold" in legal else {"type": "check"}


def _stay_in(legal: dict, cards: list, played: set[str]) -> dict:
    """Stays in to the showdown: brings in and completes once, bets the least it may, calls."""
    if "draw" in legal:
        return {"type": "draw", "cards": cards[:min(2, legal["draw"]["max_cards"])]}
    if "add_chips" in legal:
        return {"type": "add_chips", "amount": legal["add_chips"]["min"]}
    for kind in ("bring_in", "complete"):
        if kind in legal and kind not in played:
            return {"type": kind}
    if "bring_in" in legal:
        return {"type": "bring_in"}
    if "bet" in legal:
        return {"type": "bet", "amount": legal["bet"]["min"]}
    return {"type": "call"} if "call" in legal else {"type": "check"}


def _bet_the_most(legal: dict, cards: list, played: set[str]) -> dict:
    """Discards every card it may, bets the most, adds the chips a call needs, calls."""
    if "draw" in legal:
        return {"type": "draw", "cards": cards[:legal["draw"]["max_cards"]]}
    if "add_chips" in legal:
        return {"type": "add_chips", "amount": legal["add_chips"]["min"]}
    if "bet" in legal:
        return {"type": "bet", "amount": legal["bet"]["max"]}
    return {"type": "call"} if "call" in legal else {"type": "check"}


def test_at_query_parameter_matches_the_hand_query_schema(spec):
    at = spec["components"]["parameters"]["At"]
    field = schemas.HandQuery().fields["at"]
    assert (at["schema"]["minimum"], at["schema"]["maximum"]) == (
        field.validators[0].min, field.validators[0].max)
