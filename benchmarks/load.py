"""Full Five Card Draw hands through the HTTP API, N tables in parallel, and ratios to the
stack's floor (``benchmarks/floor.py``) measured in the same run.

Run from the repository root, against a running ``cardroom serve`` (and its workers):
    python benchmarks/load.py BASE_URL --tables N --seconds S [--floor URL]
                              [--probe-seconds 5] [--probe-hands 40] [--probes floor,read,action]
                              [--rounds 1] [--processes P]
                              [--redis-url URL (default: REDIS_URL)] [--uneven]
(BENCHMARKS.md shows how to start the whole stack: a private redis-server, the API, two
workers and ``benchmarks/floor.py``.) It first waits up to 30 s for the API's ``/healthz``
and the floor route to answer 200, as servers just started take a moment, and exits with
a message if one answers otherwise or not at all.

Each table slot plays hand after hand for ``--seconds``: create a table, sit 4 players,
start the hand, then 12 actions (bet, call, call, call; four draws of no card; bet,
call, call, call), each player reading the hand before acting, then it polls the
hand's events (``GET .../events?after=v``) until ``HandEnded``: the showdown latency is
from the last action's answer to the first poll that sees the hand ended. The slots are
threads spread over ``--processes`` processes (so the client is not one GIL). Each
phase's connections are spread evenly over the server's processes (``Placement``). Every
slot connects from one address, of which a process serves 16 requests at once by default:
past 16 tables per API process, serve with ``CARDROOM_MAX_REQUESTS_PER_ADDRESS=0``.

With ``--floor URL`` (the floor route, e.g. ``http://127.0.0.1:8100/floor``) it first
measures, at the same concurrency (one client per table) and for ``--probe-seconds``
each: the floor route, a hand read (the same player's read of a hand, again and again),
and an action (``--probe-hands`` hands per client started beforehand, outside the
timing, then only their 12 actions; the last one of each hand enqueues its showdown, so
the workers run meanwhile). It prints their ratios to the floor beside the goals of
issue 9. With ``--rounds K`` the three probes take turns K times and each ratio is taken
over all of a probe's requests and time: on a machine whose speed drifts from minute to
minute, the floor and the service are then measured across the same minutes.

The CPU split is the user + system time, over each window, of the API's processes (the
ones listening on BASE_URL's port and their children), the ``cardroom worker``
processes whose ``REDIS_URL`` is ``--redis-url``, the redis-server listening on that
URL's port, the floor server, and this benchmark's own processes, as % of one core;
``other`` is the rest of the machine (other work on a shared machine shows there).
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import math
import multiprocessing
import os
import signal
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import psutil

PLAYERS = 4
BUY_IN = 1000
GAME = {"game": "five-card-draw"}
# The action probe's hand: the first seat to act bets, the others call; all draw nothing.
SCRIPT = ([{"type": "bet", "amount": 25}] + [{"type": "call"}] * 3
          + [{"type": "draw", "cards": []}] * 4
          + [{"type": "bet", "amount": 25}] + [{"type": "call"}] * 3)
POLL_PAUSE = 0.002  # seconds between polls for the showdown
SERVER_WAIT = 30  # seconds for the API and the floor to answer, as they start


class Placement:
    """Spreads one phase's connections evenly over the processes of the server they go to.

    With 4 keep-alive connections on 2 processes, whichever process accepts first takes a
    connection: in 40 tries the kernel put 3 or 4 on one process 22 times, which then
    serves them under one interpreter lock while the other idles. So each connection,
    once the server has accepted it, is kept only if its process holds less than its
    even share, else made again; the floor and the service alike (``--uneven`` keeps
    the kernel's placement)."""

    SLOTS = 32  # server processes at most

    def __init__(self, context, servers: dict[int, set[int]], clients: int):
        self.servers = servers  # port -> the pids of the processes that serve it
        self.lock = context.Lock()
        self.held = context.Array("q", 2 * self.SLOTS, lock=False)  # pid, connections ...
        self.share = {port: math.ceil(clients / len(pids)) for port, pids in servers.items()}

    def connect(self, connection: http.client.HTTPConnection) -> None:
        """Connect, placed; or as the kernel placed it after 200 tries. A connection that
        fails is left to the first request, which counts the error."""
        for attempt in range(200):
            try:
                connection.connect()
            except OSError:
                connection.close()
                return
            pid = self._server_of(connection)
            if pid is None or attempt == 199 or self._take(pid, self.share[connection.port]):
                return
            connection.close()

    def _server_of(self, connection: http.client.HTTPConnection) -> int | None:
        ours = connection.sock.getsockname()[1]
        for _ in range(100):  # until a process has accepted it
            for pid in self.servers.get(connection.port, ()):
                with contextlib.suppress(psutil.NoSuchProcess):
                    if any(c.raddr and c.raddr.port == ours
                           for c in psutil.Process(pid).net_connections("tcp")):
                        return pid
            time.sleep(0.001)
        return None

    def spread(self) -> str:
        """The connections each process held, e.g. "2+2"."""
        return "+".join(str(n) for n in sorted(self.held[1::2], reverse=True) if n)

    def _take(self, pid: int, share: int) -> bool:
        with self.lock:
            for i in range(0, len(self.held), 2):
                if self.held[i] in (0, pid):
                    self.held[i] = pid
                    if self.held[i + 1] >= share:
                        return False
                    self.held[i + 1] += 1
                    return True
        return True


class Client:
    """One keep-alive HTTP/1.1 connection; every request is timed and recorded."""

    def __init__(self, base_url: str, samples: list, placement: Placement | None = None):
        parts = urlsplit(base_url)
        self.host, self.port = parts.hostname, parts.port or 80
        self.prefix = parts.path.rstrip("/")
        self.samples = samples
        self.connection = http.client.HTTPConnection(self.host, self.port, timeout=30)
        if placement is not None:
            placement.connect(self.connection)

    def request(self, kind: str, method: str, path: str, body: dict | None = None,
                token: str | None = None, idempotent: bool = False) -> tuple[int, dict]:
        headers = {"Content-Type": "application/json"} if body is not None else {}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        if idempotent:
            headers["Idempotency-Key"] = uuid.uuid4().hex
        data = json.dumps(body).encode() if body is not None else None
        start = time.monotonic()
        for attempt in (1, 2):
            try:
                self.connection.request(method, self.prefix + path, data, headers)
                response = self.connection.getresponse()
                raw = response.read()
                break
            except (http.client.HTTPException, OSError):
                self.connection.close()  # a dropped keep-alive connection: once more
                if attempt == 2:
                    self.samples.append((kind, start, time.monotonic(), 599))
                    return 599, {}
        end = time.monotonic()
        self.samples.append((kind, start, end, response.status))
        try:
            return response.status, json.loads(raw) if raw else {}
        except ValueError:
            return response.status, {}


@dataclass
class Table:
    table_id: str
    admin: str
    tokens: dict[int, str]  # seat -> player token
    hand_no: int = 0
    version: int = 0


def new_table(client: Client) -> Table | None:
    status, body = client.request("setup", "POST", "/v1/tables", GAME)
    if status != 201:
        return None
    table = Table(body["table_id"], body["admin_token"], {})
    for n in range(PLAYERS):
        status, seated = client.request("setup", "POST", f"/v1/tables/{table.table_id}/players",
                                        {"name": f"p{n}", "buy_in": BUY_IN}, idempotent=True)
        if status != 201:
            return None
        table.tokens[seated["seat"]] = seated["token"]
    status, started = client.request("setup", "POST", f"/v1/tables/{table.table_id}/hands", {},
                                      token=table.admin, idempotent=True)
    if status != 201:
        return None
    table.hand_no, table.version = started["hand_no"], started["version"]
    return table


def awaited(events: list[dict]) -> list[int]:
    """The seats the hand waits for after these events ([] once nobody is to act)."""
    for event in reversed(events):
        if event["type"] == "ActionOn":
            return list(event["data"]["seats"])
    return []


def choose(legal: list[dict]) -> dict | None:
    kinds = {action["type"]: action for action in legal}
    if "draw" in kinds:
        return {"type": "draw", "cards": []}
    if "call" in kinds:
        return {"type": "call"}
    if "bet" in kinds:
        return {"type": "bet", "amount": kinds["bet"]["min"]}
    if "check" in kinds:
        return {"type": "check"}
    return None


def play_hand(client: Client, showdowns: list, deadline: float) -> bool:
    """One full hand on a new table; True if it ended."""
    table = new_table(client)
    if table is None:
        return False
    hand = f"/v1/tables/{table.table_id}/hands/{table.hand_no}"
    seat, last_action = 2, None  # a fresh table: seat 2 opens
    while True:
        if time.monotonic() >= deadline:
            return False
        status, view = client.request("read", "GET", hand, token=table.tokens[seat])
        if status != 200:
            return False
        if seat not in view["awaiting"]:
            if not view["awaiting"]:  # nobody to act: it waits for the showdown
                last_action, version = last_action or time.monotonic(), view["version"]
                break
            seat = view["awaiting"][0]
            continue
        action = choose(view["legal_actions"])
        if action is None:
            return False
        status, done = client.request("action", "POST", f"{hand}/actions",
                                      {**action, "expected_version": view["version"]},
                                      token=table.tokens[seat], idempotent=True)
        if status != 201:
            return False
        last_action, version = time.monotonic(), done["version"]
        following = awaited(done["events"])
        if not following:
            break
        seat = following[0]
    while time.monotonic() < deadline:
        status, body = client.request("poll", "GET", f"{hand}/events?after={version}",
                                      token=table.admin)
        if status != 200:
            return False
        if any(e["type"] == "HandEnded" for e in body["events"]):
            showdowns.append((last_action, time.monotonic()))
            return True
        if body["events"]:
            version = body["events"][-1]["version"]
        time.sleep(POLL_PAUSE)
    return False


# --- one slot's work in each phase; each returns when its deadline passes --------------

def load_slot(base_url, floor_url, seconds, out):
    samples, showdowns, ended = [], [], []
    client = Client(base_url, samples, out.get("placement"))
    out["ready"]()
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        before = len(samples)
        if play_hand(client, showdowns, deadline):
            ended.append(len(samples) - before)  # the requests it took
    return {"samples": samples, "showdowns": showdowns, "hands": ended}


def floor_slot(base_url, floor_url, seconds, out):
    samples = []
    client = Client(floor_url, samples, out.get("placement"))
    out["ready"]()
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        client.request("floor", "GET", "")
    return {"samples": samples}


def read_slot(base_url, floor_url, seconds, out):
    samples = []
    client = Client(base_url, samples, out.get("placement"))
    table = new_table(client)
    failed = [s for s in samples if s[3] >= 400]
    samples.clear()
    out["ready"]()
    if table is None:  # counted as the probe's errors
        return {"samples": [("read", *s[1:]) for s in failed]}
    deadline = time.monotonic() + seconds
    path = f"/v1/tables/{table.table_id}/hands/{table.hand_no}"
    while time.monotonic() < deadline:
        client.request("read", "GET", path, token=table.tokens[2])
    return {"samples": samples}


def action_slot(base_url, floor_url, seconds, out):
    """Scripted actions on hands started beforehand; stops early when they run out."""
    samples = []
    client = Client(base_url, samples, out.get("placement"))
    tables = [table for _ in range(out["hands"]) if (table := new_table(client))]
    samples.clear()
    out["ready"]()
    deadline = time.monotonic() + seconds
    for table in tables:
        seat, version = 2, table.version
        path = f"/v1/tables/{table.table_id}/hands/{table.hand_no}/actions"
        for action in SCRIPT:
            if time.monotonic() >= deadline:
                return {"samples": samples}
            status, done = client.request("action", "POST", path,
                                          {**action, "expected_version": version},
                                          token=table.tokens[seat], idempotent=True)
            if status != 201:
                break
            version, following = done["version"], awaited(done["events"])
            seat = following[0] if following else seat
    return {"samples": samples, "ran_out": time.monotonic()}


SLOTS = {"load": load_slot, "floor": floor_slot, "read": read_slot, "action": action_slot}


def _process(phase, slots, args, barrier, results, extra):
    """One client process: ``slots`` threads of ``phase``; reports once all are done."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    outputs, threads = [None] * slots, []
    # every slot of this process set up, then of every other process: go
    ready = threading.Barrier(slots + 1, action=barrier.wait)
    out = {**extra, "ready": ready.wait}

    def run(i):
        outputs[i] = SLOTS[phase](args.base_url, args.floor, extra["seconds"], out)
    for i in range(slots):
        threads.append(threading.Thread(target=run, args=(i,), daemon=True))
        threads[-1].start()
    ready.wait()
    cpu = os.times()
    for thread in threads:
        thread.join()
    used = os.times()
    results.put({"outputs": outputs, "cpu": used.user + used.system - cpu.user - cpu.system})


@dataclass
class Phase:
    outputs: list
    start: float
    end: float
    cpu: dict = field(default_factory=dict)
    spread: str = "as the kernel placed them"  # connections per server process


def run_phase(phase: str, args, seconds: float, watched: dict | None = None, **extra) -> Phase:
    context = multiprocessing.get_context("fork")
    processes = min(args.processes, args.tables)
    shares = [args.tables // processes + (i < args.tables % processes) for i in range(processes)]
    barrier, results = context.Barrier(processes + 1), context.Queue()
    if args.servers:
        extra["placement"] = Placement(context, args.servers, args.tables)
    children = [context.Process(target=_process, args=(phase, n, args, barrier, results,
                                                       {**extra, "seconds": seconds}),
                                 daemon=True)  # stopped at exit, if it is cut short
                for n in shares]
    for child in children:
        child.start()
    barrier.wait()
    start, before = time.monotonic(), cpu_times(watched or {})
    reports = [results.get() for _ in children]
    end, after = time.monotonic(), cpu_times(watched or {})
    for child in children:
        child.join()
    cpu = {name: after[name] - before[name] for name in after}
    if watched:
        cpu["load.py"] = sum(r["cpu"] for r in reports)
        cpu["other"] = cpu.pop("machine") - sum(cpu.values())
    phase = Phase([o for r in reports for o in r["outputs"]], start, end, cpu)
    if "placement" in extra:
        phase.spread = extra["placement"].spread()
    return phase


# --- the servers, before anything is measured -----------------------------------------

def awaited_answer(url: str, route: str, seconds: float) -> str | None:
    """Why ``url`` + ``route`` does not answer a GET with 200, or None once it does; a
    server that does not answer yet (just started) is waited for, up to ``seconds``."""
    parts = urlsplit(url)
    try:
        port = parts.port or 80
    except ValueError:  # not a number, or out of range
        port = None
    if parts.scheme != "http" or not parts.hostname or port is None:
        return f"{url!r} is not an http://HOST[:PORT] URL"
    path, deadline = (parts.path.rstrip("/") + route) or "/", time.monotonic() + seconds
    waiting = False
    while True:
        connection = http.client.HTTPConnection(parts.hostname, port, timeout=seconds)
        try:
            connection.request("GET", path)
            status = connection.getresponse().status
            return None if status == 200 else f"GET {path} at {url} answers {status}"
        except (OSError, http.client.HTTPException) as error:
            why = f"{url} does not answer ({error})"
        finally:
            connection.close()
        if time.monotonic() >= deadline:
            return f"{why} after {seconds:g} s"
        if not waiting:
            print(f"waiting up to {seconds:g} s for {url} to answer", flush=True)
            waiting = True
        time.sleep(0.2)


# --- which processes are whose -------------------------------------------------------

def listening(port: int) -> set[int]:
    return {c.pid for c in psutil.net_connections("tcp")
            if c.status == psutil.CONN_LISTEN and c.laddr.port == port and c.pid}


def serving(port: int) -> set[int]:
    """The processes that accept connections on ``port``: a gunicorn master's workers, or
    the one process that listens."""
    pids = server_of(listening(port))
    return {pid for pid in pids if psutil.Process(pid).ppid() in pids} or pids


def server_of(pids: set[int]) -> set[int]:
    """The whole server of these listening processes: up to the topmost parent that runs
    the same command (gunicorn's master), and all its children."""
    found = set()
    for pid in pids:
        proc = psutil.Process(pid)
        while (parent := proc.parent()) is not None and parent.cmdline() == proc.cmdline():
            proc = parent
        found |= {proc.pid} | {child.pid for child in proc.children(recursive=True)}
    return found


def workers_of(redis_url: str) -> set[int]:
    found = set()
    for proc in psutil.process_iter(["cmdline"]):
        try:
            if "worker" in (proc.info["cmdline"] or [])[-1:] and \
                    proc.environ().get("REDIS_URL") == redis_url:
                found.add(proc.pid)
        except (psutil.AccessDenied, psutil.NoSuchProcess, IndexError):
            pass
    return found


def cpu_times(watched: dict[str, set[int]]) -> dict[str, float]:
    """Seconds of CPU (user + system, with reaped children) of each group, and the machine's."""
    totals = {}
    for name, pids in watched.items():
        totals[name] = 0.0
        for pid in pids:
            try:
                t = psutil.Process(pid).cpu_times()
                totals[name] += t.user + t.system + t.children_user + t.children_system
            except psutil.NoSuchProcess:
                pass
    machine = psutil.cpu_times()
    totals["machine"] = machine.user + machine.system + machine.nice + getattr(machine, "irq", 0) \
        + getattr(machine, "softirq", 0)
    return totals


# --- the report ----------------------------------------------------------------------

def rate(phase: Phase, kind: str) -> tuple[float, list[float], int, float]:
    """Requests of ``kind`` per second within the window where every slot ran, their
    latencies, how many failed, and that window's length in seconds."""
    end = min([phase.end] + [o["ran_out"] for o in phase.outputs if "ran_out" in o])
    done = [s for o in phase.outputs for s in o["samples"] if s[0] == kind and s[2] <= end]
    ok = [s for s in done if s[3] < 400]
    window = end - phase.start
    return len(ok) / window, [s[2] - s[1] for s in ok], len(done) - len(ok), window


def overall(rounds: list[tuple[float, list[float], int, float]]) -> float:
    """Requests per second over every round of a probe: all its requests over all its time."""
    return sum(r * window for r, _, _, window in rounds) / sum(w for *_, w in rounds)


def requests_per_hand(outputs: list[dict]) -> float:
    """The requests a hand that ended took: not those of a hand cut off by an error (or
    by the deadline), which would make the goal (0.5 x floor / requests per hand) lower."""
    hands = [requests for o in outputs for requests in o["hands"]]
    return sum(hands) / len(hands) if hands else float("nan")


def cpu_split(phase: Phase) -> str:
    window = phase.end - phase.start
    return ", ".join(f"{name} {100 * seconds / window:.0f}%" for name, seconds in phase.cpu.items())


def ms(values: list[float], q: float) -> str:
    if not values:
        return "-"
    ordered = sorted(values)
    return f"{1000 * ordered[min(len(ordered) - 1, math.ceil(q * len(ordered)) - 1)]:.1f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base_url")
    parser.add_argument("--tables", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--floor", help="URL of benchmarks/floor.py's /floor route")
    parser.add_argument("--probe-seconds", type=float, default=5)
    parser.add_argument("--probe-hands", type=int, default=40,
                        help="hands started per slot for the action probe")
    parser.add_argument("--probes", default="floor,read,action",
                        help="which of the floor probes to run (all by default)")
    parser.add_argument("--rounds", type=int, default=1,
                        help="run the floor probes this many times, taking turns, and take "
                        "the ratios over all of them (a machine whose speed drifts)")
    parser.add_argument("--processes", type=int, default=min(4, os.cpu_count() or 1))
    parser.add_argument("--redis-url", default=os.environ.get("REDIS_URL"))
    parser.add_argument("--uneven", action="store_true",
                        help="keep the kernel's placement of connections on the server's "
                        "processes (by default they are spread evenly)")
    args = parser.parse_args(argv)
    for url, route in [(args.base_url, "/healthz")] + [(args.floor, "")] * bool(args.floor):
        if why := awaited_answer(url, route, SERVER_WAIT):
            parser.error(why)
    ports = [urlsplit(url).port or 80 for url in (args.base_url, args.floor) if url]
    # (a server whose processes this machine does not show is left as the kernel places it)
    args.servers = {} if args.uneven else {port: pids for port in ports if (pids := serving(port))}

    api = server_of(listening(urlsplit(args.base_url).port or 80))
    watched = {"api": api, "workers": set(), "redis": set()}
    if args.floor:
        watched["floor"] = server_of(listening(urlsplit(args.floor).port or 80))
    if args.redis_url:
        watched["workers"] = workers_of(args.redis_url)
        watched["redis"] = listening(urlsplit(args.redis_url).port or 6379)
    print(f"pids: api {sorted(api)}, workers {sorted(watched['workers'])}, "
          f"redis {sorted(watched['redis'])}", flush=True)
    if not args.redis_url:
        print("no --redis-url (nor REDIS_URL): the workers' and Redis's CPU count as other",
              flush=True)
    elif unfound := [name for name, pids in watched.items() if not pids]:
        print(f"no {' nor '.join(unfound)} process found on this machine (--redis-url "
              f"{args.redis_url}; workers are matched by their REDIS_URL): their CPU counts "
              "as other", flush=True)

    probes: dict[str, list] = {}
    kinds = [(kind, extra) for kind, extra in (
        ("floor", {}), ("read", {}), ("action", {"hands": args.probe_hands}))
        if kind in args.probes] if args.floor else []
    for _ in range(args.rounds):
        for kind, extra in kinds:
            probe = run_phase(kind, args, args.probe_seconds, watched, **extra)
            per_second, latencies, failed, _ = measured = rate(probe, kind)
            probes.setdefault(kind, []).append(measured)
            print(f"probe {kind}: {per_second:.0f} requests/s, p50 {ms(latencies, .5)} "
                  f"ms, p99 {ms(latencies, .99)} ms, errors {failed}; "
                  f"CPU {cpu_split(probe)}; connections {probe.spread}", flush=True)

    phase = run_phase("load", args, args.seconds, watched)
    window = phase.end - phase.start
    samples = [s for o in phase.outputs for s in o["samples"]]
    hands = sum(len(o["hands"]) for o in phase.outputs)
    showdowns = [b - a for o in phase.outputs for a, b in o["showdowns"]]
    errors: dict[str, int] = {}
    for kind, _, _, status in samples:
        if status >= 400:
            errors[f"{kind} {status}"] = errors.get(f"{kind} {status}", 0) + 1
    latency = {k: [s[2] - s[1] for s in samples if s[0] == k and s[3] < 400]
               for k in ("action", "read", "setup", "poll")}
    per_hand = requests_per_hand(phase.outputs)
    print(f"\nload: {args.tables} tables, {window:.1f} s, {len(samples)} requests "
          f"({len(samples) / window:.0f}/s)")
    print(f"hands/s {hands / window:.1f}; actions/s {len(latency['action']) / window:.0f}; "
          f"requests per hand {per_hand:.1f}")
    for kind in ("action", "read", "setup", "poll"):
        print(f"  {kind:7} p50 {ms(latency[kind], .5):>6} ms  p99 {ms(latency[kind], .99):>6} ms"
              f"  ({len(latency[kind])})")
    print(f"  showdown (last action -> HandEnded seen) p50 {ms(showdowns, .5)} ms, "
          f"p99 {ms(showdowns, .99)} ms ({len(showdowns)}; polls every {POLL_PAUSE * 1000:.0f} ms)")
    print(f"errors: {errors or 'none'}")
    print(f"CPU, % of one core over the window: {cpu_split(phase)}")
    print(f"connections per API process: {phase.spread}")
    api_ms = 1000 * phase.cpu["api"] / len(samples) if samples else float("nan")
    print(f"API CPU per request {api_ms:.2f} ms")

    if len(probes) == 3:
        floor, read, action = (overall(probes[kind]) for kind in ("floor", "read", "action"))
        if not floor:  # its server failed after it first answered
            print("\nno ratios to the floor: none of its requests succeeded", file=sys.stderr)
            return 1
        over = f", over {args.rounds} rounds" if args.rounds > 1 else ""
        print(f"\nratios to the floor ({floor:.0f} requests/s at {args.tables} in parallel"
              f"{over}):")
        print(f"  read / floor   {read / floor:.2f}  (goal >= 0.8)")
        print(f"  action / floor {action / floor:.2f}  (goal >= 0.5)")
        target = 0.5 * floor / per_hand
        print(f"  hands/s {hands / window:.1f} vs 0.5 x floor / requests per hand = {target:.1f}"
              f"  ({hands / window / target:.2f} of it; goal >= 1)")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        print("load.py: interrupted", file=sys.stderr)
        sys.exit(130)
