"""Hand-evaluation speed: ours against treys and PokerKit, in one process, on the same hands.

Run from the repository root:  python benchmarks/evaluation.py [--hands N] [--out BENCHMARKS.md]

Measures 5-card and 7-card natural high hands per second for `domain.evaluation.high`,
treys (`Evaluator.evaluate`) and PokerKit (`StandardHighHand.from_game`); wild-card hands
(`high(..., wild=deuces)`) against a brute-force substitution of every card for every
wild card; and `high_batch` on a NumPy array of 7-card hands. Each library gets the
same hands already converted to its own card type, outside the timing. Every timing is
the best of three passes after a warm-up pass on other hands of the same kind (which also
fills our lazily built tables, as a running service's would be).
"""

from __future__ import annotations

import argparse
import platform
import random
import subprocess
import sys
import time
from importlib.metadata import version
from itertools import product
from pathlib import Path

import numpy as np
import pokerkit
import treys

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.report import write_section  # noqa: E402
from domain.cards import STANDARD_DECK  # noqa: E402
from domain.evaluation import high, of_ranks  # noqa: E402
from domain.evaluation.batch import high_batch  # noqa: E402

SEED = 20240601
DEUCES = of_ranks(2)


def rate(fn, items, passes=3) -> float:
    """Hands per second: best of ``passes`` after a warm-up on the other half of ``items``
    (so the timed hands were never seen by our lazily filled tables before timing)."""
    half = len(items) // 2
    fn(items[:half])
    items = items[half:]
    best = min(_timed(fn, items) for _ in range(passes))
    return len(items) / best


def _timed(fn, items) -> float:
    start = time.perf_counter()
    fn(items)
    return time.perf_counter() - start


def ours(hands):
    for h in hands:
        high(h)


def make_treys(evaluator):
    def run(hands):
        evaluate = evaluator.evaluate
        for h in hands:
            evaluate(h[:2], h[2:])
    return run


def pokerkit_run(hands):
    from_game = pokerkit.StandardHighHand.from_game
    for h in hands:
        from_game(h)


def ours_wild(hands):
    for h in hands:
        high(h, wild=DEUCES)


def brute_force(hands):
    """The best natural hand over every card substituted for every wild card."""
    for h in hands:
        naturals = [c for c in h if c not in DEUCES]
        wilds = len(h) - len(naturals)
        best = None
        for subs in product(STANDARD_DECK, repeat=wilds):
            value = high(naturals + list(subs))
            if best is None or value > best:
                best = value


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--hands", type=int, default=50_000)
    parser.add_argument("--out", default="BENCHMARKS.md")
    args = parser.parse_args()
    rng = random.Random(SEED)
    seven = [rng.sample(STANDARD_DECK, 7) for _ in range(2 * args.hands)]
    results = {}
    for size in (5, 7):
        hands = [tuple(h[:size]) for h in seven]
        treys_hands = [[treys.Card.new(c.code) for c in h] for h in hands]
        pk_hands = ["".join(c.code for c in h) for h in hands]
        pk_count = max(2, len(hands) // 20)  # PokerKit is slow: a twentieth of the hands
        results[size] = {
            "ours": rate(ours, hands),
            "treys": rate(make_treys(treys.Evaluator()), treys_hands),
            "PokerKit": rate(pokerkit_run, pk_hands[:pk_count]),
        }
    wild_rows = {}
    for wilds in (1, 2):
        deuces = sorted(DEUCES, key=lambda c: c.index)
        others = [c for c in STANDARD_DECK if c.rank != 2]
        hands = [rng.sample(others, 7 - wilds) + deuces[:wilds] for _ in range(4000)]
        brute_count = 400 if wilds == 1 else 40
        wild_rows[wilds] = (rate(ours_wild, hands), rate(brute_force, hands[:brute_count], passes=1))
    batch = np.array([[c.index for c in h] for h in seven], dtype=np.int64)
    batch = np.tile(batch, (max(1, 1_000_000 // len(batch)), 1))
    batch_rate = rate(high_batch, batch)
    report = render(results, wild_rows, batch_rate, len(batch), args.hands)
    write_section(Path(args.out), report)
    print(report)


def render(results, wild_rows, batch_rate, batch_size, hands) -> str:
    cpu = subprocess.run("lscpu | grep 'Model name'", shell=True, capture_output=True, text=True).stdout.strip()
    nproc = subprocess.run(["nproc"], capture_output=True, text=True).stdout.strip()
    lines = [
        "# Hand-evaluation benchmarks",
        "",
        f"Machine: {nproc} cores, {cpu.split(':', 1)[-1].strip() or 'unknown CPU'}; "
        f"Python {platform.python_version()}; numpy {version('numpy')}, pokerkit {version('pokerkit')}, "
        f"treys {version('treys')}.",
        "",
        f"Command: `python benchmarks/evaluation.py --hands {hands}` (seed {SEED}; one process; "
        "best of three timed passes after a warm-up on other hands).",
        "",
        "## Natural high hands, evaluations per second",
        "",
        "| cards | ours `high` | treys | PokerKit | ours / faster peer |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for size, row in results.items():
        peer = max(row["treys"], row["PokerKit"])
        lines.append(f"| {size} | {row['ours']:,.0f} | {row['treys']:,.0f} | {row['PokerKit']:,.0f} "
                     f"| {row['ours'] / peer:.1f}x |")
    lines += [
        "",
        "Ours returns a full `HandValue` (comparable, describable); treys an int; PokerKit a hand object.",
        "PokerKit is timed on a twentieth of the hands. Goal: at least 3x the faster peer on 7 cards.",
        "",
        "## Wild cards (7-card hands, deuces wild), evaluations per second",
        "",
        "| wild cards | ours `high(..., wild=deuces)` | brute-force substitution | ratio |",
        "| --- | ---: | ---: | ---: |",
    ]
    for wilds, (fast, brute) in wild_rows.items():
        lines.append(f"| {wilds} | {fast:,.0f} | {brute:,.1f} | {fast / brute:,.0f}x |")
    lines += [
        "",
        "Brute force: every one of the 52 cards for every wild card, judged by our natural `high`. "
        "Goal: at least 50x on two wilds.",
        "",
        "## Batch",
        "",
        f"`high_batch` on a ({batch_size:,}, 7) array of card indices: **{batch_rate:,.0f} hands per second** "
        "(one core; goal: 1,000,000).",
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
