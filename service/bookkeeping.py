"""An RQ worker's bookkeeping of each job in fewer round trips to Redis, with the same keys,
statuses and registries as RQ's own (``cardroom worker`` and the embedded job thread).

Besides its heartbeats (``service.heartbeats``), RQ 3 spends eleven round trips on a job
that succeeds, the job's own aside; here five (the check for ``rq suspend``, taking the job
off the queue, reading it, and):

- the job starts in one transaction (RQ: two, its execution's, then the job's);
- its success is recorded in one transaction (RQ: a WATCH of the job's dependents, a read
  of them, then the transaction), with the job's last heartbeat (RQ: a command of its own
  just before) and the worker's "idle" state (RQ: a command of its own just after);
- a state the worker is in already is not set again (RQ sets "idle" after each job, and
  again as it waits for the next). The worker itself stays "busy" until it waits: a
  SIGTERM as a job ends then stops it once the job is recorded, as RQ's does, rather than
  breaking into the recording (the job counted as failed, the stop forgotten).

A job that has dependents (none on the cardroom queue) has them enqueued after its
success is recorded, as RQ does after a failure; one that repeats (none either) is left
to RQ's own ``handle_job_success``; one that returns a ``Retry`` (none either) keeps in
Redis the heartbeat of its start.
"""

from __future__ import annotations

import time

from rq import Queue
from rq.executions import Execution
from rq.job import JobStatus
from rq.rate_limit import release_slot
from rq.utils import now
from rq.worker import WorkerStatus


class FewerRoundTrips:
    """For an RQ ``SimpleWorker`` class (``execute_job`` calls ``prepare_execution``, then
    ``perform_job`` calls ``prepare_job_execution``, in the same process)."""

    idle_sent = False  # a job's success told Redis "idle" (the worker is "busy" until it waits)

    def set_state(self, state, pipeline=None):
        """RQ's, unless the worker is in that state already, or Redis is told it already."""
        sent, self.idle_sent = self.idle_sent, False
        if pipeline is None and (state == self.get_state() or sent and state == WorkerStatus.IDLE):
            self._state = state  # RQ's own record of it (get_state)
            return
        super().set_state(state, pipeline)

    def prepare_execution(self, job):
        """RQ's, its commands kept for ``prepare_job_execution`` to send with its own."""
        self._starting = self.connection.pipeline()
        ttl = self.get_heartbeat_ttl(job)
        execution = Execution.create(job, ttl, pipeline=self._starting, worker_name=self.name)
        self.executions[execution.id] = execution
        self.set_state(WorkerStatus.BUSY, pipeline=self._starting)
        return execution

    def prepare_job_execution(self, job, remove_from_intermediate_queue=False):
        """RQ's, in the transaction ``prepare_execution`` began."""
        with self._starting as pipeline:
            ttl = self.get_heartbeat_ttl(job)
            self.heartbeat(ttl, pipeline=pipeline)
            job.heartbeat(now(), ttl, pipeline=pipeline)
            job.prepare_for_execution(self.name, pipeline=pipeline)
            pipeline.persist(job.key)
            if remove_from_intermediate_queue:
                queue = Queue(job.origin, connection=self.connection)
                pipeline.lrem(queue.intermediate_queue_key, 1, job.id)
            pipeline.execute()
        self.procline(f"Processing {job.func_name} from {job.origin} since {time.time()}")

    def handle_execution_ended(self, job, queue, heartbeat_ttl):
        """RQ's, but the heartbeat of a job that did not fail is left to the job's save as
        its outcome is recorded (``handle_job_success``; ``handle_job_retry`` saves none)."""
        if job.get_status(refresh=False) == JobStatus.FAILED:
            super().handle_execution_ended(job, queue, heartbeat_ttl)
            return
        job.ended_at = job.last_heartbeat = now()

    def handle_job_success(self, job, queue, started_job_registry, execution):
        """RQ's, in one transaction (see the module's docstring)."""
        if job.repeats_left:
            super().handle_job_success(job, queue, started_job_registry, execution)
            return
        result_ttl = job.get_result_ttl(self.default_result_ttl)
        with self.connection.pipeline() as pipeline:
            pipeline.exists(job.dependents_key)
            self.increment_successful_job_count(pipeline=pipeline)
            self.increment_total_working_time(job.ended_at - job.started_at, pipeline)
            job._handle_success(result_ttl, pipeline=pipeline, worker_name=self.name,
                                execution_id=execution.id,
                                execution_started_at=execution.created_at,
                                execution_ended_at=job.ended_at)
            job.cleanup(result_ttl, pipeline=pipeline, remove_from_queue=False)
            self.cleanup_execution(job, pipeline=pipeline, execution=execution)
            pipeline.hset(self.key, "state", WorkerStatus.IDLE)  # as RQ's set_state writes it
            has_dependents = pipeline.execute()[0]
        self.idle_sent = True
        if has_dependents:
            queue.enqueue_dependents(job)
        release_slot(job)
        self.log.info("Successfully completed %s job in %ss on worker %s", job.description,
                      job.ended_at - job.started_at, self.name)
