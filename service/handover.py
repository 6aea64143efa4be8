"""A hand brought to its showdown, handed from the API process to the worker that settles it.

The process whose move owed the showdown holds the hand as its replay cache keeps it
(``Reads.cache``); the worker would read and replay the hand's stream, most of a job's own
work. So that process hands it over with the job: pickled, compressed and sealed
(``Keys.seal``) to the table, the hand and the domain's code, so the hidden cards in it
stay unreadable on the job queue's Redis, and only a process with this service's secret
key and the same rules can make or take one (so nothing else is unpickled). The worker
keeps it as its cache's base for the stream and reads on from there, as every read does:
the store tells whether the stream still has that head, and a stream that moved on or was
rewritten is read as without it. The table is read as always (a worker's cache holds it
from its last job there). A job without a hand over (re-enqueued by the sweeper, or sent
by an embedded app, whose job thread shares its cache) reads the hand; so does one whose
seal does not open (another key, other code).
"""

from __future__ import annotations

import hashlib
import pickle
import zlib
from functools import cache
from pathlib import Path

import domain
from service.reads import Loaded, Reads
from service.store import hand_stream


def hand_over(room: Reads, table_id: str, hand_no: int) -> bytes | None:
    """The hand as ``room`` holds it, sealed; None if it holds none."""
    hand = room.cache.base(hand_stream(table_id, hand_no))
    if not hand.version:
        return None
    held = pickle.dumps((hand.state, hand.version, hand.head_hash), pickle.HIGHEST_PROTOCOL)
    return room.keys.seal(zlib.compress(held, 1), _context(table_id, hand_no))


def take_over(room: Reads, table_id: str, hand_no: int, sealed: bytes) -> bool:
    """Keep what ``hand_over`` sealed as ``room``'s base for the hand's stream (unless it
    holds a later version); False if the seal does not open."""
    held = room.keys.unseal(sealed, _context(table_id, hand_no))
    if held is None:
        return False
    state, version, head_hash = pickle.loads(zlib.decompress(held))
    room.cache.offer(hand_stream(table_id, hand_no), Loaded(state, version, head_hash))
    return True


def _context(table_id: str, hand_no: int) -> str:
    return f"cardroom/hand-over/v1\0{table_id}\0{hand_no}\0{_rules()}"


@cache
def _rules() -> str:
    """The domain's code, as a digest of its sources: a state pickled by other rules (a
    process of another version beside this one) is not taken."""
    root = Path(domain.__file__).parent
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


_rules()  # now, as the process loads its rules: not from files replaced since (an upgrade)
