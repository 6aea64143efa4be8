"""Fault injection stays out of the production path: a showdown job reads no setting but
the configuration, and its one test hook (``service.testhooks``) does nothing unless a
test set the hook's variable before the module was imported."""

from __future__ import annotations

import importlib
import os
from types import SimpleNamespace

import pytest

from service import testhooks
from service.config import Config

PAUSE = "CARDROOM_TEST_SHOWDOWN_PAUSE"


class RecordingEnviron(dict):
    """An environment that remembers which names were asked for."""

    def __init__(self, *args):
        super().__init__(*args)
        self.asked: set[str] = set()

    def __getitem__(self, name):
        self.asked.add(name)
        return super().__getitem__(name)

    def get(self, name, default=None):
        self.asked.add(name)
        return super().get(name, default)


@pytest.fixture
def fresh_testhooks(monkeypatch):
    """Reload ``service.testhooks`` under the environment the test sets; afterwards,
    under the real one again."""
    sleeps: list[float] = []

    def load(**env: str):
        monkeypatch.delenv(PAUSE, raising=False)
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        hooks = importlib.reload(testhooks)
        # Only the hook's own clock: the process's time.sleep is shared with threads that
        # earlier tests started (the embedded job watchdog), which would spin on a stand-in
        monkeypatch.setattr(hooks, "time", SimpleNamespace(sleep=sleeps.append))
        return hooks, sleeps
    yield load
    monkeypatch.undo()
    importlib.reload(testhooks)


def test_the_showdown_hook_does_nothing_when_its_variable_is_unset(fresh_testhooks):
    hooks, sleeps = fresh_testhooks()
    hooks.before_showdown()
    assert sleeps == [] and hooks.SHOWDOWN_PAUSE == 0


def test_the_showdown_hook_pauses_only_when_a_test_sets_its_variable(fresh_testhooks):
    hooks, sleeps = fresh_testhooks(**{PAUSE: "2.5"})
    hooks.before_showdown()
    assert sleeps == [2.5]


def test_the_hook_reads_its_variable_once_at_import_not_in_the_job(fresh_testhooks, monkeypatch):
    hooks, sleeps = fresh_testhooks()
    monkeypatch.setenv(PAUSE, "30")  # too late: production code never looks again
    hooks.before_showdown()
    assert sleeps == []


def test_a_showdown_job_reads_no_setting_but_the_configuration(client, fake_backend,
                                                               monkeypatch):
    """Settle a real showdown in this process while recording every environment variable
    read: only names ``Config.from_env`` reads may be among them (no fault switch)."""
    hand_path, admin = _a_hand_at_its_showdown(client)
    config_names = RecordingEnviron()
    Config.from_env(config_names)
    real_getitem, asked = os._Environ.__getitem__, set()

    def recording_getitem(environ, name):
        asked.add(name)
        return real_getitem(environ, name)
    monkeypatch.setattr(os._Environ, "__getitem__", recording_getitem)
    assert fake_backend.run_jobs(), "no showdown job was queued"
    monkeypatch.undo()
    assert client.get(hand_path, headers=admin).get_json()["status"] == "ended"
    ours = {name for name in asked if name.startswith("CARDROOM_")}
    assert ours <= config_names.asked, (
        f"the showdown job read {sorted(ours - config_names.asked)}, which are not "
        "configuration: a fault switch belongs in service.testhooks, read at import")


def _a_hand_at_its_showdown(client) -> tuple[str, dict]:
    """Two players, nobody folds, both stand pat, until the hand awaits its showdown (or
    has ended, if a worker thread runs: requests wait for its job); the hand's path and
    the admin's headers."""
    created = client.post("/v1/tables", json={"game": "five-card-draw"}).get_json()
    table = f"/v1/tables/{created['table_id']}"
    admin = {"Authorization": f"Bearer {created['admin_token']}"}
    players = {}
    for name in ("ann", "bob"):
        joined = client.post(f"{table}/players", json={"name": name, "buy_in": 1000}).get_json()
        players[joined["seat"]] = {"Authorization": f"Bearer {joined['token']}"}
    started = client.post(f"{table}/hands", headers=admin)
    assert started.status_code == 201, started.get_json()
    hand_path = f"{table}/hands/{started.get_json()['hand_no']}"
    for _ in range(50):
        hand = client.get(hand_path, headers=admin).get_json()
        if hand["status"] not in ("betting", "drawing"):
            assert hand["status"] in ("showdown_pending", "ended"), hand
            return hand_path, admin
        seat = hand["to_act"]
        legal = client.get(hand_path, headers=players[seat]).get_json()["legal_actions"]
        acted = client.post(f"{hand_path}/actions", json=_passive_move(legal),
                            headers=players[seat])
        assert acted.status_code == 201, acted.get_json()
    raise AssertionError("no showdown after 50 moves")


def _passive_move(legal: list[dict]) -> dict:
    """Check or call if possible, else stand pat, else the smallest bet."""
    offered = {action["type"]: action for action in legal}
    for kind in ("check", "call"):
        if kind in offered:
            return {"type": kind}
    if "draw" in offered:
        return {"type": "draw", "cards": []}
    return {"type": "bet", "amount": offered["bet"]["min"]}
