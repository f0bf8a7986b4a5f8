"""OpenAI-compatible batch APIs: a run's requests sent as batches instead of one by one (``--batch-api``).

The pending requests of a call become lines of a JSONL file (``custom_id`` is the request's cache key,
the body is what a live request sends, :mod:`nlue.lm.http_bodies`), uploaded (``POST /v1/files``,
purpose ``batch``), one batch per at most ``max_lines`` lines (``POST /v1/batches``), polled
(``GET /v1/batches/{id}``) with its progress logged, and its output and error files downloaded and read
by the same code as live answers. Each answer goes into the answer cache as it is read, so a rerun asks
nothing that was answered.

Why a killed run loses nothing and sends nothing twice: each batch's id and the keys it holds are
written to a state file (atomically, right after the batch is created and before any wait) beside the
answer cache, named by what answers. A rerun reads it, waits for its batches and takes their answers
instead of sending those requests again. A batch that expired or was cancelled keeps the answers it has;
its other requests, and lines that failed with a server error, go again as a smaller batch, up to
``tries`` rounds; lines the server refused (a 4xx) are reported like refused live requests.

Everything in the files the server returns is untrusted: each file is bounded in size, each line must
parse, name a request of that batch (a ``custom_id`` we did not send is refused and named) and is
taken once.
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
import os
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from nlue.errors import NlueError, ServiceError
from nlue.lm.http_bodies import Body
from nlue.lm.http_retry import Failure

logger = logging.getLogger(__name__)

POLL_SECONDS_ENV = "NLUE_BATCH_POLL_SECONDS"  # how often a batch is asked about (tests make it short)
DEFAULT_POLL_SECONDS = 30.0
DEFAULT_MAX_LINES = 50_000  # OpenAI's limit of requests per batch
MAX_FILE_BYTES = 1 << 30  # an output file larger than this is refused, not read
STATE_VERSION = 1
STILL_WAITING_SECONDS = 600  # a batch that changes nothing is still reported this often
FINISHED = ("completed", "failed", "expired", "cancelled")

Read = Callable[[int, Mapping[str, Any]], dict[str, Any]]  # (request position, response body) -> the answer


def poll_seconds() -> float:
    raw = os.environ.get(POLL_SECONDS_ENV)
    try:
        return max(0.01, float(raw)) if raw else DEFAULT_POLL_SECONDS
    except ValueError as exc:
        raise NlueError(f"${POLL_SECONDS_ENV} must be a number of seconds, got {raw!r}") from exc


def state_path(store_path: Path, answerer: Mapping[str, Any]) -> Path:
    """Where a model's batches are remembered: beside the answer cache, named by what answers."""
    digest = hashlib.sha256(json.dumps(answerer, sort_keys=True).encode()).hexdigest()[:20]
    return store_path.parent / "batches" / f"{digest}.json"


def load_state(path: Path) -> list[dict[str, Any]]:
    """The batches a run created and has not finished reading: [{"id", "keys"}]."""
    if not path.is_file():
        return []
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
        batches = state["batches"]
        if state.get("version") != STATE_VERSION or not all(
            isinstance(b["id"], str) and all(isinstance(k, str) for k in b["keys"]) for b in batches
        ):
            raise ValueError("unexpected fields")
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise NlueError(f"{path}: not a batch state file nlue wrote ({exc}); move it away to start afresh") from exc
    return batches


def save_state(path: Path, batches: Sequence[Mapping[str, Any]]) -> None:
    from nlue.atomic_files import write_text_atomic

    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(path, json.dumps({"version": STATE_VERSION, "batches": list(batches)}, indent=1) + "\n")


class BatchRunner:
    """Sends a call's pending requests as batches and records the answers (:class:`~nlue.lm.journal.JournalledCall`)."""

    def __init__(
        self, client: Any, state_file: Path, *, where: str, tries: int = 2, max_lines: int = DEFAULT_MAX_LINES
    ):
        self.client, self.state_file, self.where = client, state_file, where
        self.tries, self.max_lines = tries, max(1, max_lines)
        self.sent_lines = 0  # lines uploaded by this runner (a rerun after a kill sends only what no batch holds)

    def run(self, call: Any, bodies: Mapping[int, Body], read: Read, on_usage: Callable[[Any], None]) -> dict:
        """Every pending request answered through batches; the failures by request position (as the live path)."""
        position = {call.keys[i]: i for i in bodies}
        known = [b for b in load_state(self.state_file) if any(k in position for k in b["keys"])]
        held = {k for b in known for k in b["keys"]}
        if known:
            logger.info("resuming %d batch(es) of an earlier run (%d requests)", len(known), len(held & set(position)))
        fresh = [k for k in position if k not in held]
        failed: dict[str, Failure] = {}
        for round_ in range(self.tries + 1):
            batches = known + self._submit(fresh, bodies, position, known)
            known = []
            if not batches:
                break
            failed = self._wait(batches, call, position, read, on_usage)
            save_state(self.state_file, [])  # every batch of this round is read: nothing left to resume
            fresh = [k for k, f in failed.items() if f.retryable]
            if fresh and round_ < self.tries:
                logger.warning("%d requests failed in their batch (first: %s); sending them again as a smaller batch",
                               len(fresh), failed[fresh[0]].description)  # fmt: skip
            else:
                break
        return {position[k]: f for k, f in failed.items()}

    # -- sending -----------------------------------------------------------------------------------------------

    def _submit(self, keys: list[str], bodies: Mapping[int, Body], position: Mapping[str, int], kept: list) -> list:
        created: list[dict[str, Any]] = []
        for start in range(0, len(keys), self.max_lines):
            chunk = keys[start : start + self.max_lines]
            endpoints = {bodies[position[k]].url for k in chunk}
            if len(endpoints) != 1:
                raise RuntimeError(f"one batch holds one endpoint's requests, got {sorted(endpoints)}")
            lines = "".join(
                json.dumps({"custom_id": k, "method": "POST", "url": bodies[position[k]].url,
                            "body": bodies[position[k]].json}, ensure_ascii=False) + "\n"
                for k in chunk
            )  # fmt: skip
            upload = self.client.files.create(file=("nlue-batch.jsonl", io.BytesIO(lines.encode())), purpose="batch")
            batch = self.client.batches.create(input_file_id=upload.id, endpoint=endpoints.pop(),
                                               completion_window="24h")  # fmt: skip
            created.append({"id": batch.id, "keys": chunk})
            save_state(self.state_file, kept + created)  # before any wait: a killed run finds this batch
            self.sent_lines += len(chunk)
            logger.info("batch %s created: %d requests to %s", batch.id, len(chunk), self.where)
        return created

    # -- waiting and reading -----------------------------------------------------------------------------------

    def _wait(self, batches: list, call: Any, position: Mapping[str, int], read: Read, on_usage: Callable) -> dict:
        waiting = {b["id"]: b for b in batches}
        seen: dict[str, tuple] = {}
        failed: dict[str, Failure] = {}
        pause, said = poll_seconds(), time.monotonic()
        while waiting:
            for batch_id in list(waiting):
                batch = self.client.batches.retrieve(batch_id)
                counts = getattr(batch, "request_counts", None)
                shown = (batch.status, getattr(counts, "completed", None), getattr(counts, "failed", None))
                if seen.get(batch_id) != shown or time.monotonic() - said > STILL_WAITING_SECONDS:
                    seen[batch_id], said = shown, time.monotonic()
                    logger.info("batch %s: %s, %s of %d done, %s failed", batch_id, shown[0], shown[1],
                                len(waiting[batch_id]["keys"]), shown[2])  # fmt: skip
                if batch.status in FINISHED:
                    failed.update(self._read(batch, waiting.pop(batch_id), call, position, read, on_usage))
            if waiting:
                time.sleep(pause)
        return failed

    def _read(self, batch: Any, entry: Mapping, call: Any, position: Mapping[str, int], read: Read, on_usage: Callable):
        if batch.status == "failed":
            errors = getattr(getattr(batch, "errors", None), "data", None) or []
            detail = "; ".join(str(getattr(e, "message", e)) for e in errors[:3]) or "no reason given"
            raise NlueError(f"the server refused batch {batch.id} as a whole: {detail}")
        mine = set(entry["keys"])
        answered: set[str] = set()
        failed: dict[str, Failure] = {}
        for file_id in (getattr(batch, "output_file_id", None), getattr(batch, "error_file_id", None)):
            for number, line in self._lines(file_id, batch.id):
                key = line.get("custom_id")
                if key not in mine:
                    raise ServiceError(f"batch {batch.id}, line {number}: custom_id {str(key)[:80]!r} is no request "
                                       "of this batch; its answers are not taken")  # fmt: skip
                if key in answered or key in failed:
                    continue  # a line twice: the first counts
                outcome = self._outcome(batch.id, line, position[key], read, on_usage)
                if isinstance(outcome, Failure):
                    failed[key] = outcome
                else:
                    call.record([(position[key], outcome)])
                    answered.add(key)
        for key in mine - answered - failed.keys():
            if key in position:
                failed[key] = Failure(f"no answer in batch {batch.id} ({batch.status})", retryable=True, cause="batch")
        return failed

    def _lines(self, file_id: str | None, batch_id: str):
        if not file_id:
            return
        data = self.client.files.content(file_id).content
        if len(data) > MAX_FILE_BYTES:
            raise ServiceError(f"batch {batch_id}: file {file_id} is {len(data)} bytes, more than nlue reads")
        for number, raw in enumerate(data.splitlines(), start=1):
            if not raw.strip():
                continue
            try:
                line = json.loads(raw)
                if not isinstance(line, dict):
                    raise ValueError("not an object")
            except ValueError as exc:
                raise ServiceError(f"batch {batch_id}, file {file_id}, line {number}: not JSON ({exc})") from exc
            yield number, line

    def _outcome(self, batch_id: str, line: Mapping, index: int, read: Read, on_usage: Callable) -> Any:
        response = line.get("response") if isinstance(line.get("response"), dict) else {}
        status = response.get("status_code")
        body = response.get("body")
        if status == 200 and isinstance(body, dict):
            try:
                result = read(index, body)
            except Exception as exc:  # a malformed answer is the server's fault, as on the live path
                return Failure(f"batch {batch_id}: {type(exc).__name__}: {exc}", retryable=True, cause="malformed")
            on_usage(body.get("usage"))
            return result
        error = line.get("error") or (body.get("error") if isinstance(body, dict) else None) or {}
        message = str(error.get("message", error) if isinstance(error, dict) else error)[:300]
        code = status if isinstance(status, int) else None
        retryable = code is None or code == 429 or code >= 500
        cause = "http-5xx" if code and code >= 500 else "http-4xx" if code else "batch"
        return Failure(f"batch {batch_id}: HTTP {code}: {message}", retryable=retryable, cause=cause)
