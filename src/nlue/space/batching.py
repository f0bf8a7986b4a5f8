"""Micro-batching: requests that arrive while a model is busy run together in its next forward pass.

Gradio runs each "Try a model" request in its own worker thread. One at a time, every
request pays for a whole forward pass; on a CPU a batch of 8 short sentences costs little
more than one, so a burst of visitors is served several times faster when their inputs
share a pass. Gradio's own ``batch=True`` would do the grouping, but a batch function
answers for the whole batch: one visitor's bad input, or a ``gr.Warning`` raised for it,
would reach every visitor in that batch. Here the grouping happens behind the handler
instead, so each request keeps its own checks, result and error.

Each batcher has one worker thread. A request queues its item and waits; the worker takes
up to ``max_batch_size`` waiting items (oldest first), runs them as one batch and hands
each item its result. A lone request runs at once, alone; batches grow when requests pile
up behind a busy model, which is when batching pays, and only then does the worker wait a
little (a quarter of the last batch's time, at most 100 ms) for a batch to fill.

Why one thread rather than whichever request thread happens to be free: torch and its
BLAS keep per-thread buffers, and glibc gives each thread that allocates its own heap
arena. Run from Gradio's pool of up to 40 threads, forward passes grew the Space's memory
by about 400 MiB over a one-minute 64-visitor soak; from one thread it stayed within
about 60 MiB (``benchmarks/space_latency.py``). The worker exits after ``idle_seconds``
without work and is started again by the next request.

A batch that raises is run again one item at a time, so that the error lands on the
item that caused it and the others still get their answers.

Two ways in: :meth:`MicroBatcher.submit` blocks the calling thread until its answer is
in (Gradio's queued handlers run in worker threads), and :meth:`MicroBatcher.submit_async`
awaits it on the event loop, holding no thread while it waits (the Space's one-request
API route, which is not queued: a thread per waiting request would let a burst of API
calls take every worker thread from the page). Both are refused with :class:`BatcherBusy`
when ``max_waiting`` items already wait, so that a route the Gradio queue does not bound
is bounded here.

:func:`let_idle_cores_sleep` goes with it: between two batches, OpenMP's threads would
otherwise spin, taking from the web server the core it needs to answer the batch just run.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from nlue.errors import NlueError

logger = logging.getLogger(__name__)

OPENMP_WAIT_POLICY = "OMP_WAIT_POLICY"
# Under load the next batch may wait this share of the last batch's duration to fill, up to a limit: long
# enough for gradio_client visitors (about 50 ms from one answer to their next request, measured here).
GATHER_SHARE = 0.25
MAX_GATHER_SECONDS = 0.1

Item = TypeVar("Item")
Result = TypeVar("Result")


class BatcherBusy(NlueError):
    """Too many requests already wait for this model; the caller may try again shortly."""


class _Pending(Generic[Item, Result]):
    """One request's item and, once its batch has run, its result or its error."""

    __slots__ = ("batch_size", "done", "error", "item", "result", "wake")

    def __init__(self, item: Item, wake: Callable[[], None] | None = None) -> None:
        self.item = item
        self.done = threading.Event()
        self.wake = wake  # called from the worker thread once the answer is in (the async way in)
        self.result: Result | None = None
        self.error: BaseException | None = None
        self.batch_size = 0

    def answer(self) -> Batched[Result]:
        if self.error is not None:
            raise self.error
        return Batched(self.result, self.batch_size)  # type: ignore[arg-type]

    def finish(self) -> None:
        self.done.set()
        if self.wake is not None:
            try:
                self.wake()
            except RuntimeError:  # the waiter's event loop has closed: nobody is left to tell
                logger.debug("an answer arrived after its event loop closed")


@dataclass
class BatchStats:
    """What a batcher has done so far (for logs, tests and the benchmark)."""

    batches: int = 0
    items: int = 0
    largest: int = 0
    retried_alone: int = 0  # batches that failed and were run again item by item

    @property
    def mean_size(self) -> float:
        return self.items / self.batches if self.batches else 0.0


@dataclass(frozen=True)
class Batched(Generic[Result]):
    """A request's result and the size of the batch it ran in."""

    value: Result
    batch_size: int


class MicroBatcher(Generic[Item, Result]):
    """``submit(item)`` returns ``run_batch([..., item, ...])``'s entry for ``item``, batched with whoever waits.

    ``run_batch`` takes a list of items and returns one result per item, in the same order;
    it always runs on the batcher's own worker thread, one batch at a time.
    """

    def __init__(
        self,
        run_batch: Callable[[list[Item]], Sequence[Result]],
        max_batch_size: int = 8,
        name: str = "batcher",
        idle_seconds: float = 60.0,
        max_waiting: int | None = None,
    ) -> None:
        if max_batch_size < 1:
            raise NlueError(f"{name}: max_batch_size must be at least 1, got {max_batch_size}")
        if max_waiting is not None and max_waiting < 1:
            raise NlueError(f"{name}: max_waiting must be at least 1, got {max_waiting}")
        self._run_batch = run_batch
        self.max_batch_size = max_batch_size
        self.max_waiting = max_waiting
        self.name = name
        self.idle_seconds = idle_seconds
        self._queue: deque[_Pending[Item, Result]] = deque()
        self._changed = threading.Condition()
        self._worker: threading.Thread | None = None
        self._in_flight = 0
        self._window = 0.0  # how long the next batch may wait to fill, in seconds
        self.stats = BatchStats()

    @property
    def waiting(self) -> int:
        """Items queued and not yet taken into a batch."""
        with self._changed:
            return len(self._queue)

    @property
    def busy(self) -> bool:
        """Whether a batch is running now."""
        with self._changed:
            return self._in_flight > 0

    def submit(self, item: Item) -> Batched[Result]:
        """Run ``item`` (batched with any items waiting beside it); its result, or its error raised here."""
        pending: _Pending[Item, Result] = _Pending(item)
        self._enqueue(pending)
        pending.done.wait()
        return pending.answer()

    async def submit_async(self, item: Item) -> Batched[Result]:
        """:meth:`submit` for a coroutine: the event loop goes on serving while the batch runs."""
        loop = asyncio.get_running_loop()
        arrived = loop.create_future()

        def wake() -> None:  # on the worker thread
            loop.call_soon_threadsafe(lambda: arrived.done() or arrived.set_result(None))

        pending: _Pending[Item, Result] = _Pending(item, wake)
        self._enqueue(pending)
        # A cancelled caller (a client that hung up) stops waiting; its item still runs with its batch.
        await arrived
        return pending.answer()

    def _enqueue(self, pending: _Pending[Item, Result]) -> None:
        with self._changed:
            if self.max_waiting is not None and len(self._queue) >= self.max_waiting:
                raise BatcherBusy(
                    f"{self.name} is busy: {len(self._queue)} requests are waiting already; try again in a moment"
                )
            self._queue.append(pending)
            if self._worker is None:
                self._worker = threading.Thread(target=self._work, name=f"nlue-batcher {self.name}", daemon=True)
                self._worker.start()
            self._changed.notify()

    def _work(self) -> None:
        while True:
            with self._changed:
                while not self._queue:
                    if not self._changed.wait(timeout=self.idle_seconds) and not self._queue:
                        self._worker = None  # idle: the next submit starts a new worker
                        return
                batch = self._gather()
                self._in_flight = len(batch)
            started = time.perf_counter()
            try:
                self._run(batch)
            except BaseException as exc:  # the worker must outlive it: requests behind this batch still wait
                logger.exception("%s: a batch of %d failed outside the batch function", self.name, len(batch))
                for pending in batch:
                    if not pending.batch_size:  # not answered yet
                        pending.error = exc
            finally:
                with self._changed:
                    self._in_flight = 0
                    # Under concurrent load, wait a little for the next batch to fill (see _gather).
                    busy = len(batch) > 1
                    self._window = (
                        min(MAX_GATHER_SECONDS, GATHER_SHARE * (time.perf_counter() - started)) if busy else 0
                    )
                for pending in batch:
                    pending.finish()

    def _gather(self) -> list[_Pending[Item, Result]]:
        """The next batch: the waiting items, oldest first, and those that arrive within the gathering window.

        Visitors whose answers just came back send their next request a few milliseconds later;
        taking only what is queued at that instant would leave the following batches half empty.
        So when the last batch ran several items (a sign of concurrent load), the worker waits up
        to ``GATHER_SHARE`` of that batch's duration (at most ``MAX_GATHER_SECONDS``) for the batch
        to fill. With 8 gradio_client visitors of a base-size model, batches went from 4.9 items
        to 7.8 on average, and requests/s up by a quarter.
        A lone visitor never waits: after a batch of one the window is zero. Called with the lock held.
        """
        batch = [self._queue.popleft() for _ in range(min(self.max_batch_size, len(self._queue)))]
        deadline = time.perf_counter() + self._window
        while len(batch) < self.max_batch_size and (remaining := deadline - time.perf_counter()) > 0:
            if not self._queue:
                self._changed.wait(timeout=remaining)
            batch += [self._queue.popleft() for _ in range(min(self.max_batch_size - len(batch), len(self._queue)))]
        return batch

    def _run(self, batch: list[_Pending[Item, Result]]) -> None:
        started = time.perf_counter()
        try:
            results = self._checked(batch)
        except Exception as exc:
            if len(batch) == 1:
                batch[0].error = exc
            else:
                # One item may have caused the failure: run each alone so the error reaches only its own request.
                logger.info("%s: a batch of %d failed (%s); running its items one by one", self.name, len(batch), exc)
                self.stats.retried_alone += 1
                for pending in batch:
                    self._run([pending])
                return
        else:
            for pending, result in zip(batch, results, strict=True):
                pending.result = result
        for pending in batch:
            pending.batch_size = len(batch)
        self.stats.batches += 1
        self.stats.items += len(batch)
        self.stats.largest = max(self.stats.largest, len(batch))
        logger.debug("%s: batch of %d in %.1f ms", self.name, len(batch), 1000 * (time.perf_counter() - started))

    def _checked(self, batch: list[_Pending[Item, Result]]) -> Sequence[Result]:
        results = self._run_batch([pending.item for pending in batch])
        if len(results) != len(batch):
            raise NlueError(f"{self.name}: the batch function returned {len(results)} results for {len(batch)} items")
        return results


def let_idle_cores_sleep() -> bool:
    """Ask OpenMP (torch's CPU thread pool) to put its threads to sleep as soon as a parallel region ends.

    By default they spin for a while, waiting for the next region. In the Space the next region
    is often a batch away, and the spinning takes the core that the web server needs to answer
    the batch just run: with 8 visitors on 2 cores it cost 3-5x the CPU per request and most of
    the throughput (``benchmarks/space_latency.py``). OpenMP reads the setting once, when torch
    loads, so it is set only while torch is not loaded yet (otherwise it would reach nothing but
    child processes); a value already in the environment is left as it is. Returns whether
    the setting will apply in this process.
    """
    if "torch" in sys.modules:
        logger.debug("torch is already loaded: %s is left as it is", OPENMP_WAIT_POLICY)
        return False
    os.environ.setdefault(OPENMP_WAIT_POLICY, "PASSIVE")
    return True
