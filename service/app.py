"""The Flask app factory."""

from __future__ import annotations

import time

from flask import Flask, request
from werkzeug.middleware.proxy_fix import ProxyFix

from service import handover, jobs, limits, logs, metrics, problems
from service.backend import Backend
from service.config import Config
from service.jsonio import JSONProvider
from service.keys import published_on
from service.live import StreamSlots
from service.room import Cardroom
from service.routes import Number, check_request
from service.routes.hands import hands
from service.routes.imports import imports
from service.routes.meta import meta
from service.routes.tables import tables
from service.store import EventStore

STARTED = "cardroom.started"  # the request's start, in its WSGI environ


def create_app(config: Config | None = None, *, backend: Backend | None = None) -> Flask:
    backend = backend or Backend.from_config(config or Config.from_env())
    app = _Flask(__name__)
    app.json = JSONProvider(app)
    app.url_map.converters["int"] = Number
    body_limit = app.config["MAX_CONTENT_LENGTH"] = backend.config.max_body_bytes
    _observe(app)  # first: every other hook's answer is timed and logged too
    if backend.embedded:  # the job thread shares this process: its jobs go first
        app.before_request(backend.jobs_first.wait)
    limits.register(app, backend.redis, backend.config.rate_limit,
                    backend.config.table_rate_limit)
    app.before_request(lambda: check_request(request._get_current_object(), body_limit))
    app.extensions["backend"] = backend
    app.extensions["streams"] = StreamSlots(backend.config.max_streams,
                                              backend.config.max_streams_per_address)
    keys = backend.config.keys()

    def enqueue_showdown(table_id: str, hand_no: int) -> None:
        held = None if backend.embedded else handover.hand_over(room, table_id, hand_no)
        jobs.enqueue_showdown(backend.queue, table_id, hand_no, held)

    app.extensions["cardroom"] = room = Cardroom(
        EventStore(backend.redis, keys, index_ended=backend.config.archive_after is not None),
        keys, enqueue_showdown)
    if backend.embedded:
        jobs.run_in_app(backend.rq, room)
    for blueprint in (meta, tables, hands, imports):
        app.register_blueprint(blueprint)
    outage = problems.register(app)
    backend.on_each_connection(lambda connection: published_on(connection, keys) and outage.up())
    if backend.config.trusted_proxies:  # the client's address, not the balancer's
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=backend.config.trusted_proxies, x_proto=0,
                                x_host=0, x_port=0, x_prefix=0)
    return app


class _Flask(Flask):
    def ensure_sync(self, func):
        """As is: no route or hook is a coroutine (Flask checks each, every request)."""
        return func

    def make_default_options_response(self):
        """``204 No Content`` with ``Allow``, and no body to give a type (Flask's own is an
        empty 200 typed text/html)."""
        response = super().make_default_options_response()
        response.status_code = 204
        del response.headers["Content-Type"]
        return response


def _observe(app: Flask) -> None:
    """Time every request: its metrics, its access line and its ``X-Request-Id``
    (``service.metrics``, ``service.logs``). Registered before any other hook, so that
    its ``begin`` runs first and its ``end`` last, whatever the others answer."""
    @app.before_request
    def begin():
        request.environ[STARTED] = time.perf_counter()

    @app.after_request
    def end(response):
        asked = request._get_current_object()  # one look-up, not one per field
        seconds = time.perf_counter() - asked.environ[STARTED]
        rule = asked.url_rule
        route = rule.rule if rule else metrics.UNMATCHED
        metrics.observe_request(route, asked.method, response.status_code, seconds)
        request_id = logs.request_id(asked)
        logs.log_request(asked, route, response.status_code, seconds, request_id)
        response.headers["X-Request-Id"] = request_id
        return response
