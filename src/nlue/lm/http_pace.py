"""Whether a server answers one request at a time: measured during a run, said once, with what to do.

Plain ``transformers serve`` (and many single-GPU set-ups) answer requests one after another. Sending
ten at once then gains nothing: each waits for those ahead of it, and with long answers the wait
passes the timeout, so requests are retried while the server still works on the abandoned ones.

How it is told: the first request of a run goes alone, which gives one answer's time on an idle
server; the run then fills up to ``--concurrency``. When the answers that left with the pool full
take, at the median, most of ``concurrency`` times as long as that lone one, the server is
answering one at a time, and the run says so once and suggests ``--concurrency 1`` (or a server
that batches). Little's law makes the rate of answers alone unable to tell the two apart; the lone
request is the reference that can.
"""

from __future__ import annotations

import logging
import statistics
import threading
from dataclasses import dataclass, field
from typing import Any

logger = logging.getLogger(__name__)

SERIAL_SHARE = 0.6  # median busy latency >= 0.6 x concurrency x the lone latency: one at a time
MIN_CONCURRENCY = 3  # below this the two cases are too close to tell
LONE_REQUESTS = 2  # sent alone first; the faster gives the reference


@dataclass
class PaceWatch:
    concurrency: int
    timeout: float
    lone_latency: float | None = None
    lone_latencies: list[float] = field(default_factory=list)
    busy_latencies: list[float] = field(default_factory=list)
    warned: bool = False
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    @property
    def measuring_alone(self) -> bool:
        """Whether the next request should still go alone (the lone reference is not measured yet)."""
        return self.concurrency > 1 and self.lone_latency is None

    def record(self, latency: float, in_flight: int) -> None:
        """One answered request: its round-trip time and how many requests were in flight when it left."""
        with self._lock:
            if in_flight <= 1 and self.lone_latency is None:
                self.lone_latencies.append(latency)
                if len(self.lone_latencies) == LONE_REQUESTS:
                    self.lone_latency = min(self.lone_latencies)
                return
            if in_flight >= self.concurrency:
                self.busy_latencies.append(latency)
            self._check()

    def skip_lone(self) -> None:
        """The lone request failed: go on at full concurrency without the reference."""
        with self._lock:
            if self.lone_latency is None:
                self.lone_latency = min(self.lone_latencies, default=float("nan"))

    def _check(self) -> None:
        lone = self.lone_latency
        if self.warned or lone is None or lone != lone or lone <= 0 or self.concurrency < MIN_CONCURRENCY:
            return
        if len(self.busy_latencies) < self.concurrency:
            return
        busy = statistics.median(self.busy_latencies[-2 * self.concurrency :])
        if busy >= SERIAL_SHARE * self.concurrency * lone:
            self.warned = True
            logger.warning(
                "answers take %.1fx longer with %d requests in flight than one alone (median %.2f s vs %.2f s): "
                "the server seems to answer one request at a time, so more in flight only makes each wait "
                "(and, past the %.0f s timeout, be retried). Run with --concurrency 1 for the same speed, or start "
                "a server that batches (`transformers serve --continuous-batching`, vLLM)",
                busy / lone, self.concurrency, busy, lone, self.timeout,
            )  # fmt: skip

    def summary(self) -> dict[str, Any]:
        with self._lock:
            lone = self.lone_latency if self.lone_latency == self.lone_latency else None
            busy = statistics.median(self.busy_latencies) if self.busy_latencies else None
            return {
                "lone_latency_s": None if lone is None else round(lone, 4),
                "busy_median_latency_s": None if busy is None else round(busy, 4),
                "looks_serial": self.warned,
            }
