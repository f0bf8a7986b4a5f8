"""Requests seen through the answer cache: the key of each request, and what is still to ask.

:func:`request_key` is a SHA-256 of what answers, the request kind, the request itself and the
decoding parameters (canonical JSON), so it is the same in every process and changes when any of
them changes. What answers is the identity of :func:`nlue.lm.fingerprint.answerer_identity`, not
the model's name: the backend, the folder, Hub id or served name, a fingerprint of the weights (a
folder's sampled content hash, a Hub snapshot's commit) and a server's endpoint without
credentials. So answers from one server never stand for another's (the same served name on another
port is asked afresh), a model retrained into the same folder is asked afresh, and so is a different
token cap or stop list. Answers stored under an older :data:`KEY_VERSION` are simply never matched.

:class:`JournalledCall` looks a call's requests up in the store (:class:`nlue.lm.answer_cache.AnswerCache`,
shared by every run; the name is the one it had when the store was a journal per model), lists those
still to ask and stores each answer as it arrives, so a killed run asks only what is missing.
:func:`read_journal` reads the JSON-lines journals of older nlue versions, for ``nlue cache import``.
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
from nlue.lm.answer_cache import AnswerCache

# The store's name from when it was a journal file per model; code written against it goes on importing it.
Journal = AnswerCache

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


class JournalledCall:
    """One ``loglikelihood``/``generate`` call seen through the answer cache.

    ``pending`` lists the positions still to ask, one per distinct request (a request that
    appears twice is asked once); :meth:`record` keeps answers and stores them;
    :meth:`results` returns every answer in request order. ``journal`` is the store (an
    :class:`~nlue.lm.answer_cache.AnswerCache`, a :class:`~nlue.lm.answer_cache.NoAnswerCache`,
    or None: nothing looked up, nothing kept, nothing counted).
    """

    def __init__(
        self,
        journal: Any,
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
        known = journal.lookup(self.keys) if journal is not None else {}
        self._answers: dict[str, dict[str, Any]] = dict(known)
        seen: set[str] = set()
        self.pending: list[int] = []
        for index, key in enumerate(self.keys):
            if key not in known and key not in seen:
                self.pending.append(index)
            seen.add(key)
        self.from_journal = len(requests) - len(self.pending)
        self.from_cache = sum(1 for key in self.keys if key in known)  # positions the store answered
        self.asked = 0  # answers received from the model in this call
        self._count(from_cache=self.from_cache)

    def _count(self, *, asked: int = 0, from_cache: int = 0) -> None:
        counts = getattr(self.journal, "counts", None)
        if counts is not None:
            counts.asked += asked
            counts.from_cache += from_cache

    def record(self, answers: Iterable[tuple[int, dict[str, Any]]]) -> None:
        """Keep the answers (request position, result) and store them durably.

        Where another run stored an answer to the same request first, that answer is kept instead
        (the first answer wins), so every run reads the same answers.
        """
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
        self.asked += len(entries)
        self._count(asked=len(entries))
        if self.journal is not None and entries:
            self._answers.update(self.journal.append(entries) or {})

    @property
    def answered(self) -> int:
        """Distinct requests answered so far, from the cache or in this call."""
        return len(self._answers)

    def kept(self) -> str:
        """What a failed call leaves behind, for its error message."""
        total = len(set(self.keys))
        if self.journal is None or not getattr(self.journal, "keeps", True):
            return (
                f"{self.answered} of {total} distinct requests were answered, but no answer cache was given "
                "(or --no-cache), so they are not kept; run with the cache to make runs resumable"
            )
        return (
            f"{self.answered} of {total} distinct requests are answered and kept in the answer cache "
            f"{self.journal.path} ({self.from_journal} from earlier runs); run the same command again to ask only "
            f"the {total - self.answered} others"
        )

    def results(self, unjournalled: dict[int, dict[str, Any]] | None = None) -> list[dict[str, Any]]:
        """Every answer in request order; ``unjournalled`` fills positions answered only for this call (errors)."""
        extra = {self.keys[i]: result for i, result in (unjournalled or {}).items()}
        missing = [i for i, key in enumerate(self.keys) if key not in self._answers and key not in extra]
        if missing:
            raise RuntimeError(f"{len(missing)} requests have no answer (first: position {missing[0]})")
        return [self._answers.get(key) or extra[key] for key in self.keys]


def open_journal(journal: Any) -> tuple[Any, bool]:
    """(the store, whether this call opened it and so must close it): a path is opened as an answer cache."""
    if journal is None or not isinstance(journal, str | os.PathLike):
        return journal, False
    return AnswerCache(journal), True


MAX_JOURNAL_LINE = 32 * 1024 * 1024  # one line of an older journal; a longer one was not written by nlue


def read_journal(path: str | os.PathLike[str]) -> Iterable[tuple[int, dict[str, Any]]]:
    """(line number, entry) for each complete line of an older nlue's JSON-lines journal.

    A last line cut short by a kill is skipped (logged); any other unreadable line is an error naming
    the file and line.
    """
    path = Path(path)
    with path.open("rb") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.endswith(b"\n"):
                logger.warning("%s, line %d: a partly written last line (%d bytes) skipped", path, number, len(line))
                return
            if not line.strip():
                continue
            try:
                if len(line) > MAX_JOURNAL_LINE:
                    raise ValueError(f"{len(line)} bytes, more than {MAX_JOURNAL_LINE}")
                entry = json.loads(line)
                if not isinstance(entry, dict) or not isinstance(entry["key"], str) or "result" not in entry:
                    raise ValueError("not an object with a key and a result")
            except (ValueError, KeyError, TypeError) as exc:
                raise NlueError(f"{path}, line {number}: not a journal entry ({exc})") from exc
            yield number, entry
