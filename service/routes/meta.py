"""Health, the game catalog, and the API description."""

from __future__ import annotations

from functools import cache
from importlib import resources

import yaml
from flask import Blueprint, Response

from domain.fairness import ALGORITHMS
from domain.games import catalog
from service.problems import StoreUnavailable
from service.routes import room

meta = Blueprint("meta", __name__)


@meta.get("/healthz")
def healthz():
    try:
        room().store.redis.ping()
    except Exception as error:  # any failure of the store means "not healthy": 503
        raise StoreUnavailable(error) from error
    return {"status": "ok"}


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
    page = resources.files("service").joinpath("static/docs.html").read_text()
    return Response(page, mimetype="text/html")


@cache
def _spec_text() -> str:
    return resources.files("service").joinpath("openapi.yaml").read_text()
