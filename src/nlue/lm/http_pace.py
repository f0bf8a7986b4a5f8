"""Whether more requests in flight made a server any faster: measured during a run, said once, with the numbers.

Plain ``transformers serve`` (and many single-GPU set-ups) answer requests one after another. Sending
ten at once then gains nothing: each waits for those ahead of it, and with long answers the wait
passes the timeout, so requests are retried while the server still works on the abandoned ones. A
server that batches (vLLM, ``transformers serve --continuous-batching``) also answers each request
more slowly with ten in flight, yet answers many more per second: slower answers alone prove nothing.

So the run compares what it measured, answers per second, two ways. The first requests go alone: the
median of their times gives the rate alone (the median, as the very first also opens the connection).
Then the run fills up to ``--concurrency``, and the requests sent with the pool full give the rate in
flight by Little's law: with ``concurrency`` requests in flight throughout, answers come at
``concurrency`` over their mean time (read off every answer, so the bursts in which a batching server
answers do not sway it). Only when the rate in flight is no better than the rate alone does the run
say so, once, with both rates, and suggest ``--concurrency 1``; otherwise it says nothing, and the
results file keeps both rates.
"""

from __future__ import annotations

import logging
import statistics
import threading
from dataclasses import dataclass, field
from typing import Any

logger = logging.getLogger(__name__)

# In flight at most 1.25x the answers per second alone: more in flight gained next to nothing. Not 1.0: with
# several in flight the client's own time per request overlaps the server's, so even a server that answers
# one at a time goes a little faster; a server that batches goes several times faster.
AS_FAST = 1.25
MIN_CONCURRENCY = 3  # below this the two cases are too close to tell
LONE_REQUESTS = 3  # sent alone first: the median of their times is the time alone
WINDOW = 2  # answers sent with the pool full needed before a verdict, as a multiple of the concurrency


@dataclass
class PaceWatch:
    concurrency: int
    timeout: float
    lone_latency: float | None = None  # median seconds of the requests sent alone; NaN when none was answered
    lone_latencies: list[float] = field(default_factory=list)
    busy_latencies: list[float] = field(default_factory=list)  # of requests sent with the pool full
    warned: bool = False
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    @property
    def measuring_alone(self) -> bool:
        """Whether the next request should still go alone (the rate alone is not measured yet)."""
        return self.concurrency > 1 and self.lone_latency is None

    def record(self, latency: float, in_flight: int) -> None:
        """One answered request: its round-trip time and how many requests were in flight when it left."""
        with self._lock:
            if in_flight <= 1 and self.lone_latency is None:
                self.lone_latencies.append(latency)
                if len(self.lone_latencies) == LONE_REQUESTS:
                    self.lone_latency = statistics.median(self.lone_latencies)
                return
            if in_flight >= self.concurrency:
                self.busy_latencies.append(latency)
            self._check()

    def skip_lone(self) -> None:
        """A lone request failed: go on at full concurrency with what was measured alone, if anything."""
        with self._lock:
            if self.lone_latency is None:
                self.lone_latency = statistics.median(self.lone_latencies) if self.lone_latencies else float("nan")

    def _rates(self) -> tuple[float | None, float | None]:
        """(answers per second alone, with the pool full); None where not measured."""
        lone = self.lone_latency
        alone = 1 / lone if lone is not None and lone == lone and lone > 0 else None
        busy = statistics.mean(self.busy_latencies) if self.busy_latencies else 0.0
        return alone, self.concurrency / busy if busy > 0 else None

    def _check(self) -> None:
        alone, in_flight = self._rates()
        if self.warned or alone is None or in_flight is None or self.concurrency < MIN_CONCURRENCY:
            return
        if len(self.busy_latencies) < WINDOW * self.concurrency or in_flight > AS_FAST * alone:
            return
        self.warned = True
        logger.warning(
            "measured in this run: with %d requests in flight the server answered %.2f requests/s (each took %.2f s "
            "on average, over %d answers), %.2fx the %.2f/s of the %d sent alone (%.2f s each, the median). More "
            "in flight did not make it faster, only made each answer wait (and, past the %.0f s --timeout, be "
            "retried): it answers one request at a time, or gains nothing from batching on its hardware. By this "
            "measurement --concurrency 1 is about as fast; a server that batches on a GPU (vLLM, `transformers "
            "serve --continuous-batching`) would gain from more in flight",
            self.concurrency, in_flight, statistics.mean(self.busy_latencies), len(self.busy_latencies),
            in_flight / alone, alone, len(self.lone_latencies), self.lone_latency, self.timeout,
        )  # fmt: skip

    def summary(self) -> dict[str, Any]:
        with self._lock:
            alone, in_flight = self._rates()
            lone = self.lone_latency if self.lone_latency == self.lone_latency else None
            busy = statistics.median(self.busy_latencies) if self.busy_latencies else None
            return {
                "lone_latency_s": None if lone is None else round(lone, 4),
                "busy_median_latency_s": None if busy is None else round(busy, 4),
                "answers_per_s_alone": None if alone is None else round(alone, 4),
                "answers_per_s_in_flight": None if in_flight is None else round(in_flight, 4),
                "looks_serial": self.warned,
            }
