"""What ``nlue cache`` does with the answer cache: report what it holds, prune it, import older journals.

* :func:`cache_groups` - rows and bytes per model, answerer and kind, with the oldest and newest
  answer and the last time one was used; :func:`report_text` shows them, every stored value made
  terminal-safe (the cache holds what servers said).
* :func:`prune` - removes the rows a filter picks (not used for ``older_than_days``, of one model
  name, of one kind), then ``VACUUM``\\ s so the file shrinks; with ``dry_run`` it only counts them.
* :func:`import_journal` - adds the answers of an older nlue's JSON-lines journal
  (``<results-dir>/journals/<model>.jsonl``); each line's key is computed again from what it holds,
  so a line written under an older key version, or edited, is skipped and counted, never trusted.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from nlue.errors import NlueError
from nlue.lm.answer_cache import AnswerCache
from nlue.lm.journal import read_journal, request_key
from nlue.text.safe import terminal_safe

logger = logging.getLogger(__name__)

IMPORT_BATCH = 1000  # journal lines per transaction
_BYTES = "length(CAST(key AS BLOB)) + length(CAST(answerer AS BLOB)) + length(CAST(request AS BLOB)) + " \
    "length(CAST(params AS BLOB)) + length(CAST(result AS BLOB))"  # fmt: skip


@dataclass(frozen=True)
class Group:
    """The answers of one model name, answerer and kind."""

    model: str
    answerer: str  # a short label: the endpoint, or the weights' fingerprint
    kind: str
    rows: int
    bytes: int
    oldest: float
    newest: float
    last_used: float


def _where(model: str | None, kind: str | None, older_than_days: float | None) -> tuple[str, list[Any]]:
    clauses, args = [], []
    if model is not None:  # the name as the report shows it (hf:./m), or without its backend (./m)
        clauses.append("(model = ? OR substr(model, instr(model, ':') + 1) = ?)")
        args += [model, model]
    if kind is not None:
        clauses.append("kind = ?")
        args.append(kind)
    if older_than_days is not None:
        if older_than_days < 0:
            raise NlueError(f"--older-than is a number of days, at least 0; got {older_than_days}")
        clauses.append("last_used < ?")
        args.append(time.time() - older_than_days * 86400.0)
    return (" WHERE " + " AND ".join(clauses) if clauses else ""), args


def answerer_label(cache: AnswerCache, key: str, text: str) -> str:
    """What tells one answerer of a model name from another: its endpoint, else its weights' fingerprint."""
    answerer = cache._parse(key, "answerer", text)
    if not isinstance(answerer, dict):
        return str(answerer)
    label = str(answerer.get("endpoint") or answerer.get("model_fingerprint") or answerer.get("backend") or "?")
    return label if len(label) <= 40 else label[:39] + "…"  # a fingerprint's first 24 hex digits tell them apart


def cache_groups(
    cache: AnswerCache, *, model: str | None = None, kind: str | None = None, older_than_days: float | None = None
) -> list[Group]:
    """Rows and bytes per model, answerer and kind (of the rows the filters pick), by model and kind."""
    where, args = _where(model, kind, older_than_days)
    rows = cache.execute(
        "report",
        f"SELECT model, answerer, kind, count(*), sum({_BYTES}), min(created), max(created), max(last_used), min(key) "
        f"FROM answers{where} GROUP BY model, answerer, kind ORDER BY model, kind, min(created)",
        args,
    )
    return [
        Group(str(m), answerer_label(cache, key, a), str(k), n, int(b or 0), first, last, used)
        for m, a, k, n, b, first, last, used, key in rows
    ]


def _when(stamp: float) -> str:
    return datetime.fromtimestamp(stamp, tz=UTC).strftime("%Y-%m-%d %H:%M")


def human_bytes(size: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    raise AssertionError("unreachable")


def groups_text(groups: list[Group]) -> list[str]:
    """One line per group (times in UTC), every stored value terminal-safe; the model's name whole (up to 400
    characters), since it is what `nlue cache prune --model` takes."""
    header = ("model", "answerer", "kind", "rows", "bytes", "oldest", "newest", "last used")
    table = [header] + [
        (terminal_safe(g.model, 400), terminal_safe(g.answerer, 48), terminal_safe(g.kind, 20), str(g.rows),
         human_bytes(g.bytes), _when(g.oldest), _when(g.newest), _when(g.last_used))
        for g in groups
    ]  # fmt: skip
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    return ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in table]


def report_text(cache: AnswerCache) -> str:
    groups = cache_groups(cache)
    size = _file_bytes(cache.path)
    lines = [f"answer cache: {cache.path} ({human_bytes(size)} on disk; times in UTC)"]
    if not groups:
        return "\n".join([*lines, "empty: no answers yet"])
    models = len({g.model for g in groups})
    total_rows, total_bytes = sum(g.rows for g in groups), sum(g.bytes for g in groups)
    lines += groups_text(groups)
    lines.append(f"total: {total_rows} answers, {human_bytes(total_bytes)} of requests and answers, {models} model(s), "
                 f"from {_when(min(g.oldest for g in groups))} to {_when(max(g.newest for g in groups))}")  # fmt: skip
    return "\n".join(lines)


def _file_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in (path, Path(f"{path}-wal")) if p.is_file())


@dataclass(frozen=True)
class Pruned:
    groups: list[Group]
    removed: int
    bytes_before: int
    bytes_after: int


def prune(
    cache: AnswerCache,
    *,
    model: str | None = None,
    kind: str | None = None,
    older_than_days: float | None = None,
    dry_run: bool = False,
) -> Pruned:
    """Remove the rows the filters pick (every row when none is given) and VACUUM; or, ``dry_run``, only list them."""
    groups = cache_groups(cache, model=model, kind=kind, older_than_days=older_than_days)
    before = _file_bytes(cache.path)
    if dry_run or not groups:
        return Pruned(groups, 0, before, before)
    where, args = _where(model, kind, older_than_days)
    ((removed,),) = cache.execute("prune", f"DELETE FROM answers{where}", args, write=True)
    cache.vacuum()
    return Pruned(groups, removed, before, _file_bytes(cache.path))


@dataclass(frozen=True)
class Imported:
    lines: int
    added: int
    already: int
    skipped: int  # keys that do not match what the line holds (an older key version, or edited)


def import_journal(cache: AnswerCache, journal: Path) -> Imported:
    """Add the answers of an older nlue's JSON-lines journal to ``cache`` (the first answer of a key wins)."""
    if not journal.is_file():
        raise NlueError(f"{journal}: no such journal file")
    lines = added = skipped = 0
    batch: list[dict[str, Any]] = []

    def flush() -> int:
        if not batch:
            return 0
        before = len(cache)
        cache.append(batch)
        batch.clear()
        return len(cache) - before

    for number, entry in read_journal(journal):
        lines += 1
        try:
            key = request_key(entry["answerer"], entry["kind"], entry["request"], entry["params"])
        except (KeyError, TypeError, ValueError):
            key = None
        if key != entry["key"]:
            skipped += 1
            logger.debug("%s, line %d: its key is not that of what it holds (an older key version); skipped",
                         journal, number)  # fmt: skip
            continue
        batch.append(entry)
        if len(batch) >= IMPORT_BATCH:
            added += flush()
    added += flush()
    if skipped:
        logger.warning("%s: %d of %d answers skipped: their key is not the one this nlue computes from what they hold "
                       "(written by an older version, or edited), so they would never be found", journal, skipped, lines)  # fmt: skip
    return Imported(lines, added, lines - skipped - added, skipped)
