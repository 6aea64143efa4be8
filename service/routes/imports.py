"""Imports: a hand played elsewhere, as a PHH document, replayed and stored here."""

from __future__ import annotations

from flask import Blueprint

from service import limits, schemas
from service.auth import require
from service.routes import answered, body, client_key, room, takes_token

imports = Blueprint("imports", __name__, url_prefix="/v1/imports")


@imports.post("/phh")
@takes_token
def import_phh():
    request = body(schemas.import_phh)
    if request["table_id"] is None:
        limits.count_new_table()
    else:
        require(room().table(request["table_id"]).state, "admin")
    return answered(room().import_phh(request["phh"], request["table_id"], client_key(request)),
                    201)
