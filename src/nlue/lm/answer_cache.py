"""The answer cache: every answered request of every model, in one SQLite file, so nothing is asked twice.

One row per answer, keyed by :func:`nlue.lm.journal.request_key` (a hash of what answers, the request
kind, the request and its decoding parameters), with the answerer's identity, the model's name, the
kind, the request, the parameters and the result as JSON, and when it was first stored and last
used (what ``nlue cache report`` and ``nlue cache prune`` read). By default the cache is shared by
every run of the user: ``<cache dir>/answers.sqlite``, the cache dir being ``--cache-dir``, else
``$NLUE_ANSWER_CACHE``, else ``$NLUE_CACHE``, else ``$XDG_CACHE_HOME/nlue``, else ``~/.cache/nlue`` (:func:`default_cache_dir`).

Why SQLite: several processes (a sweep's shards, two commands at once) write the same cache safely
(one writer at a time, each waiting up to ``busy_timeout`` for the other; readers never wait, in WAL
mode), a committed batch survives ``kill -9`` and a power cut (``synchronous=FULL``), a lookup reads
only the rows it asks for, and the file is one that every language and the ``sqlite3`` shell read.
``INSERT OR IGNORE``: the first answer stored for a key wins, and a process that got another answer
for it (two runs asked at once) takes the stored one, so every run sees the same answers. SQLite's
locks need a file system that keeps them: on NFS and other shared file systems give each node a local
``--cache-dir`` (or each job its own ``--journal``).

A row is read back only as the JSON this module wrote; a row that does not parse, or is larger than
:data:`MAX_FIELD_BYTES`, is an error naming the file and the key (something else changed the file).
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from nlue.cache_root import nlue_cache_root
from nlue.errors import NlueError, ServiceError

logger = logging.getLogger(__name__)

CACHE_FILE = "answers.sqlite"
SCHEMA_VERSION = 1  # PRAGMA user_version; a file from a newer nlue is refused, not rewritten
APPLICATION_ID = 0x6E6C7565  # "nlue": PRAGMA application_id, which tells our file from another SQLite file
MAX_FIELD_BYTES = 32 * 1024 * 1024  # one stored request or result; a larger one was not written by nlue
BUSY_TIMEOUT_S = 30.0  # how long one write waits for another process's write before it is retried
BUSY_RETRIES = 5  # retries of a write that found the cache locked for a whole busy timeout
LOOKUP_CHUNK = 500  # keys per SELECT (SQLite's limit on parameters is 32,766 or 999 on old builds)
TOUCH_AFTER_S = 3600.0  # a row's last-used time is written again only when it is older than this
SQLITE_MAGIC = b"SQLite format 3\x00"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS answers (
    key TEXT PRIMARY KEY,
    answerer TEXT NOT NULL,
    model TEXT NOT NULL,
    kind TEXT NOT NULL,
    request TEXT NOT NULL,
    params TEXT NOT NULL,
    result TEXT NOT NULL,
    created REAL NOT NULL,
    last_used REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS answers_by_model ON answers (model, kind);
CREATE INDEX IF NOT EXISTS answers_by_use ON answers (last_used);
"""
COLUMNS = ("key", "answerer", "model", "kind", "request", "params", "result", "created", "last_used")
JSON_COLUMNS = ("answerer", "request", "params", "result")

T = TypeVar("T")


def default_cache_dir() -> Path:
    """``$NLUE_ANSWER_CACHE``, else nlue's cache folder (:func:`nlue.cache_root.nlue_cache_root`); read at each call."""
    if os.environ.get("NLUE_ANSWER_CACHE"):
        return Path(os.environ["NLUE_ANSWER_CACHE"]).expanduser()
    return nlue_cache_root()


def cache_path(cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """The shared cache's file in ``cache_dir`` (default :func:`default_cache_dir`)."""
    return Path(cache_dir).expanduser() / CACHE_FILE if cache_dir is not None else default_cache_dir() / CACHE_FILE


@dataclass
class CacheCounts:
    """What this process's calls did: requests sent to a model, and requests the cache answered."""

    asked: int = 0
    from_cache: int = 0


def _dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


class AnswerCache:
    """An SQLite store of answers, shared safely by threads and processes; a context manager."""

    keeps = True  # answers stored here outlive the run (NoAnswerCache: they do not)

    def __init__(self, path: str | os.PathLike[str], *, busy_timeout: float = BUSY_TIMEOUT_S) -> None:
        self.path = Path(path).expanduser()
        self.busy_timeout = busy_timeout
        self.counts = CacheCounts()
        self._lock = threading.Lock()  # one connection, used by a run's threads in turn
        _refuse_foreign_file(self.path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._db = sqlite3.connect(self.path, timeout=busy_timeout, isolation_level=None, check_same_thread=False)
        except sqlite3.Error as exc:
            raise NlueError(f"cannot open the answer cache {self.path}: {exc}") from exc
        try:
            self._retrying("open", self._set_up)
        except BaseException:
            self._db.close()
            raise

    def _set_up(self) -> None:
        self._db.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout * 1000)}")
        version = self._db.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise NlueError(f"{self.path}: an answer cache of a newer nlue (schema {version}); upgrade nlue to use it")
        mode = self._db.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if str(mode).lower() != "wal":  # a file system without shared memory: still safe, readers then wait
            logger.warning("%s: SQLite could not use WAL mode (it uses %s); readers wait for writers", self.path, mode)
        self._db.execute("PRAGMA synchronous = FULL")  # a committed batch is on disk before the commit returns
        if version < SCHEMA_VERSION:
            with self._transaction():
                if self._db.execute("PRAGMA user_version").fetchone()[0] < SCHEMA_VERSION:  # not made meanwhile
                    if self._db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]:  # another tool's file
                        raise NlueError(
                            f"{self.path} is an SQLite file, but not an nlue answer cache; give another path"
                        )
                    for statement in filter(str.strip, _SCHEMA.split(";")):
                        self._db.execute(statement)
                    self._db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
                    self._db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        else:
            self._check_ours()

    def _check_ours(self) -> None:
        app = self._db.execute("PRAGMA application_id").fetchone()[0]
        tables = {row[0] for row in self._db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if app != APPLICATION_ID or "answers" not in tables:
            raise NlueError(f"{self.path} is an SQLite file, but not an nlue answer cache; give another path")

    # -- transactions, and a lock held too long ------------------------------------------------------

    class _Tx:
        def __init__(self, db: sqlite3.Connection) -> None:
            self.db = db

        def __enter__(self) -> None:
            self.db.execute("BEGIN IMMEDIATE")  # take the write lock now, not half way through

        def __exit__(self, kind: object, *rest: object) -> None:
            self.db.execute("COMMIT" if kind is None else "ROLLBACK")

    def _transaction(self) -> AnswerCache._Tx:
        return AnswerCache._Tx(self._db)

    def _retrying(self, what: str, operation: Callable[[], T]) -> T:
        """``operation`` under the connection's lock; a cache locked past the busy timeout is retried, logged."""
        for attempt in range(BUSY_RETRIES + 1):
            try:
                with self._lock:
                    return operation()
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) and "busy" not in str(exc):
                    raise ServiceError(f"the answer cache {self.path} failed ({what}): {exc}") from exc
                if attempt == BUSY_RETRIES:
                    raise ServiceError(
                        f"the answer cache {self.path} stayed locked by another process for {BUSY_RETRIES + 1} tries "
                        f"of {self.busy_timeout:.0f} s ({what}); is a run stuck, or is the cache on a network file "
                        "system? Give this run a local --cache-dir or its own --journal"
                    ) from exc
                logger.warning("%s: locked by another process for %.0f s (%s); trying again (%d of %d)",
                               self.path, self.busy_timeout, what, attempt + 1, BUSY_RETRIES)  # fmt: skip
            except sqlite3.DatabaseError as exc:  # "file is not a database", a damaged page
                raise NlueError(
                    f"{self.path}: not a readable answer cache ({exc}); move it away to start afresh"
                ) from exc
        raise AssertionError("unreachable")

    # -- what JournalledCall uses ---------------------------------------------------------------------

    def lookup(self, keys: Iterable[str]) -> dict[str, dict[str, Any]]:
        """The stored result of each of ``keys`` that has one; their last-used time is brought up to date."""
        wanted = list(dict.fromkeys(keys))
        found: dict[str, dict[str, Any]] = {}
        for start in range(0, len(wanted), LOOKUP_CHUNK):
            chunk = wanted[start : start + LOOKUP_CHUNK]
            marks = ",".join("?" * len(chunk))
            rows = self.execute("read", f"SELECT key, result FROM answers WHERE key IN ({marks})", chunk)
            found.update((key, self._parse(key, "result", text)) for key, text in rows)
        if found:
            self._touch(list(found))
        return found

    def _touch(self, keys: Sequence[str]) -> None:
        now = time.time()

        def touch() -> None:
            for start in range(0, len(keys), LOOKUP_CHUNK):
                chunk = keys[start : start + LOOKUP_CHUNK]
                self._db.execute(f"UPDATE answers SET last_used = ? WHERE key IN ({','.join('?' * len(chunk))}) "
                                 "AND last_used < ?", [now, *chunk, now - TOUCH_AFTER_S])  # fmt: skip

        self._retrying("mark answers used", touch)

    def result(self, key: str) -> dict[str, Any] | None:
        return self.lookup([key]).get(key)

    def __contains__(self, key: object) -> bool:
        row = self._retrying("read", lambda: self._db.execute("SELECT 1 FROM answers WHERE key = ?", (key,)).fetchone())
        return row is not None

    def __len__(self) -> int:
        return int(self._retrying("count", lambda: self._db.execute("SELECT count(*) FROM answers").fetchone()[0]))

    def append(self, entries: Iterable[dict[str, Any]]) -> dict[str, dict[str, Any]]:
        """Store entries (``key``, ``result`` and what they answer) in one durable transaction.

        Returns, for each key that another run had stored first, the stored result (the first answer wins).
        """
        now = time.time()
        rows = [
            (e["key"], _dumps(e.get("answerer")), str(e.get("model", "")), str(e.get("kind", "")),
             _dumps(e.get("request")), _dumps(e.get("params")), _dumps(e["result"]), now, now)
            for e in entries
        ]  # fmt: skip
        if not rows:
            return {}

        def insert() -> list[str]:
            lost = []
            with self._transaction():
                for row in rows:
                    if (
                        self._db.execute(f"INSERT OR IGNORE INTO answers VALUES ({','.join('?' * 9)})", row).rowcount
                        == 0
                    ):
                        lost.append(row[0])
            return lost

        lost = self._retrying("write", insert)
        return self.lookup(lost) if lost else {}

    # -- reading rows back (report, prune, tests, an audit) ------------------------------------------

    def _parse(self, key: str, column: str, text: Any) -> Any:
        if not isinstance(text, str) or len(text) > MAX_FIELD_BYTES:
            size = len(text) if isinstance(text, str | bytes) else 0
            raise NlueError(f"{self.path}, key {key}: the {column} is not text of at most {MAX_FIELD_BYTES} bytes "
                            f"({type(text).__name__}, {size}); the cache was changed by something else")  # fmt: skip
        try:
            return json.loads(text)
        except ValueError as exc:
            raise NlueError(
                f"{self.path}, key {key}: the {column} is not JSON ({exc}); the cache was changed by something else; "
                "remove that row (nlue cache prune) or move the file away to start afresh"
            ) from exc

    def entries(self, *, model: str | None = None, kind: str | None = None) -> Iterator[dict[str, Any]]:
        """Every stored row (optionally of one model name and kind), oldest first, its JSON columns parsed."""
        where, args = _filters(model=model, kind=kind)
        query = f"SELECT {', '.join(COLUMNS)} FROM answers{where} ORDER BY created, rowid"  # as stored
        rows = self._retrying("read", lambda: self._db.execute(query, args).fetchall())
        for row in rows:
            entry = dict(zip(COLUMNS, row, strict=True))
            for column in JSON_COLUMNS:
                entry[column] = self._parse(entry["key"], column, entry[column])
            yield entry

    def execute(self, what: str, sql: str, args: Sequence[Any] = (), *, write: bool = False) -> list[tuple]:
        """One statement for :mod:`nlue.lm.cache_admin` (in a write transaction when ``write``), retried when locked."""

        def run() -> list[tuple]:
            if not write:
                return self._db.execute(sql, args).fetchall()
            with self._transaction():
                cursor = self._db.execute(sql, args)
                return [(cursor.rowcount,)]

        return self._retrying(what, run)

    def vacuum(self) -> None:
        """Give the space of removed rows back to the file system."""
        self._retrying("vacuum", lambda: self._db.execute("VACUUM"))
        self._retrying("checkpoint", lambda: self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)"))

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> AnswerCache:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def _filters(**wanted: Any) -> tuple[str, list[Any]]:
    """`` WHERE a = ? AND b = ?`` for the filters given (names are ours, never the user's)."""
    given = {name: value for name, value in wanted.items() if value is not None}
    if not given:
        return "", []
    return " WHERE " + " AND ".join(f"{name} = ?" for name in given), list(given.values())


def _refuse_foreign_file(path: Path) -> None:
    """An older nlue's JSON-lines journal, or any other file, is refused with what to do, never overwritten."""
    if not path.is_file() or path.stat().st_size == 0:
        return
    with path.open("rb") as handle:
        head = handle.read(len(SQLITE_MAGIC))
    if head == SQLITE_MAGIC:
        return
    if head.lstrip()[:1] == b"{":
        raise NlueError(
            f"{path} is an answer journal of an older nlue (JSON lines), not an answer cache: add its answers to "
            f"the cache with `nlue cache import {path}` (`--journal NEW` to import it into a cache of this run's own), then "
            "give that cache instead"
        )
    raise NlueError(f"{path} is not an nlue answer cache (not an SQLite file); give another path")


class NoAnswerCache:
    """``--no-cache``: nothing is looked up and nothing is kept; only the counts of what was asked."""

    keeps = False
    path = None

    def __init__(self) -> None:
        self.counts = CacheCounts()

    def lookup(self, keys: Iterable[str]) -> dict[str, dict[str, Any]]:
        return {}

    def result(self, key: str) -> dict[str, Any] | None:
        return None

    def __contains__(self, key: object) -> bool:
        return False

    def __len__(self) -> int:
        return 0

    def append(self, entries: Iterable[dict[str, Any]]) -> dict[str, dict[str, Any]]:
        return {}

    def close(self) -> None:
        pass

    def __enter__(self) -> NoAnswerCache:
        return self

    def __exit__(self, *exc_info: object) -> None:
        pass


def answers_line(store: AnswerCache | NoAnswerCache) -> str:
    """The line a command ends with: what it asked and what the cache answered (this process's counts)."""
    counts = store.counts
    where = f"({store.path})" if store.keeps else "(--no-cache: nothing kept, so this run cannot be resumed)"
    return f"answers: {counts.asked} asked, {counts.from_cache} from the cache {where}"
