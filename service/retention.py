"""Retention: ended hands compacted in Redis (``CARDROOM_ARCHIVE_AFTER``), never lost.

Once a hand has ended and ``Config.archive_after`` seconds have passed (by Redis TIME),
a sweep replaces its stream by one string key, ``t:{<table>}:hand:<n>:archive``: every
entry as stored (ids, every field, the encrypted openings), as JSON compressed with zlib,
about 40% of the stream's memory (``benchmarks/memory.py --archive``). Its receipt stays
as it is. The event store reads an archived hand as it read its stream (``EventStore.read``
and ``read_on``), so every read of it answers exactly as before.

Which hands: with the setting on, every write that ends a hand (an action, the showdown
job, a PHH import) indexes it in ``cardroom:ended-hands`` in its script
(``EventStore.append(..., ends_hand=n)``; on a Redis Cluster just after it, one more round
trip once a hand, and a crash in between leaves that hand a stream, losing nothing). So
the API processes and the workers need the setting alike, and hands that ended while it
was off stay streams: an index kept with the setting off would grow by a hundred bytes a
hand for good.

Who: every sweep (``Backend.sweep``: the sweeper thread of each ``cardroom worker``, or
the embedded job thread) calls ``archive_ended_hands``, which takes up to ``BATCH`` of
the oldest entries older than the setting, moving them ``CLAIM_SECONDS`` later in the same
script so that the other sweepers take other hands (or these again, should this one die),
and archives each (``EventStore.archive_hand``: it reads the stream, then one script swaps
the keys only if the stream still has that length and head hash). Sweepers that race all
the same archive a hand once: the other finds the stream gone and the archive there. An
entry whose hand has not ended (a hand whose events were rewritten since) is dropped. A
hand that fails for another reason keeps its entry, given back for the next sweep, the
others of the batch go on, and the first failure is raised at the end, for the sweep to
log once.
"""

from __future__ import annotations

from service import metrics
from service.backend import store_unavailable
from service.store import EventStore

BATCH = 100  # hands archived per sweep, at most (about two round trips each)
CLAIM_SECONDS = 60.0  # a sweeper's hold on the hands it took, should it die before the end


def archive_ended_hands(store: EventStore, archive_after: float | None,
                        batch: int = BATCH) -> int:
    """Archive up to ``batch`` hands that ended at least ``archive_after`` seconds ago (by
    Redis TIME); how many this call archived. Nothing when ``archive_after`` is None."""
    if archive_after is None:
        return 0
    cutoff = store.redis_time() - archive_after
    claimed = cutoff + CLAIM_SECONDS
    archived, settled, failed, failure = 0, [], [], None
    for table_id, hand_no in store.claim_ended_hands(cutoff, batch, claimed):
        try:
            outcome = store.archive_hand(table_id, hand_no)
        except Exception as error:
            if store_unavailable(error):
                raise
            failure = failure or error
            failed.append((table_id, hand_no))
            continue
        if outcome == "archived":
            archived += 1
            metrics.job_metrics().hands_archived.inc()
        if outcome != "changed":  # changed: it moved on since the read; once the claim ends
            settled.append((table_id, hand_no))
    store.forget_ended_hands(settled, claimed)
    store.release_ended_hands(failed, cutoff)
    if failure is not None:
        raise failure
    return archived
