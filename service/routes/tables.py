"""Tables and the players at them."""

from __future__ import annotations

from flask import Blueprint, request

from service import logs, schemas
from service.auth import require
from service.routes import answered, body, client_key, query, room, takes_query, takes_token

tables = Blueprint("tables", __name__, url_prefix="/v1/tables")


@tables.post("")
def create_table():
    request = body(schemas.create_table)
    made = room().create_table(request["game"], request["options"], request["max_seats"],
                               client_key(request))
    logs.made_table(made["table_id"])
    return answered(made, 201)


@tables.get("/<table_id>")
@takes_token
def read_table(table_id: str):
    table = room().table(table_id)
    require(table.state, "admin", "auditor", "player")
    state = table.state
    return {
        "table_id": table_id, "game": state.game, "options": state.options,
        "max_seats": state.max_seats, "button": state.button, "version": table.version,
        "current_hand": state.hand_no if state.hand_in_progress else None,
        "last_hand": state.hand_no or None,
        "next_seed_commitment": state.next_seed_commitment,
        "seats": [{"seat": s.seat, "name": s.name, "player_id": s.player_id, "stack": s.stack,
                   "client_seed": s.client_seed,
                   "status": "in_hand" if s.seat in state.dealt_in else "seated"}
                  for s in state.seats],
    }


@tables.post("/<table_id>/players")
def join_table(table_id: str):
    request = body(schemas.join_table)
    table = room().table(table_id)
    return answered(room().seat_player(table_id, request["name"], request["buy_in"],
                                       request["client_seed"], client_key(request), table), 201)


@tables.put("/<table_id>/players/<int:seat>/seed")
@takes_token
def set_client_seed(table_id: str, seat: int):
    caller = require(room().table(table_id).state, "player", seat=seat)
    request = body(schemas.client_seed)
    return room().set_client_seed(table_id, seat, request["client_seed"], caller), 200


@tables.post("/<table_id>/players/<int:seat>/chips")
@takes_token
def add_chips(table_id: str, seat: int):
    table = room().table(table_id)
    caller = require(table.state, "player", seat=seat)
    request = body(schemas.add_chips)
    return answered(room().add_chips(table_id, caller, request["amount"], client_key(request),
                                     table), 201)


@tables.delete("/<table_id>/players/<int:seat>")
@takes_query
@takes_token
def leave_table(table_id: str, seat: int):
    retry = "Idempotency-Key" in request.headers  # a player who has left may be answered it
    caller = require(room().table(table_id).state, "player", "admin", seat=seat,
                     left=seat if retry else None)
    actor = "admin" if caller.role == "admin" else f"seat:{seat}"
    seated = None if caller.role == "admin" else caller
    holder = query(schemas.leave_query)["player_id"]  # the player the admin means to remove
    key = client_key(holder and {"player_id": holder})
    return answered(room().leave(table_id, seat, actor, key, seated, holder), 200)
