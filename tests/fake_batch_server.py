"""A fake OpenAI-compatible batch API on loopback, for ``--batch-api``'s tests.

The scripted server of :mod:`tests.lm_fault_server` (live ``/v1/completions`` and ``/v1/chat/completions``)
with the batch routes beside it: ``POST /v1/files`` (multipart, as the ``openai`` client uploads),
``POST /v1/batches``, ``GET /v1/batches/{id}`` and ``GET /v1/files/{id}/content``. A batch's lines are
answered by the same functions as live requests, so a batch run and a live run can be compared.

Knobs (on ``server.batch``): ``slow_polls`` (a batch stays ``in_progress`` that many retrievals),
``fail_first`` (that many lines of the first batch go to the error file with HTTP 500),
``expire_first`` (the first batch expires with only half its lines answered), ``foreign`` (an output
line with a ``custom_id`` nobody sent). ``received`` counts how often each ``custom_id`` came in a
batch's input file, ``answered`` how often it was answered.
"""

from __future__ import annotations

import email.parser
import email.policy
import json
import threading
from collections import Counter
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from tests.lm_fault_server import FaultServer, _chat_body, _completion_body, _Handler


@dataclass
class BatchState:
    slow_polls: int = 0
    fail_first: int = 0
    expire_first: bool = False
    foreign: bool = False
    files: dict[str, bytes] = field(default_factory=dict)
    batches: dict[str, dict[str, Any]] = field(default_factory=dict)
    polls: Counter = field(default_factory=Counter)
    received: Counter = field(default_factory=Counter)
    answered: Counter = field(default_factory=Counter)
    lock: threading.Lock = field(default_factory=threading.Lock)


def _answer_line(line: dict[str, Any]) -> dict[str, Any]:
    body = _chat_body(line["body"]) if line["url"].endswith("/chat/completions") else _completion_body(line["body"])
    return {"id": f"r-{line['custom_id'][:8]}", "custom_id": line["custom_id"],
            "response": {"status_code": 200, "request_id": "q", "body": body}, "error": None}  # fmt: skip


def _failed_line(line: dict[str, Any]) -> dict[str, Any]:
    error = {"message": "the server had an error", "type": "server_error"}
    return {"id": "r-x", "custom_id": line["custom_id"],
            "response": {"status_code": 500, "request_id": "q", "body": {"error": error}}, "error": None}  # fmt: skip


class _BatchHandler(_Handler):
    server: BatchServer

    def _json(self, status: int, value: Any) -> None:
        self._send(status, json.dumps(value).encode())

    def do_POST(self) -> None:
        path = urlsplit(self.path).path
        if path == "/v1/files":
            return self._upload()
        if path == "/v1/batches":
            return self._create()
        return super().do_POST()

    def do_GET(self) -> None:
        path = urlsplit(self.path).path
        parts = path.strip("/").split("/")
        batch = self.server.batch
        if parts[:2] == ["v1", "batches"] and len(parts) == 3:
            with batch.lock:
                entry = batch.batches.get(parts[2])
                if entry is None:
                    return self._json(404, {"error": {"message": "no such batch"}})
                batch.polls[parts[2]] += 1
                if batch.polls[parts[2]] > batch.slow_polls and entry["status"] == "in_progress":
                    self._finish(entry)
                return self._json(200, {k: v for k, v in entry.items() if not k.startswith("_")})
        if parts[:2] == ["v1", "files"] and len(parts) == 4 and parts[3] == "content":
            data = batch.files.get(parts[2])
            if data is None:
                return self._json(404, {"error": {"message": "no such file"}})
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return None
        return self._json(404, {"error": {"message": f"no route {path}"}})

    def _upload(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        head = f"Content-Type: {self.headers['Content-Type']}\r\n\r\n".encode()
        message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(head + raw)
        data = next(p.get_payload(decode=True) for p in message.iter_parts() if p.get_filename())
        batch = self.server.batch
        with batch.lock:
            file_id = f"file-{len(batch.files) + 1}"
            batch.files[file_id] = data
        self._json(200, {"id": file_id, "object": "file", "bytes": len(data), "created_at": 0,
                         "filename": "input.jsonl", "purpose": "batch", "status": "processed"})  # fmt: skip

    def _create(self) -> None:
        request = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        batch = self.server.batch
        with batch.lock:
            lines = [json.loads(raw) for raw in batch.files[request["input_file_id"]].splitlines() if raw.strip()]
            batch_id = f"batch-{len(batch.batches) + 1}"
            for line in lines:
                batch.received[line["custom_id"]] += 1
            entry = {"id": batch_id, "object": "batch", "endpoint": request["endpoint"], "errors": None,
                     "input_file_id": request["input_file_id"], "completion_window": request["completion_window"],
                     "status": "in_progress", "created_at": 0, "output_file_id": None, "error_file_id": None,
                     "request_counts": {"total": len(lines), "completed": 0, "failed": 0}, "_lines": lines}  # fmt: skip
            batch.batches[batch_id] = entry
        self._json(200, {k: v for k, v in entry.items() if not k.startswith("_")})

    def _finish(self, entry: dict[str, Any]) -> None:
        """Answer a batch's lines (under the lock): output file, error file, final status."""
        batch = self.server.batch
        lines = entry.pop("_lines")
        first = entry["id"] == "batch-1"
        status = "completed"
        if first and batch.expire_first:
            lines, status = lines[: len(lines) // 2], "expired"
        failing = lines[: batch.fail_first] if first else []
        output = [_answer_line(line) for line in lines[len(failing) :]]
        if batch.foreign:
            output.append({**output[0], "custom_id": "not-a-request-of-ours"})
        for line in output:
            batch.answered[line["custom_id"]] += 1
        for name, rows in (("output_file_id", output), ("error_file_id", [_failed_line(x) for x in failing])):
            if rows:
                file_id = f"file-{len(batch.files) + 1}"
                batch.files[file_id] = "".join(json.dumps(r) + "\n" for r in rows).encode()
                entry[name] = file_id
        entry["status"] = status
        entry["request_counts"] = {"total": entry["request_counts"]["total"], "completed": len(output),
                                   "failed": len(failing)}  # fmt: skip


class BatchServer(FaultServer):
    def __init__(self) -> None:
        super().__init__()
        self.RequestHandlerClass = _BatchHandler
        self.batch = BatchState()
