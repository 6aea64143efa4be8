"""The Flask app factory."""

from __future__ import annotations

from flask import Flask

from service import jobs, limits, problems
from service.backend import Backend
from service.config import Config
from service.live import StreamSlots
from service.room import Cardroom
from service.routes import refuse_large_body, without_trailing_slash
from service.routes.hands import hands
from service.routes.imports import imports
from service.routes.meta import meta
from service.routes.tables import tables
from service.store import EventStore


def create_app(config: Config | None = None, *, backend: Backend | None = None) -> Flask:
    backend = backend or Backend.from_config(config or Config.from_env())
    app = Flask(__name__)
    app.json.sort_keys = False
    app.config["MAX_CONTENT_LENGTH"] = backend.config.max_body_bytes
    limits.register(app, backend.redis, backend.config.rate_limit,
                    backend.config.table_rate_limit)
    app.before_request(without_trailing_slash)
    app.before_request(refuse_large_body)
    app.extensions["backend"] = backend
    app.extensions["streams"] = StreamSlots(backend.config.max_streams)
    keys = backend.config.keys()
    app.extensions["cardroom"] = Cardroom(
        EventStore(backend.redis, keys), keys, lambda table_id, hand_no: jobs.enqueue_showdown(
            backend.queue, table_id, hand_no))
    for blueprint in (meta, tables, hands, imports):
        app.register_blueprint(blueprint)
    problems.register(app)
    return app
