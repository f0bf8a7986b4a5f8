"""``--timeout`` as a deadline: each try of a request has that long for its whole answer, however it trickles.

The HTTP library under the openai client (httpx) bounds each network operation on its own: a read
waits at most ``timeout`` seconds for the *next* bytes. A server that sends a byte every two seconds
never trips that, and one request runs for minutes. Here one try of a request is given a deadline
(:func:`deadline`, around the try), and every network operation of that try - connect, TLS
handshake, write, read - may wait only until it. Once it has passed, the next operation raises the
HTTP library's own timeout error, which the openai client reports as ``APITimeoutError`` and
:mod:`nlue.lm.http_retry` retries as a ``timeout``; the connection is dropped, so the server stops
sending.

How: :func:`http_client` is the openai client's default HTTP client with the network backend of each
of its connection pools wrapped (httpcore takes a backend per pool, and httpx builds the pools without
a public hook on it). Should a future httpx lay its pools out differently, the client says so once and
``--timeout`` bounds each read, as before.
"""

from __future__ import annotations

import contextlib
import logging
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

logger = logging.getLogger(__name__)

_tries = threading.local()  # the deadline of the try this thread is making (each request runs in one thread)


@contextlib.contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Every network operation of this thread inside the block ends by ``seconds`` from now."""
    outer = getattr(_tries, "at", None)
    _tries.at = time.monotonic() + seconds
    try:
        yield
    finally:
        _tries.at = outer


def _bounded(timeout: float | None, error: type[Exception]) -> float | None:
    """The operation's own ``timeout`` cut to what is left of this thread's deadline; ``error`` once none is."""
    at = getattr(_tries, "at", None)
    if at is None:
        return timeout
    left = at - time.monotonic()
    if left <= 0:
        raise error("no complete answer before the request's deadline (--timeout)")
    return left if timeout is None else min(timeout, left)


class _DeadlineStream:
    """A connection whose reads and writes end by the deadline of the try that uses it."""

    def __init__(self, stream: Any, errors: Any) -> None:
        self._stream, self._errors = stream, errors

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._stream.read(max_bytes, _bounded(timeout, self._errors.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._stream.write(buffer, _bounded(timeout, self._errors.WriteTimeout))

    def close(self) -> None:
        self._stream.close()

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None, timeout: float | None = None) -> Any:
        secured = self._stream.start_tls(ssl_context, server_hostname, _bounded(timeout, self._errors.ConnectTimeout))
        return _DeadlineStream(secured, self._errors)

    def get_extra_info(self, info: str) -> Any:
        return self._stream.get_extra_info(info)


class _DeadlineBackend:
    """A pool's network backend whose connections end every operation by the current try's deadline."""

    def __init__(self, backend: Any, errors: Any) -> None:
        self._backend, self._errors = backend, errors

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options: Any = None) -> _DeadlineStream:  # fmt: skip
        bounded = _bounded(timeout, self._errors.ConnectTimeout)
        stream = self._backend.connect_tcp(host, port, bounded, local_address, socket_options)
        return _DeadlineStream(stream, self._errors)

    def connect_unix_socket(self, path: str, timeout: float | None = None, socket_options: Any = None) -> Any:
        bounded = _bounded(timeout, self._errors.ConnectTimeout)
        return _DeadlineStream(self._backend.connect_unix_socket(path, bounded, socket_options), self._errors)

    def sleep(self, seconds: float) -> None:
        self._backend.sleep(seconds)


def _wrap_pool(transport: Any) -> bool:
    """Give ``transport``'s connection pool a deadline-keeping backend; False when its layout is unknown."""
    pool = getattr(transport, "_pool", None)
    backend = getattr(pool, "_network_backend", None)
    if backend is None:
        return False
    if not isinstance(backend, _DeadlineBackend):
        errors = sys.modules[type(pool).__module__.partition(".")[0]]  # httpcore, or the httpcore2 of httpx2
        pool._network_backend = _DeadlineBackend(backend, errors)
    return True


def http_client(timeout: float) -> Any:
    """The openai client's default HTTP client, with :func:`deadline` kept by every connection it opens."""
    import openai

    client = openai.DefaultHttpxClient(timeout=timeout)
    # httpx keeps its default transport and the proxies' (HTTP(S)_PROXY) without a public accessor
    transports = [getattr(client, "_transport", None), *getattr(client, "_mounts", {}).values()]
    if not all(_wrap_pool(t) for t in transports if t is not None):
        logger.warning(
            "this httpx lays out its connection pools differently: --timeout bounds each read of an answer, not "
            "the whole answer"
        )
    return client
