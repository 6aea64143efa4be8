"""A ``cardroom worker`` started with keys other than the API's takes no job: it exits, saying
which key differs, and the hand ends once, signed by the API's key, when a right worker runs.

With another CARDROOM_SIGNING_KEY alone such a worker settled every hand without a word, and
each receipt failed the audit against the key ``GET /v1/fairness`` publishes, for good.
"""

from __future__ import annotations

import random
import subprocess
import sys

import pytest

from service.keys import KEYS_KEY, Keys, keys_disagree, publish_keys
from tests.processes import ROOT, TEST_KEYS, free_port, subprocess_env

from .client import create_table
from .conftest import Server, worker_logs
from .test_worker_crash import bring_to_showdown, wait_for

OTHER_SIGNING_KEY = "b2" * 32


def test_a_worker_with_another_signing_key_refuses_and_a_right_one_settles(
        tmp_path, redis_db, integration_redis_url, worker_process):
    server = Server(tmp_path / "serve.log", integration_redis_url)
    try:
        table = create_table(server.api, 3, buy_in=1000)
        hand_no = bring_to_showdown(table, random.Random(3))
        wrong = worker_process(integration_redis_url, CARDROOM_SIGNING_KEY=OTHER_SIGNING_KEY)
        wait_for(lambda: wrong[0].poll() is not None, "the worker with another key exited",
                 20, lambda: worker_logs(wrong))
        said = wrong[0].log_path.read_text()
        assert wrong[0].returncode != 0, said
        assert "CARDROOM_SIGNING_KEY of this process differs" in said, said
        assert "CARDROOM_SECRET_KEY" not in said.split("differs")[0], said
        assert table.hand(hand_no)["status"] == "showdown_pending", "it settled the hand"

        right = worker_process(integration_redis_url, **TEST_KEYS)
        table.wait_hand(hand_no, lambda h: h["status"] == "ended", "settled by a right worker",
                        timeout=30, diagnostics=lambda: worker_logs(right))
        events = table.events(hand_no, table.auditor)
        assert [e["type"] for e in events].count("HandEnded") == 1
        assert table.audit(hand_no)["valid"] is True
        assert sum(table.stacks().values()) == 3000
    finally:
        server.stop()


def test_a_server_that_made_up_its_keys_leaves_a_published_pair_alone(tmp_path, redis_db,
                                                                       integration_redis_url):
    """Started without keys for a moment, it must not lock the right workers out; on a
    Redis where none is published it publishes its own, so that no worker's pair is taken
    for the API's."""
    given = Keys.from_hex(TEST_KEYS["CARDROOM_SECRET_KEY"], TEST_KEYS["CARDROOM_SIGNING_KEY"])
    publish_keys(redis_db, given)
    keyless = {name: "" for name in TEST_KEYS}
    Server(tmp_path / "first.log", integration_redis_url, workers=1, **keyless).stop()
    assert keys_disagree(redis_db, given) is None
    redis_db.delete(KEYS_KEY)
    Server(tmp_path / "second.log", integration_redis_url, workers=1, **keyless).stop()
    assert "CARDROOM_SIGNING_KEY" in keys_disagree(redis_db, given)


@pytest.mark.parametrize("other, differs", [
    ({"CARDROOM_SECRET_KEY": "c3" * 32}, "CARDROOM_SECRET_KEY"),  # the signing key the same
    ({"CARDROOM_SIGNING_KEY": ""}, "CARDROOM_SIGNING_KEY")])  # one key given, one made up
def test_a_server_with_another_pair_refuses_to_start_and_leaves_the_published_one(
        redis_db, integration_redis_url, other, differs):
    given = Keys.from_hex(TEST_KEYS["CARDROOM_SECRET_KEY"], TEST_KEYS["CARDROOM_SIGNING_KEY"])
    publish_keys(redis_db, given)
    ran = subprocess.run([sys.executable, "-m", "service.cli", "serve", "--port",
                          str(free_port())], cwd=ROOT, capture_output=True, text=True,
                         env=subprocess_env(REDIS_URL=integration_redis_url, **other),
                         timeout=60)
    assert ran.returncode != 0, ran.stdout
    assert f"{differs} of this process differs" in ran.stderr, ran.stderr
    # the public keys are shown only where they differ
    assert ("public key" in ran.stderr) == (differs == "CARDROOM_SIGNING_KEY"), ran.stderr
    assert f"delete {KEYS_KEY}" in ran.stderr, ran.stderr
    assert keys_disagree(redis_db, given) is None
