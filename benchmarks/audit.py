"""In-process audit speed: ``GET .../audit``'s work (``Reads.audit``) on stored hands.

Run from the repository root:
    python benchmarks/audit.py [--hands 200] [--redis-url URL] [--profile] [--instructions]

Plays ``--hands`` Five Card Draw hands of 4 players to the end through the service layer
(``Cardroom``: the same commands as the HTTP API, showdowns settled in process), on an
in-process fakeredis server or, with ``--redis-url``, on that Redis (its database is
flushed: give it one of its own; one holding keys that no benchmark wrote is refused).
Then it audits every hand once, untimed, and times the best of three passes over all of
them, as CPU time of this process: hands per second on one core. ``--profile`` prints
where one pass spends it (cProfile, on CPU time).

``--instructions`` counts instead of timing (as ``benchmarks/requests.py`` does): the
benchmark runs twice under valgrind's callgrind, once auditing every hand three times more
after the untimed pass and once without, and the difference in instructions is divided by
the number of audits. Set ``PYTHONHASHSEED=0``; the hands are random, so counts still move
by about half a percent from run to run.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import re
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.scratch import emptied  # noqa: E402
from domain.commands import Act  # noqa: E402
from domain.views import Viewer  # noqa: E402
from service.backend import Backend  # noqa: E402
from service.config import Config  # noqa: E402
from service.keys import Keys, new_key_pair  # noqa: E402
from service.room import Cardroom  # noqa: E402
from service.store import EventStore  # noqa: E402

# bet, three calls, four draws of nothing, bet, three calls: the showdown
SCRIPT = (["bet"] + ["call"] * 3 + ["draw"] * 4 + ["bet"] + ["call"] * 3)


def play(room: Cardroom, hands: int) -> list[str]:
    tables = to_the_showdown(room, hands)
    for table_id in tables:
        assert room.settle_showdown(table_id, 1)
    return tables


def to_the_showdown(room: Cardroom, hands: int) -> list[str]:
    """``hands`` new tables, each with one hand of 4 players played to its showdown."""
    tables = []
    for _ in range(hands):
        table_id = room.create_table("five-card-draw", {}, None)["table_id"]
        for n in range(4):
            room.seat_player(table_id, f"p{n}", 1000, "", None)
        room.start_hand(table_id, None, None)
        for kind in SCRIPT:
            hand = room.hand(table_id, 1).state
            seat = hand.awaiting[0]
            player = next(s.player_id for s in hand.seats if s.seat == seat)
            room.act(table_id, 1, Viewer("player", seat, player),
                     Act(seat=seat, type=kind, amount=25 if kind == "bet" else None, cards=()),
                     None, None)
        tables.append(table_id)
    return tables


def audit_all(room: Cardroom, tables: list[str]) -> None:
    for table_id in tables:
        assert room.audit(table_id, 1)["valid"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=200)
    parser.add_argument("--redis-url")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--instructions", action="store_true",
                        help="count instructions under valgrind instead of timing")
    parser.add_argument("--passes", type=int, help=argparse.SUPPRESS)  # one count's run
    args = parser.parse_args(argv)
    if args.instructions:
        return count_instructions(args)
    backend = Backend.from_config(Config(redis_url=args.redis_url))
    if args.redis_url:
        emptied(backend.redis)
    keys = Keys.from_hex(*new_key_pair())
    room = Cardroom(EventStore(backend.redis, keys), keys, None)
    tables = play(room, args.hands)
    audit_all(room, tables)
    if args.passes is not None:
        for _ in range(args.passes):
            audit_all(room, tables)
        return 0
    best = float("inf")
    for _ in range(3):
        start = time.process_time()
        audit_all(room, tables)
        best = min(best, time.process_time() - start)
    where = args.redis_url and "a real Redis" or "fakeredis (in process)"
    print(f"audit: {len(tables) / best:,.0f} hands/s on one core "
          f"({1000 * best / len(tables):.2f} ms CPU a hand; {where})")
    if args.profile:
        profile = cProfile.Profile(time.process_time)
        profile.runcall(audit_all, room, tables)
        pstats.Stats(profile).sort_stats("cumulative").print_stats(40)
    return 0


def count_instructions(args) -> int:
    """Instructions per audited hand: a run that audits every hand three times more than a
    run that only plays them (and audits them once, to warm up, as both do)."""
    def collected(passes: int) -> int:
        command = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
                   sys.executable, __file__, "--hands", str(args.hands),
                   "--passes", str(passes)]
        command += ["--redis-url", args.redis_url] if args.redis_url else []
        run = subprocess.run(command, capture_output=True, text=True, check=True)
        return int(re.search(r"Collected : (\d+)", run.stderr)[1])

    passes = 3  # the audits outweigh the play's own variation (its hands are random)
    spent = collected(passes) - collected(0)
    print(f"audit: {spent / (passes * args.hands):,.0f} instructions a hand", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
