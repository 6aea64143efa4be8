"""Events read back from their plain JSON (``event_from_dict``) are the events decided."""

from __future__ import annotations

import dataclasses
import json

import pytest

from domain.events import CardsDealt, TableCreated, event_from_dict


def test_an_event_read_back_is_the_one_decided_equal_hashed_and_frozen_alike():
    decided = CardsDealt(seat=2, cards=("As", "Kd"), face_up=True)
    read = event_from_dict("CardsDealt", json.loads(json.dumps(decided.to_dict())))
    assert read == decided and hash(read) == hash(decided) and repr(read) == repr(decided)
    assert read.to_dict() == decided.to_dict()
    assert dataclasses.asdict(read) == dataclasses.asdict(decided)
    with pytest.raises(dataclasses.FrozenInstanceError):
        read.seat = 3


def test_a_field_left_out_takes_its_default_or_fails_as_the_constructor_does():
    created = {"game": "five-card-draw", "options": {}, "max_seats": 6, "admin_token_hash": "a",
               "auditor_token_hash": "b", "next_seed_commitment": "c"}
    read = event_from_dict("TableCreated", created)
    assert read == TableCreated(**created) and (read.requested, read.imports) == ({}, False)
    assert event_from_dict("CardsDealt", {"seat": 1, "cards": ["2c"]}).face_up is False
    with pytest.raises(TypeError):
        event_from_dict("CardsDealt", {"cards": ["2c"], "face_up": False})
    assert event_from_dict("CardsDealt", {"seat": 1, "cards": [], "face_up": True,
                                          "unknown": 1}) == CardsDealt(1, (), True)
