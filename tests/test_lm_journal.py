"""The answer cache: stable keys, durable writes, the first answer wins, several writers, old journals imported."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from nlue.errors import NlueError
from nlue.lm.answer_cache import AnswerCache
from nlue.lm.base import ChatMessage, Generation, GenerationRequest, Loglikelihood, LoglikelihoodRequest
from nlue.lm.journal import JournalledCall, request_key
from tests.answer_store import count_answers, stored


def _entry(key: str, value: float) -> dict:
    return {
        "key": key,
        "model": "m",
        "kind": "loglikelihood",
        "request": {},
        "params": {},
        "result": {"logprob": value},
    }


def test_key_is_stable_across_processes_and_follows_every_part() -> None:
    request = LoglikelihoodRequest("प्रश्न:", " उत्तर").to_dict()
    key = request_key("hf:m", "loglikelihood", request, {"dtype": "float32"})
    code = (
        "from nlue.lm.journal import request_key;"
        "print(request_key('hf:m', 'loglikelihood', {'continuation': ' उत्तर', 'context': 'प्रश्न:'}, {'dtype': 'float32'}))"
    )
    other_process = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert other_process.strip() == key  # key order in the dicts does not matter; no salted hash()
    assert request_key("hf:other", "loglikelihood", request, {"dtype": "float32"}) != key
    assert request_key("hf:m", "generate", request, {"dtype": "float32"}) != key
    assert request_key("hf:m", "loglikelihood", request, {"dtype": "bfloat16"}) != key
    capped = GenerationRequest(prompt="x", max_new_tokens=5).to_dict()
    assert request_key("m", "generate", capped, {}) != request_key("m", "generate", {**capped, "max_new_tokens": 6}, {})


def test_answers_survive_reopening_and_duplicates_are_written_once(tmp_path: Path) -> None:
    path = tmp_path / "runs" / "answers.sqlite"
    requests = [LoglikelihoodRequest("क", " ख"), LoglikelihoodRequest("ग", " घ"), LoglikelihoodRequest("क", " ख")]
    with AnswerCache(path) as cache:
        call = JournalledCall(cache, "m", "loglikelihood", {}, [r.to_dict() for r in requests])
        assert call.pending == [0, 1]  # the repeated request is asked once
        call.record([(0, Loglikelihood(-1.5, True).to_dict()), (1, Loglikelihood(-2.0, False).to_dict())])
        assert [r["logprob"] for r in call.results()] == [-1.5, -2.0, -1.5]
        assert (cache.counts.asked, cache.counts.from_cache) == (2, 0)
    assert count_answers(path) == 2
    with AnswerCache(path) as cache:
        again = JournalledCall(cache, "m", "loglikelihood", {}, [r.to_dict() for r in requests])
        assert again.pending == [] and again.from_journal == 3
        assert [r["logprob"] for r in again.results()] == [-1.5, -2.0, -1.5]
        assert (cache.counts.asked, cache.counts.from_cache) == (0, 3)
        assert cache.append([_entry(again.keys[0], 9.0)]) == {
            again.keys[0]: {"logprob": -1.5, "is_greedy": True}
        }  # the first one wins
    assert [e["result"]["logprob"] for e in stored(path)] == [-1.5, -2.0]


def test_a_row_changed_by_something_else_is_an_error_naming_the_file_and_key(tmp_path: Path) -> None:
    """issue 31, item 2: a row whose JSON does not parse is refused, never handed out as an answer."""
    path = tmp_path / "answers.sqlite"
    with AnswerCache(path) as cache:
        cache.append([_entry("a" * 64, -1.0)])
    db = sqlite3.connect(path)
    db.execute("UPDATE answers SET result = '{\"logprob\": -1' WHERE key = ?", ("a" * 64,))
    db.commit()
    db.close()
    with (
        AnswerCache(path) as cache,
        pytest.raises(NlueError, match=rf"answers\.sqlite, key {'a' * 64}: the result is not JSON"),
    ):
        cache.result("a" * 64)


def test_an_older_journal_or_another_file_is_refused_not_overwritten(tmp_path: Path) -> None:
    """issue 31, item 2: --journal naming a JSON-lines journal of an older nlue says how to import it."""
    old = tmp_path / "old.jsonl"
    old.write_text(json.dumps(_entry("a", -1.0)) + "\n", encoding="utf-8")
    with pytest.raises(NlueError, match=r"older nlue \(JSON lines\).*nlue cache import .*old\.jsonl"):
        AnswerCache(old)
    other = tmp_path / "other.sqlite"
    sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.commit()
    with pytest.raises(NlueError, match="not an nlue answer cache"):
        AnswerCache(other)
    assert old.read_text(encoding="utf-8").startswith("{")


WRITER = """
import sys
from nlue.lm.answer_cache import AnswerCache
from nlue.lm.journal import JournalledCall
cache = AnswerCache(sys.argv[1])
for start in range(0, 400, 20):  # 20 small transactions, each request answered by this writer's name
    requests = [{"prompt": f"q{i}"} for i in range(start, start + 20)]
    call = JournalledCall(cache, "m", "generate", {}, requests)
    call.record((i, {"text": sys.argv[2]}) for i in call.pending)
print(cache.counts.asked)
"""


def test_two_processes_write_one_cache_at_once(tmp_path: Path) -> None:
    """issue 31, item 2: two writers at once both finish, and every answer is there once (the first one stored)."""
    path = tmp_path / "answers.sqlite"
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(path), name], stdout=subprocess.PIPE, text=True)
               for name in ("one", "two")]  # fmt: skip
    outputs = [w.communicate(timeout=120)[0] for w in writers]
    assert [w.returncode for w in writers] == [0, 0]
    rows = stored(path)
    assert len(rows) == len({r["key"] for r in rows}) == 400
    assert {r["result"]["text"] for r in rows} <= {"one", "two"}
    assert sum(int(out) for out in outputs) >= 400  # each asked what it did not find; together everything


def test_an_older_journal_is_imported_with_every_key_checked(tmp_path: Path) -> None:
    """issue 31, item 2: `nlue cache import` adds an older journal's answers; a line whose key is not that of
    what it holds (an older key version) is skipped, and a rerun then asks nothing."""
    from nlue.cli import main

    request = LoglikelihoodRequest("क", " ख").to_dict()
    good = {**_entry(request_key("m", "loglikelihood", request, {}), -1.0), "answerer": "m", "request": request}
    stale = {**good, "key": "0" * 64}
    journal = tmp_path / "m.jsonl"
    journal.write_text(json.dumps(good) + "\n" + json.dumps(stale) + "\n" + '{"key": "cut', encoding="utf-8")
    cache = tmp_path / "mine.sqlite"
    assert main(["cache", "import", str(journal), "--journal", str(cache)]) == 0
    with AnswerCache(cache) as store:
        call = JournalledCall(store, "m", "loglikelihood", {}, [request])
        assert call.pending == [] and call.results() == [{"logprob": -1.0}]
    assert len(stored(cache)) == 1
    assert main(["cache", "import", str(tmp_path / "missing.jsonl")]) == 2


def test_generation_requests_and_results_round_trip() -> None:
    request = GenerationRequest(messages=({"role": "user", "content": "नमस्ते"},), stop=["\n"], max_new_tokens=8)
    assert request.messages == (ChatMessage("user", "नमस्ते"),)
    assert request.to_dict() == {"stop": ["\n"], "max_new_tokens": 8, "messages": [{"role": "user", "content": "नमस्ते"}]}
    result = Generation("नमस्ते", 3, 2, "stop")
    assert Generation.from_dict(json.loads(json.dumps(result.to_dict()))) == result
    with pytest.raises(NlueError, match="either a prompt or chat messages"):
        GenerationRequest()
    with pytest.raises(NlueError, match="non-empty continuation"):
        LoglikelihoodRequest("x", "")
