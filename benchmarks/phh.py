"""PHH speed: documents imported and exported per second, beside PokerKit parsing and
replaying the same documents in the same process.

Run from the repository root:
    python benchmarks/phh.py [--hands N] [--out BENCHMARKS.md] [--no-write]

For each variant PHH has a code for, it plays ``--hands`` random hands with
``tests/poker/pokerkit_bridge.py`` (as the engine benchmark does) and exports each with
``domain.phh.export`` (outside the timing). Timed, best of three passes over the set:

* export: ``domain.phh.export`` of each hand's events;
* import: ``domain.phh.import_hand`` of each document (TOML parsing, finding the deck
  that deals its cards, the replay through the engine, the finishing stacks checked);
* PokerKit: ``HandHistory.loads`` of each document and its replay to the last state.

The results go in their own section of ``--out`` (other sections are kept).
"""

from __future__ import annotations

import argparse
import platform
import random
import subprocess
import sys
import time
import tomllib
from importlib.metadata import version
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pokerkit import HandHistory  # noqa: E402

from benchmarks.report import write_section  # noqa: E402
from domain import phh  # noqa: E402
from tests.poker.pokerkit_bridge import Divergence, play, table  # noqa: E402

SECTION = "# PHH: documents per second"
CASES = {
    "NT": ("texas-holdem", {"structure": "no-limit"}),
    "FT": ("texas-holdem", {"structure": "fixed-limit"}),
    "PO": ("omaha", {"structure": "pot-limit"}),
    "FO/8": ("omaha-hi-lo", {"structure": "fixed-limit"}),
    "F7S": ("seven-card-stud", {"rules": "cardroom", "open_pair_big_bet": False}),
}


def hands(code: str, count: int) -> list:
    rng = random.Random(f"phh-benchmark/{code}")
    game, given = CASES[code]
    options = table(game, {**given, "bet_unit": 1})
    unit = options["big_blind"] or options["small_bet"]
    records = []
    while len(records) < count:
        players = rng.randint(2, 8 if game == "seven-card-stud" else 9)
        stacks = {s: rng.randint(4 * unit, 200 * unit) for s in range(1, players + 1)}
        try:
            records.append(play(rng, game, options, stacks, 1, f"{rng.getrandbits(256):064x}"))
        except Divergence:
            continue
    return records


def best_rate(work, items) -> float:
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        for item in items:
            work(item)
        best = min(best, time.perf_counter() - start)
    return len(items) / best


def pokerkit_replay(text: str) -> None:
    *_, _state = HandHistory.loads(text)


def measure(code: str, count: int) -> dict:
    records = hands(code, count)
    documents = [phh.export(r.events, {}) for r in records]
    # PokerKit reads a variant code only: a hand played by a rule its code lacks is written
    # under our own _variant
    coded = [d for d in documents if "variant" in tomllib.loads(d)]
    return {"export": best_rate(lambda r: phh.export(r.events, {}), records),
            "import": best_rate(lambda d: phh.import_hand(d, 1), documents),
            "pokerkit": best_rate(pokerkit_replay, coded)}


def render(results: dict, count: int) -> str:
    def shell(command: str) -> str:
        return subprocess.run(command, shell=True, capture_output=True, text=True).stdout.strip()
    cpu = shell("lscpu | grep 'Model name' | cut -d: -f2").strip()
    lines = [SECTION, "",
             f"Machine: {shell('nproc')} cores (`nproc`); Python {platform.python_version()}; "
             f"pokerkit {version('pokerkit')}; {cpu}.", "",
             f"Command: `python benchmarks/phh.py --hands {count}` (one process; per variant, "
             f"{count} random hands exported once untimed, then the best of three timed passes "
             "over them).", "",
             "| variant | export / s | import / s | PokerKit parse + replay / s | import vs PokerKit |",
             "| --- | ---: | ---: | ---: | ---: |"]
    for code, rate in results.items():
        lines.append(f"| {code} | {rate['export']:,.0f} | {rate['import']:,.0f} | "
                     f"{rate['pokerkit']:,.0f} | {rate['import'] / rate['pokerkit']:.2f}x |")
    lines += ["", "An import replays the document through the engine twice: once with a "
              "provisional deck, swapping the document's cards in as the engine deals, and once "
              "more from the start with the deck found, to produce the events stored."]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=200)
    parser.add_argument("--out", default=str(ROOT / "BENCHMARKS.md"))
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    results = {code: measure(code, args.hands) for code in CASES}
    report = render(results, args.hands)
    print(report)
    if not args.no_write:
        write_section(Path(args.out), report)


if __name__ == "__main__":
    main()
