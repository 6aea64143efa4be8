"""Request bodies, validated with marshmallow: unknown fields, wrong types and amounts
outside sane bounds are refused before any command is built."""

from __future__ import annotations

from marshmallow import RAISE, Schema, ValidationError, fields, post_load, validate

from domain.cards import InvalidCard, parse_card
from domain.names import MAX_LENGTH, name_problem
from domain.options import MAX_AMOUNT, MAX_CHIPS

MAX_VERSION = 2**53  # far beyond any stream, and within a Redis stream id
ACTION_TYPES = ("check", "call", "bet", "raise", "fold", "draw", "bring_in", "complete",
                "add_chips")


class Strict(Schema):
    class Meta:
        unknown = RAISE


def _whole(value):
    """``value``, but a number written with a zero fraction (``6.0``) as the integer it is, as
    JSON Schema counts it (the API's description says ``integer``)."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


class Whole(fields.Integer):
    """An integer, written ``6`` or ``6.0``; never a bool, a string or another fraction."""

    def __init__(self, **kwargs):
        super().__init__(strict=True, **kwargs)

    def _validated(self, value):
        return super()._validated(_whole(value))


def _amount(**kwargs):
    return Whole(validate=validate.Range(min=1, max=MAX_AMOUNT), **kwargs)


def _card(value: str) -> None:
    try:
        parse_card(value)
    except InvalidCard as error:
        raise ValidationError(str(error)) from None


class CreateTable(Strict):
    game = fields.String(required=True, validate=validate.Length(min=1, max=64))
    options = fields.Dict(keys=fields.String(), load_default=dict)
    max_seats = Whole(validate=validate.Range(min=1, max=100), load_default=None)

    @post_load
    def _whole_options(self, data: dict, **kwargs) -> dict:
        return {**data, "options": {name: _whole(value) for name, value in data["options"].items()}}


def _player_name(value: str) -> None:
    problem = name_problem(value)
    if problem:
        raise ValidationError(problem)


def _client_seed(**kwargs):
    return fields.String(validate=validate.Length(min=1, max=128), **kwargs)


class JoinTable(Strict):
    name = fields.String(required=True, validate=[validate.Length(min=1, max=MAX_LENGTH), _player_name])
    buy_in = _amount(required=True)
    client_seed = _client_seed(load_default="")


class ClientSeed(Strict):
    client_seed = _client_seed(required=True)


class AddChips(Strict):
    amount = _amount(required=True)


class StartHand(Strict):
    game = fields.String(validate=validate.Length(min=1, max=64), load_default=None)


class Action(Strict):
    type = fields.String(required=True, validate=validate.OneOf(ACTION_TYPES))
    amount = Whole(validate=validate.Range(min=0, max=MAX_CHIPS), load_default=None,
                   allow_none=True)
    cards = fields.List(fields.String(validate=_card), validate=validate.Length(max=10),
                        load_default=list)
    expected_version = Whole(validate=validate.Range(min=0, max=MAX_VERSION), load_default=None,
                             allow_none=True)


class Digits(fields.Integer):
    """A whole number in a query string, written in the digits 0-9, perhaps after a minus
    (which its range then refuses by name; ``int`` also reads ``1_0`` and the digits of
    other scripts)."""

    def _deserialize(self, value, attr, data, **kwargs):
        digits = value[value[:1] == "-":] if isinstance(value, str) else ""
        if not (digits.isascii() and digits.isdigit()):
            raise self.make_error("invalid")
        return super()._deserialize(value, attr, data, **kwargs)


class HandQuery(Strict):
    at = Digits(validate=validate.Range(min=1, max=MAX_VERSION), load_default=None)


class EventsQuery(Strict):
    after = Digits(validate=validate.Range(min=0, max=MAX_VERSION), load_default=0)


class StreamQuery(Strict):
    last_event_id = fields.String(load_default=None)  # checked as Last-Event-ID is


class LeaveQuery(Strict):
    player_id = fields.String(validate=validate.Length(min=1, max=64), load_default=None)


class HistoryQuery(Strict):
    format = fields.String(validate=validate.OneOf(("json", "phh")), load_default="json")


class ImportPhh(Strict):
    phh = fields.String(required=True, validate=validate.Length(min=1))
    table_id = fields.String(validate=validate.Length(min=1, max=64), load_default=None,
                             allow_none=True)


# One instance of each, shared by every request: building a schema copies its fields
# (a good part of a small request's time), and ``load`` keeps no state on the instance.
create_table = CreateTable()
join_table = JoinTable()
client_seed = ClientSeed()
add_chips = AddChips()
start_hand = StartHand()
action = Action()
hand_query = HandQuery()
events_query = EventsQuery()
stream_query = StreamQuery()
history_query = HistoryQuery()
leave_query = LeaveQuery()
import_phh = ImportPhh()
