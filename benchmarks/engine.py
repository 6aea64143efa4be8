"""Poker engine speed: whole hands per second through ``decide`` and ``evolve``, beside
PokerKit playing the same hands (same cards, same moves) in the same process.

Run from the repository root:
    python benchmarks/engine.py [--hands N] [--seed S] [--out BENCHMARKS.md] [--no-write]
                                [--profile]

For each variant (and structure) it plays random legal hands in our engine with
``tests/poker/pokerkit_bridge.py``: 2 to 9 players (2 to 8 in stud, 2 to 6 in draw),
each stack short (up to 3 big blinds or small bets), medium (4 to 40) or deep (50 to
400), random legal moves of random legal sizes. Where PokerKit has the game, PokerKit
follows every hand as it is played (the moves are ones both allow) and records its own
moves and cards. Hands are made up front, outside the timing:

* a warm-up set of ``--hands`` hands, replayed once by both (this fills our lazily built
  evaluation tables and PokerKit's lookups, as a running service's would be);
* three timed sets of ``--hands`` hands each, hands never replayed before; the rate is
  the best of the three.

Timed, for ours: ``engine.initial_state``, then ``engine.decide`` for the StartHand, each
recorded Act and the Showdown, folding every event with ``engine.evolve``, exactly as the
service replays a hand (dealing from the seeded deck, pots, showdown and events
included). For PokerKit: a new ``pokerkit.State`` with the variant's streets, dealt the
same cards explicitly and given the same moves, with every other automation on (antes,
blinds, collection, showing or mucking, hand killing, pushing and pulling chips).

``--profile`` also runs cProfile over one timed set of no-limit hold'em in our engine and
reports where the time goes. The results go in their own section of ``--out`` (other
sections are kept).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import platform
import pstats
import random
import subprocess
import sys
import time
import warnings
from importlib.metadata import version
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.report import write_section  # noqa: E402
from tests.poker.pokerkit_bridge import (Divergence, play, replay_in_engine,  # noqa: E402
                                         replay_in_pokerkit, table)

SEED = 20240607
SECTION = "# Poker engine: hands per second"

# name: (variant, options, most players, PokerKit has it)
CASES = {
    "no-limit hold'em": ("texas-holdem", {"structure": "no-limit"}, 9, True),
    "fixed-limit hold'em": ("texas-holdem", {"structure": "fixed-limit"}, 9, True),
    "pot-limit hold'em": ("texas-holdem", {"structure": "pot-limit"}, 9, True),
    "pot-limit Omaha": ("omaha", {}, 9, True),
    "fixed-limit Omaha hi/lo": ("omaha-hi-lo", {}, 9, True),
    "seven card stud (cardroom)": ("seven-card-stud", {"rules": "cardroom"}, 8, True),
    "five card stud": ("five-card-stud", {}, 8, False),
    "five card draw (house)": ("five-card-draw", {}, 6, False),
    "five card draw (casino)": ("five-card-draw", {"rules": "casino"}, 6, False),
}


def hands(name: str, count: int, rng: random.Random) -> list:
    game, given, most, mirrored = CASES[name]
    options = table(game, given)
    unit = options["big_blind"] or options["small_bet"]
    made = []
    while len(made) < count:
        seats = sorted(rng.sample(range(1, 11), rng.randint(2, most)))
        stacks = {s: rng.choice([rng.randint(1, 3 * unit), rng.randint(4 * unit, 40 * unit),
                                 rng.randint(50 * unit, 400 * unit)]) for s in seats}
        try:
            made.append(play(rng, game, options, stacks, rng.choice(seats),
                             f"{rng.getrandbits(256):064x}", mirror=mirrored))
        except Divergence:
            continue  # a hand PokerKit cannot follow (a known engine bug): another
    return made


def rate(fn, records) -> float:
    start = time.perf_counter()
    for record in records:
        fn(record)
    return len(records) / (time.perf_counter() - start)


def check(record) -> None:
    """PokerKit's automated replay ends with the stacks the mirror saw (outside timing)."""
    state = replay_in_pokerkit(record)
    stacks = {seat: state.stacks[i] for i, seat in enumerate(record.pk.seats)}
    assert not state.status and stacks == record.pk.stacks, (stacks, record.pk.stacks)


def profile(records, top: int = 18) -> tuple[float, list[tuple], list[tuple]]:
    profiler = cProfile.Profile()
    profiler.enable()
    for record in records:
        replay_in_engine(record)
    profiler.disable()
    stats = pstats.Stats(profiler, stream=io.StringIO())
    total = stats.total_tt
    rows = []
    for (path, line, func), (cc, nc, tt, ct, _) in stats.stats.items():
        where = path.replace(str(ROOT) + "/", "")
        rows.append((tt, ct, nc, f"{where}:{line}({func})"))
    return total, sorted(rows, reverse=True)[:top], sorted(rows, key=lambda r: -r[1])[:top]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--hands", type=int, default=500, help="hands per set (one warm-up "
                        "set and three timed sets per variant)")
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--out", default="BENCHMARKS.md")
    parser.add_argument("--no-write", action="store_true", help="print only")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--only", action="append", help="a variant name of CASES (repeatable)")
    args = parser.parse_args()
    # PokerKit warns when it is dealt a card its own deck would not deal next (our stud
    # reshuffles); printing those would be timed with it.
    warnings.filterwarnings("ignore", category=UserWarning, module="pokerkit")
    rng = random.Random(args.seed)
    code = revision()  # the code imported now, whatever is committed while this runs
    results = {}
    for name in args.only or CASES:
        mirrored = CASES[name][3]
        warm, *timed = (hands(name, args.hands, rng) for _ in range(4))
        for record in warm:
            replay_in_engine(record)
            if mirrored:
                check(record)
        ours = theirs = 0.0
        for records in timed:  # interleaved, so a busy moment hits both alike
            ours = max(ours, rate(replay_in_engine, records))
            theirs = max(theirs, rate(replay_in_pokerkit, records)) if mirrored else None
        moves = sum(len(r.commands) for records in timed for r in records) / (3 * args.hands)
        results[name] = (ours, theirs, moves)
        print(f"{name}: ours {ours:,.0f} hands/s"
              + (f", PokerKit {theirs:,.0f} hands/s, {ours / theirs:.1f}x" if theirs else "")
              + f" ({moves:.1f} commands a hand)", flush=True)
    profiled = None
    if args.profile:
        profiled = profile(hands("no-limit hold'em", args.hands, rng))
    report = render(results, profiled, args, code)
    print(report)
    if not args.no_write:
        write_section(Path(args.out), report)


def shell(command: str) -> str:
    return subprocess.run(command, shell=True, capture_output=True, text=True).stdout.rstrip()


def revision() -> str:
    commit = shell(f"git -C {ROOT} rev-parse --short HEAD") or "unknown"
    dirty = shell(f"git -C {ROOT} status --porcelain -- domain")
    return f"commit {commit}" + (" with uncommitted changes in domain/" if dirty else "")


def render(results, profiled, args, code: str) -> str:
    command = f"python benchmarks/engine.py --hands {args.hands}"
    if args.seed != SEED:
        command += f" --seed {args.seed}"
    if args.profile:
        command += " --profile"
    lines = [
        SECTION, "",
        f"Machine: {shell('nproc')} cores (`nproc`); Python {platform.python_version()}; "
        f"pokerkit {version('pokerkit')}. Code: {code}.", "",
        "```", "$ lscpu | head", shell("lscpu | head"), "$ free -h", shell("free -h"), "```", "",
        f"Command: `{command}` (seed {args.seed}; one process). Per variant: a warm-up set "
        f"of {args.hands} random hands replayed once by both, then three sets of "
        f"{args.hands} hands never replayed before; the best of the three.", "",
        "Ours: `initial_state`, then `decide` for StartHand, every Act and the Showdown, "
        "each event folded with `evolve` (the seeded deck, pots, showdown and events "
        "included). PokerKit: a new `State` with the same streets, dealt the same cards "
        "explicitly and given the same moves, every other automation on. Hands: 2 to 9 "
        "players (8 in stud, 6 in draw), stacks short, medium or deep, random legal moves "
        "(moves PokerKit allows too, where it plays the game).", "",
        "| variant | ours, hands/s | PokerKit, hands/s | ours / PokerKit | commands a hand |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for name, (ours, theirs, moves) in results.items():
        lines.append(f"| {name} | {ours:,.0f} | {'' if theirs is None else f'{theirs:,.0f}'} | "
                     f"{'' if theirs is None else f'{ours / theirs:.1f}x'} | {moves:.1f} |")
    goal = results.get("no-limit hold'em")
    lines += ["", "Goal (issue 7): at least 10x PokerKit on no-limit hold'em"
              + (f"; here {goal[0] / goal[1]:.1f}x." if goal and goal[1] else ".")]
    if profiled:
        total, by_self, by_cumulative = profiled
        lines += ["", f"### Where our engine spends its time (no-limit hold'em, cProfile, "
                      f"{args.hands} hands, {total:.2f} s profiled)", "",
                  "By own time:", "",
                  "| function | calls | own time | own % | with callees % |",
                  "| --- | ---: | ---: | ---: | ---: |"]
        lines += [f"| `{where}` | {calls:,} | {tt:.3f} s | {100 * tt / total:.1f} | "
                  f"{100 * ct / total:.1f} |" for tt, ct, calls, where in by_self]
        lines += ["", "By time with callees:", "",
                  "| function | calls | with callees % |", "| --- | ---: | ---: |"]
        lines += [f"| `{where}` | {calls:,} | {100 * ct / total:.1f} |"
                  for tt, ct, calls, where in by_cumulative]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
