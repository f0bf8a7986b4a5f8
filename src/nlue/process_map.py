"""One function over a stream of items on several processes, in order: what ``--num-proc`` runs.

Corpus work (``nlue idioms mine``, the checks of ``nlue translate``) is a function of one item at a
time, so it can run on every core: :func:`map_in_order` cuts the items into chunks, sends each chunk to
a worker process and yields the results in the items' order, so that what a command writes from them
is byte for byte what one process writes. It keeps at most two chunks per worker in flight, so memory
is bounded by the chunk size, not by the corpus; the items are read lazily as the workers need them.

* With one process nothing is started: the same chunk function runs in this process.
* An exception raised on an item, in a worker or here, stops the work and names the item (its file and
  row, as ``where`` says): an :class:`~nlue.errors.NlueError` stays one (the user's input, exit 2),
  anything else becomes an :class:`ItemError` (an internal error, exit 3) with the original type, message
  and traceback. Items before the failing one are yielded first, and an exception raised while reading
  the items is raised only after the items read before it were processed: the first failure in the
  items' order is the one reported, however many processes run.
* Workers are forks of a ``forkserver`` that imported the function's module once (``spawn`` where there is
  no forkserver): nothing is copied from this process, whatever threads it runs. They ignore SIGINT:
  Ctrl-C reaches this process, which cancels the chunks not started, waits for the running ones (one
  chunk each: a fraction of a second) and stops the workers.
"""

from __future__ import annotations

import argparse
import collections
import multiprocessing
import os
import signal
import traceback
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any, TypeVar

from nlue.errors import NlueError

Item = TypeVar("Item")
Result = TypeVar("Result")
Context = TypeVar("Context")

DEFAULT_CHUNK_ITEMS = 4096
DEFAULT_CHUNK_CHARS = 1 << 22  # a chunk of long documents closes at about 4 million characters
IN_FLIGHT_PER_WORKER = 2
NUM_PROC_HELP = (
    "processes for the per-row work (default 1; 0 or auto: every core this process may use); the output is "
    "the same byte for byte"
)


def usable_cores() -> int:
    """The cores this process may run on (a container's or ``taskset``'s CPU set, not the machine's)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


def num_proc_arg(text: str) -> int:
    """``--num-proc``'s value as a number of processes: ``0`` and ``auto`` mean :func:`usable_cores`."""
    if text.strip().lower() == "auto":
        return usable_cores()
    try:
        number = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of processes or auto, got {text!r}") from None
    if number < 0:
        raise argparse.ArgumentTypeError(f"expected a number of processes (0 or auto: all cores), got {number}")
    return number or usable_cores()


class RemoteTraceback(Exception):
    """The traceback of an exception raised on an item, as text (what a worker process can send back)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class ItemError(RuntimeError):
    """An unexpected exception raised on one item: a fault in nlue or a library, not the user's input."""


@dataclass(frozen=True)
class ItemFailure:
    """What went wrong on the item at ``index`` of a chunk, in a form that crosses processes."""

    index: int
    kind: str
    message: str
    traceback: str
    input_error: bool


@dataclass(frozen=True)
class _ChunkResult:
    results: list[Any]  # one per item before the failure, if any
    failure: ItemFailure | None


_worker_context: Any = None


def _start_worker(context: Any) -> None:
    global _worker_context
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle (module docstring)
    _worker_context = context


def failure_of(exc: Exception, index: int) -> ItemFailure:
    """``exc``, raised on the item at ``index``, in a form that crosses processes (:func:`raise_failure` raises it
    again where the item can be named): for a function that works on blocks of items itself."""
    kind = type(exc).__qualname__ if type(exc).__module__ == "builtins" else (
        f"{type(exc).__module__}.{type(exc).__qualname__}"
    )  # fmt: skip
    return ItemFailure(index, kind, str(exc), "".join(traceback.format_exception(exc)), isinstance(exc, NlueError))


def _run_chunk(function: Callable[[Any, Any], Any], context: Any, chunk: Sequence[Any]) -> _ChunkResult:
    results = []
    for index, item in enumerate(chunk):
        try:
            results.append(function(context, item))
        except Exception as exc:
            return _ChunkResult(results, failure_of(exc, index))
    return _ChunkResult(results, None)


def _run_chunk_in_worker(function: Callable[[Any, Any], Any], chunk: Sequence[Any]) -> _ChunkResult:
    return _run_chunk(function, _worker_context, chunk)


def chunks(items: Iterable[Item], size: Callable[[Item], int], max_items: int, max_size: int) -> Iterator[list[Item]]:
    """``items`` in lists of at most ``max_items``, closed early once their ``size`` reaches ``max_size``."""
    chunk: list[Item] = []
    total = 0
    try:
        for item in items:
            chunk.append(item)
            total += size(item)
            if len(chunk) >= max_items or total >= max_size:
                yield chunk
                chunk, total = [], 0
    except Exception:
        if chunk:  # the items read before a reading error are worked on first (module docstring)
            yield chunk
        raise
    if chunk:
        yield chunk


def map_in_order(
    function: Callable[[Context, Item], Result],
    context: Context,
    items: Iterable[Item],
    *,
    num_proc: int = 1,
    where: Callable[[Item], str] = repr,
    size: Callable[[Item], int] = lambda item: 1,
    chunk_items: int | None = None,
    chunk_size: int | None = None,
) -> Iterator[Result]:
    """``function(context, item)`` for every item, in order, over ``num_proc`` processes (module docstring).

    ``function`` must be a module-level function and ``context`` picklable (both go to the workers);
    ``where`` names an item in an error message (``"corpus.txt:12"``); a chunk closes at ``chunk_items`` items
    or once their ``size`` (characters of text, say) reaches ``chunk_size`` (defaults: :data:`DEFAULT_CHUNK_ITEMS`,
    :data:`DEFAULT_CHUNK_CHARS`). Where the chunks fall changes nothing in the results.
    """
    if num_proc < 1:
        raise ValueError(f"num_proc must be at least 1, got {num_proc}")
    pieces = chunks(items, size, chunk_items or DEFAULT_CHUNK_ITEMS, chunk_size or DEFAULT_CHUNK_CHARS)
    if num_proc == 1:
        for piece in pieces:
            done = _run_chunk(function, context, piece)
            yield from done.results
            if done.failure is not None:
                raise_failure(done.failure, where(piece[done.failure.index]))
        return
    yield from _map_on_workers(function, context, pieces, num_proc, where)


def _map_on_workers(
    function: Callable[[Any, Any], Any], context: Any, pieces: Iterator[list[Any]], num_proc: int,
    where: Callable[[Any], str],
) -> Iterator[Any]:  # fmt: skip
    pool = ProcessPoolExecutor(
        num_proc, mp_context=_start_method(function), initializer=_start_worker, initargs=(context,)
    )
    pending: collections.deque[tuple[list[Any], Future]] = collections.deque()
    read_all, reading_error = False, None
    try:
        while True:
            while not read_all and len(pending) < IN_FLIGHT_PER_WORKER * num_proc:
                try:
                    piece = next(pieces)
                except StopIteration:
                    read_all = True
                except Exception as exc:  # raised once the items read before it are done (module docstring)
                    read_all, reading_error = True, exc
                else:
                    pending.append((piece, pool.submit(_run_chunk_in_worker, function, piece)))
            if not pending:
                break
            piece, future = pending.popleft()
            last = pending[-1][0] if pending else piece
            done = _result(future, where(piece[0]), where(last[-1]))
            yield from done.results
            if done.failure is not None:
                raise_failure(done.failure, where(piece[done.failure.index]))
        if reading_error is not None:
            raise reading_error
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _start_method(function: Callable[..., Any]) -> multiprocessing.context.BaseContext:
    """``forkserver`` where there is one, with the function's module imported once in the server (a worker is
    then a fork of it, ready at once, not a fresh interpreter importing nlue for a second or so); else spawn."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload([function.__module__])  # only read when the server starts: the first pool
    return context


def _result(future: Future, first: str, last: str) -> _ChunkResult:
    """A chunk's result; ``first`` and ``last`` name the items of the chunks in flight, the worker's among them."""
    try:
        return future.result()
    except BrokenProcessPool:
        raise ItemError(
            f"a worker process ended abruptly (killed, or out of memory?) while the items from {first} to {last} "
            "were being worked on; run again, with fewer processes if memory is short"
        ) from None
    except Exception as exc:  # a result that could not cross back, say: still named by its items
        raise ItemError(f"{first} to {last}: {type(exc).__name__}: {exc}") from exc


def raise_failure(failure: ItemFailure, place: str) -> None:
    """The exception of ``failure`` (:func:`failure_of`), named by ``place``: an NlueError stays one."""
    if failure.input_error:
        raise NlueError(f"{place}: {failure.message}") from RemoteTraceback(failure.traceback)
    raise ItemError(f"{place}: {failure.kind}: {failure.message}") from RemoteTraceback(failure.traceback)
