"""A small scripted OpenAI-compatible server on loopback, for the HTTP backend's tests.

It answers ``/v1/completions`` the way vLLM does for ``echo=true, logprobs=1`` (prompt tokens
with ``token_logprobs``, ``top_logprobs`` and ``text_offset``; the first token's log-probability
is null) and ``/v1/chat/completions`` with a deterministic reply, both with ``usage``.

"Tokens" are whitespace-led words (``re.findall(r"\\s*\\S+|\\s+")``); a token's log-probability
and whether it is the greedy one are functions of the token and its predecessor
(:func:`token_logprob`, :func:`token_is_greedy`), so a test can compute the expected answer.

Faults are scripted: ``server.script`` is a list of fault names consumed one per request
(``"ok"`` or nothing left = a normal answer), and ``server.rules`` maps a substring of the
request body to a fault given to every matching request. Faults: ``500``, ``429`` or
``429:<seconds>`` (with ``Retry-After``), ``400``, ``401``, ``sleep:<seconds>`` (then a normal
answer; longer than the client's timeout makes a timeout), ``malformed`` (200, not JSON),
``badshape`` (200, JSON without choices), ``truncated`` (200, half the body then the
connection closes), ``drop`` (the connection closes with no answer), ``nologprobs`` (a
completion without logprobs, as ``transformers serve`` answers), ``trickle:<seconds>`` (a normal
answer sent one byte at a time, that many seconds apart, for at most :data:`TRICKLE_FOR` seconds,
then the rest at once), ``nan`` and ``inf`` (the continuation's first log-probability NaN or
-Infinity, as Python's JSON writes them), ``echo-auth`` (a chat answer that quotes the request's
``Authorization`` header), ``ansi`` (HTTP 500 with a plain-text body that holds raw ANSI and OSC
sequences: a terminal that shows it raw is cleared and retitled).

``state.batch_slowdown`` makes the server answer like one that batches: an answer needs ``delay``
seconds alone, and with ``n`` requests being answered each goes ``1 + batch_slowdown * (n - 1)`` times
slower, so more in flight means slower answers yet more answers per second (below 1.0).
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit


def tokens_of(text: str) -> list[str]:
    return re.findall(r"\s*\S+|\s+", text)


def _digest(*parts: str) -> int:
    return int.from_bytes(hashlib.sha256("\x00".join(parts).encode()).digest()[:4], "big")


def token_logprob(previous: str, token: str) -> float:
    return -0.01 - (_digest(previous, token) % 1000) / 100


def token_is_greedy(previous: str, token: str) -> bool:
    return _digest("greedy", previous, token) % 3 != 0


def reply_for(content: str) -> str:
    return "उत्तर: " + content[::-1][:24]


TRICKLE_FOR = 4.0  # seconds a trickled answer dribbles before the rest is sent: a client without a deadline ends
ANSI_BODY = b"\x1b]0;pwned by the server\x07\x1b[2J\x1b[31mserver on fire\x1b[0m"


@dataclass
class Record:
    path: str
    body: dict[str, Any]
    fault: str
    authorization: str
    started: float
    query: str = ""


@dataclass
class FaultState:
    script: list[str] = field(default_factory=list)
    rules: dict[str, str] = field(default_factory=dict)
    records: list[Record] = field(default_factory=list)
    in_flight: int = 0
    max_in_flight: int = 0
    delay: float = 0.0  # added to every answer, to make concurrency observable
    one_at_a_time: bool = False  # answer requests one after another, as plain `transformers serve` does
    batch_slowdown: float | None = None  # answer like a server that batches (see the module docstring)
    lock: threading.Lock = field(default_factory=threading.Lock)
    serial: threading.Lock = field(default_factory=threading.Lock)

    def next_fault(self, raw: str) -> str:
        with self.lock:
            for needle, fault in self.rules.items():
                if needle in raw:
                    return fault
            return self.script.pop(0) if self.script else "ok"

    def asked(self, path: str | None = None) -> list[dict[str, Any]]:
        with self.lock:
            return [r.body for r in self.records if path is None or r.path == path]


def _completion_body(request: dict[str, Any]) -> dict[str, Any]:
    prompt = request["prompt"]
    tokens = tokens_of(prompt)
    generated = " अ"
    choice: dict[str, Any] = {"index": 0, "finish_reason": "length", "text": generated}
    if request.get("echo"):
        choice["text"] = prompt + generated
        if request.get("logprobs") is not None:
            offsets, values, tops = [], [], []
            position, previous = 0, ""
            for token in [*tokens, generated]:
                offsets.append(position)
                value = token_logprob(previous, token)
                values.append(value if position else None)
                best = value if token_is_greedy(previous, token) else value + 1.0
                tops.append({token if best == value else "<other>": best} if position else None)
                position += len(token)
                previous = token
            choice["logprobs"] = {
                "tokens": [*tokens, generated],
                "token_logprobs": values,
                "top_logprobs": tops,
                "text_offset": offsets,
            }
    elif request.get("logprobs") is not None:
        choice["logprobs"] = None
    return {
        "id": "cmpl-1",
        "object": "text_completion",
        "created": 0,
        "model": request.get("model", "m"),
        "choices": [choice],
        "usage": {"prompt_tokens": len(tokens), "completion_tokens": 1, "total_tokens": len(tokens) + 1},
    }


def _chat_body(request: dict[str, Any]) -> dict[str, Any]:
    content = request["messages"][-1]["content"]
    text = reply_for(content)
    finish = "stop"
    for stop in request.get("stop") or []:
        if stop in text:
            text = text[: text.index(stop)]
    if len(tokens_of(text)) > request.get("max_tokens", 10**6):
        text, finish = "".join(tokens_of(text)[: request["max_tokens"]]), "length"
    prompt_tokens = sum(len(tokens_of(m["content"])) for m in request["messages"])
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": request.get("model", "m"),
        "choices": [{"index": 0, "finish_reason": finish, "message": {"role": "assistant", "content": text}}],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": len(tokens_of(text)),
            "total_tokens": prompt_tokens + len(tokens_of(text)),
        },
    }


class _Handler(BaseHTTPRequestHandler):
    server: FaultServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def _send(
        self, status: int, body: bytes, headers: dict[str, str] | None = None, cut: bool = False, trickle: float = 0.0
    ) -> None:
        if trickle:  # the status line and headers dribble too: a deadline must hold from the first byte
            self.wfile = _Trickle(self.wfile, trickle)
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body[: len(body) // 2] if cut else body)
        self.wfile.flush()
        if cut:
            self.close_connection = True
            self.connection.shutdown(2)

    def do_POST(self) -> None:
        state = self.server.state
        raw = self.rfile.read(int(self.headers.get("Content-Length", 0))).decode("utf-8")
        request = json.loads(raw)
        fault = state.next_fault(raw)
        path, query = urlsplit(self.path)[2:4]
        with state.lock:
            state.records.append(
                Record(path, request, fault, self.headers.get("Authorization", ""), time.time(), query)
            )
            state.in_flight += 1
            state.max_in_flight = max(state.max_in_flight, state.in_flight)
        try:
            self._answer(path, request, fault, state)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout)
            pass
        finally:
            with state.lock:
                state.in_flight -= 1

    def _answer(self, path: str, request: dict[str, Any], fault: str, state: FaultState) -> None:
        if state.one_at_a_time:
            with state.serial:  # the next request waits for this one's whole answer
                self._answer_now(path, request, fault, state)
        else:
            self._answer_now(path, request, fault, state)

    def _answer_now(self, path: str, request: dict[str, Any], fault: str, state: FaultState) -> None:
        if state.batch_slowdown is not None:
            _work_shared(state)
        elif state.delay:
            time.sleep(state.delay)
        name, _, arg = fault.partition(":")
        if name == "sleep":
            time.sleep(float(arg))
        elif name == "ansi":
            self.send_response(500)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(ANSI_BODY)))
            self.end_headers()
            self.wfile.write(ANSI_BODY)
            return
        elif name in ("500", "400", "401", "429"):
            headers = {"Retry-After": arg} if name == "429" and arg else {}
            message = f"scripted {name}"
            if name == "401":  # like servers that quote what they refused, so that masking is tested
                message += f": invalid credentials {self.headers.get('Authorization', '')}"
            self._send(int(name), json.dumps({"error": {"message": message}}).encode(), headers)
            return
        elif name == "malformed":
            self._send(200, b'{"id": "x", "choices": [ {"index": 0, "te')
            return
        elif name == "badshape":
            self._send(200, b'{"id": "x", "object": "text_completion", "choices": []}')
            return
        elif name == "drop":
            self.close_connection = True
            self.connection.shutdown(2)
            return
        if path.endswith("/chat/completions"):
            body = _chat_body(request)
            if name == "echo-auth":  # a model that repeats what it was sent, credentials included
                message = body["choices"][0]["message"]
                message["content"] += f" (you sent {self.headers.get('Authorization', '')})"
        elif path.endswith("/completions"):
            if name == "nologprobs":
                request = {**request, "echo": False}
            body = _completion_body(request)
            if name in ("nan", "inf"):
                values = body["choices"][0]["logprobs"]["token_logprobs"]
                values[-2] = float("nan") if name == "nan" else float("-inf")  # the continuation's last token
        else:
            self._send(404, b'{"error": {"message": "no such endpoint"}}')
            return
        trickle = float(arg) if name == "trickle" else 0.0
        self._send(200, json.dumps(body, ensure_ascii=False).encode("utf-8"), cut=name == "truncated", trickle=trickle)


class _Trickle:
    """A response stream that sends one byte every ``gap`` seconds for :data:`TRICKLE_FOR` seconds, then the rest."""

    def __init__(self, stream: Any, gap: float) -> None:
        self._stream, self._gap, self._until = stream, gap, time.monotonic() + TRICKLE_FOR

    def write(self, data: bytes) -> int:
        for position in range(len(data)):
            if time.monotonic() >= self._until:
                self._stream.write(data[position:])
                break
            self._stream.write(data[position : position + 1])
            self._stream.flush()
            time.sleep(self._gap)
        return len(data)

    def __getattr__(self, name: str) -> Any:  # closed, fileno, ...: the socket writer's
        return getattr(self._stream, name)


def _work_shared(state: FaultState) -> None:
    """``state.delay`` seconds of work, done more slowly while more requests are being answered (batching)."""
    done, before = 0.0, time.monotonic()
    while done < 1.0:
        time.sleep(0.005)
        with state.lock:
            sharing = max(state.in_flight, 1)
        now = time.monotonic()  # the time that passed, not the time asked for: sleeps overshoot on a busy machine
        done += (now - before) / (state.delay * (1 + (state.batch_slowdown or 0.0) * (sharing - 1)))
        before = now


class FaultServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.state = FaultState()
        self._thread = threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def start(self) -> FaultServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.shutdown()
        self.server_close()
