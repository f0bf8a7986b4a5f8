"""The answer journal: every answered request, one JSON line each, so a re-run asks nothing twice.

A line is ``{"key", "model", "answerer", "kind", "request", "params", "result"}``. The key is a
SHA-256 of what answers, the request kind, the request itself and the decoding parameters
(canonical JSON), so it is the same in every process and changes when any of them changes. What
answers is the identity of :func:`nlue.lm.fingerprint.answerer_identity`, not the model's name:
the backend, the folder, Hub id or served name, a fingerprint of the weights (a folder's sampled
content hash, a Hub snapshot's commit) and a server's endpoint without credentials. So answers
from one server never stand for another's (the same served name on another port is asked afresh),
a model retrained into the same folder is asked afresh, and so is a different token cap or stop
list. Journals only ever grow; lines written under an older :data:`KEY_VERSION` are simply never
matched again.

Why it survives ``kill -9``: lines are appended with one ``write`` per batch followed by
``flush`` and ``fsync``, so a killed run loses at most the answers it had not yet written. A
last line cut short by the kill has no newline; loading drops it (and truncates the file back
to the last complete line, so the next append starts clean) and its request is simply asked
again. Any other unreadable line is an error that names the file and line: the journal was
edited or written by something else. One run at a time may hold a journal (an exclusive
``flock``; the operating system releases it when the process dies, however it dies).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from nlue.errors import NlueError

logger = logging.getLogger(__name__)

# Bump when a key's meaning changes, so old answers are not reused. 2: keyed on the answerer's identity
# (fingerprint, endpoint), no longer on the model's name alone (issue 29, item 2).
KEY_VERSION = 2


def request_key(answerer: str | Mapping[str, Any], kind: str, request: dict[str, Any], params: dict[str, Any]) -> str:
    """A stable hash of what decides an answer: who answers, the request kind, the request, decoding parameters.

    ``answerer`` is an identity from :func:`nlue.lm.fingerprint.answerer_identity` (or a plain string, for a
    caller that names the answerer itself).
    """
    payload = {"v": KEY_VERSION, "answerer": answerer, "kind": kind, "request": request, "params": params}
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def answerer_of(answerer: Any) -> str | dict[str, Any]:
    """The identity a journal keys on: a string or mapping as it is, or a backend's :func:`answerer_identity`."""
    if isinstance(answerer, str):
        return answerer
    if isinstance(answerer, Mapping):
        return dict(answerer)
    from nlue.lm.fingerprint import answerer_identity

    return answerer_identity(answerer)


class Journal:
    """An append-only JSONL file of answered requests, held exclusively while open."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        created = not self.path.exists()
        self._file = self.path.open("a+b")
        try:
            self._lock()
            self._entries: dict[str, dict[str, Any]] = self._load()
        except BaseException:
            self._file.close()
            raise
        if created:
            _fsync_directory(self.path.parent)

    def _lock(self) -> None:
        try:
            import fcntl
        except ImportError:  # Windows: no advisory locks; one run at a time is then the user's to keep
            return
        try:
            fcntl.flock(self._file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            raise NlueError(
                f"the journal {self.path} is in use by another run; wait for it to finish or give this run another journal"
            ) from exc

    def _load(self) -> dict[str, dict[str, Any]]:
        self._file.seek(0)
        data = self._file.read()
        complete = data.rfind(b"\n") + 1
        if complete < len(data):
            logger.warning(
                "%s: dropped a partly written last line (%d bytes, from a run that was stopped); "
                "its request will be asked again",
                self.path,
                len(data) - complete,
            )
            self._file.truncate(complete)
            os.fsync(self._file.fileno())
        entries: dict[str, dict[str, Any]] = {}
        for number, line in enumerate(data[:complete].splitlines(), start=1):
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
                key = entry["key"]
                entry["result"]
            except (ValueError, KeyError, TypeError) as exc:
                raise NlueError(
                    f"{self.path}, line {number}: not a journal entry ({exc}); the journal was changed by "
                    "something else; move it away to start afresh, or delete that line"
                ) from exc
            entries.setdefault(key, entry)  # the first answer wins; a duplicate line changes nothing
        return entries

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: str) -> bool:
        return key in self._entries

    def result(self, key: str) -> dict[str, Any] | None:
        entry = self._entries.get(key)
        return None if entry is None else entry["result"]

    def append(self, entries: Iterable[dict[str, Any]]) -> None:
        """Write entries (each with ``key`` and ``result``) durably: one write, flush, fsync."""
        new = [e for e in entries if e["key"] not in self._entries]
        if not new:
            return
        lines = "".join(json.dumps(e, ensure_ascii=False, separators=(",", ":")) + "\n" for e in new)
        self._file.seek(0, os.SEEK_END)
        self._file.write(lines.encode("utf-8"))
        self._file.flush()
        os.fsync(self._file.fileno())
        for entry in new:
            self._entries[entry["key"]] = entry

    def close(self) -> None:
        if not self._file.closed:
            self._file.close()  # closing releases the lock

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def _fsync_directory(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:  # not possible everywhere (Windows); the file's own fsync still holds
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


class JournalledCall:
    """One ``loglikelihood``/``generate`` call seen through the journal.

    ``pending`` lists the positions still to ask, one per distinct request (a request that
    appears twice is asked once); :meth:`record` stores answers and journals them;
    :meth:`results` returns every answer in request order.
    """

    def __init__(
        self,
        journal: Journal | None,
        answerer: Any,
        kind: str,
        params: dict[str, Any],
        requests: Sequence[dict[str, Any]],
    ) -> None:
        """``answerer``: the backend itself (its identity is read from ``describe()``), or an identity."""
        self.journal = journal
        self.answerer = answerer_of(answerer)
        self.model = self.answerer if isinstance(self.answerer, str) else str(self.answerer.get("name"))
        self.kind, self.params = kind, params
        self.requests = requests
        self.keys = [request_key(self.answerer, kind, r, params) for r in requests]
        self._answers: dict[str, dict[str, Any]] = {}
        seen: set[str] = set()
        self.pending: list[int] = []
        for index, key in enumerate(self.keys):
            known = journal.result(key) if journal is not None else None
            if known is not None:
                self._answers[key] = known
            elif key not in seen:
                self.pending.append(index)
            seen.add(key)
        self.from_journal = len(requests) - len(self.pending)

    def record(self, answers: Iterable[tuple[int, dict[str, Any]]]) -> None:
        """Keep the answers (request position, result) and journal them durably."""
        entries = []
        for index, result in answers:
            key = self.keys[index]
            self._answers[key] = result
            entries.append(
                {
                    "key": key,
                    "model": self.model,
                    "answerer": self.answerer,
                    "kind": self.kind,
                    "request": self.requests[index],
                    "params": self.params,
                    "result": result,
                }
            )
        if self.journal is not None:
            self.journal.append(entries)

    @property
    def answered(self) -> int:
        """Distinct requests answered so far, from the journal or in this call."""
        return len(self._answers)

    def results(self, unjournalled: dict[int, dict[str, Any]] | None = None) -> list[dict[str, Any]]:
        """Every answer in request order; ``unjournalled`` fills positions answered only for this call (errors)."""
        extra = {self.keys[i]: result for i, result in (unjournalled or {}).items()}
        missing = [i for i, key in enumerate(self.keys) if key not in self._answers and key not in extra]
        if missing:
            raise RuntimeError(f"{len(missing)} requests have no answer (first: position {missing[0]})")
        return [self._answers.get(key) or extra[key] for key in self.keys]


def open_journal(journal: Journal | str | os.PathLike[str] | None) -> tuple[Journal | None, bool]:
    """(the journal, whether this call opened it and so must close it)."""
    if journal is None or isinstance(journal, Journal):
        return journal, False
    return Journal(journal), True
