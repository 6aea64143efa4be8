"""Health, the game catalog, the API description, and the service's pages (the API
reference and the replay viewer): the routes that need no table."""

from __future__ import annotations

import base64
import hashlib
import re
from functools import cache
from importlib import resources

import yaml
from flask import Blueprint, Response, current_app, redirect, url_for

from domain.fairness import ALGORITHMS
from domain.games import catalog
from service import metrics as prometheus
from service.problems import StoreUnavailable
from service.routes import room
from service.store import EventStore

meta = Blueprint("meta", __name__)


@meta.get("/")
def home():
    """The service's address leads to its API reference."""
    return redirect(url_for("meta.docs"))


@meta.get("/healthz")
def healthz():
    try:
        current_app.extensions["backend"].check_store()
    except Exception as error:  # any failure of the store means "not healthy": 503
        raise StoreUnavailable(error) from error
    return {"status": "ok"}


@meta.get("/metrics")
def metrics():
    """Prometheus metrics (``service.metrics``); answered also while the store is down."""
    backend = current_app.extensions["backend"]
    body, content_type = prometheus.exposition(lambda: EventStore(backend.quick_redis()))
    return Response(body, content_type=content_type)


@meta.get("/v1/games")
def games():
    return {"games": catalog()}


@meta.get("/v1/fairness")
def fairness():
    """The public key receipts are signed with, and every algorithm a verifier needs."""
    return {"public_key": room().keys.public_key, "algorithms": ALGORITHMS,
            "verifier": "python3 -m domain.fairness verify HISTORY.json"}


@meta.get("/openapi.yaml")
def openapi_yaml():
    return Response(_spec_text(), mimetype="application/yaml")


@meta.get("/openapi.json")
def openapi_json():
    return _spec()


@cache
def _spec() -> dict:
    return yaml.safe_load(_spec_text())


@meta.get("/docs")
def docs():
    return _page("docs.html", {"Content-Security-Policy": _docs_policy(),
                               "Referrer-Policy": "no-referrer"})


@cache
def _docs_policy() -> str:
    """As the replay page's, its one script and one stylesheet, inline, allowed by hash."""
    page = resources.files("service").joinpath("static", "docs.html").read_text()
    script, style = (_inline(page, tag) for tag in ("script", "style"))
    return (f"default-src 'none'; script-src {script}; style-src {style}; connect-src 'self'; "
            "img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")


def _inline(page: str, tag: str) -> str:
    text = re.search(f"<{tag}>(.*?)</{tag}>", page, re.S)[1]
    return f"'sha256-{base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()}'"


@meta.get("/replay/<table_id>/<int:hand_no>")
def replay(table_id: str, hand_no: int):
    """The replay viewer, the same page for any ids: it reads them from its path, asks for
    a token and reads the hand from the API itself."""
    return _page("replay.html", {"Content-Security-Policy": REPLAY_POLICY,
                                 "Referrer-Policy": "no-referrer"})


# The replay page loads and asks for nothing beyond the service; its token form posts nowhere.
REPLAY_POLICY = ("default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
                 "img-src 'self' data:; base-uri 'none'; form-action 'none'; "
                 "frame-ancestors 'none'")


def _page(name: str, headers: dict[str, str]) -> Response:
    """An HTML page of ``service/static`` (its script fetches what it shows)."""
    page = resources.files("service").joinpath("static", name).read_text()
    return Response(page, mimetype="text/html",
                    headers={**headers, "X-Content-Type-Options": "nosniff"})


@cache
def _spec_text() -> str:
    return resources.files("service").joinpath("openapi.yaml").read_text()
