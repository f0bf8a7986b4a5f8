"""The answer journal: stable keys, durable appends, a cut-short last line tolerated, one run at a time."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from nlue.errors import NlueError
from nlue.lm.base import ChatMessage, Generation, GenerationRequest, Loglikelihood, LoglikelihoodRequest
from nlue.lm.journal import Journal, JournalledCall, request_key


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
    path = tmp_path / "runs" / "journal.jsonl"
    requests = [LoglikelihoodRequest("क", " ख"), LoglikelihoodRequest("ग", " घ"), LoglikelihoodRequest("क", " ख")]
    with Journal(path) as journal:
        call = JournalledCall(journal, "m", "loglikelihood", {}, [r.to_dict() for r in requests])
        assert call.pending == [0, 1]  # the repeated request is asked once
        call.record([(0, Loglikelihood(-1.5, True).to_dict()), (1, Loglikelihood(-2.0, False).to_dict())])
        assert [r["logprob"] for r in call.results()] == [-1.5, -2.0, -1.5]
    assert len(path.read_text(encoding="utf-8").splitlines()) == 2
    with Journal(path) as journal:
        again = JournalledCall(journal, "m", "loglikelihood", {}, [r.to_dict() for r in requests])
        assert again.pending == [] and again.from_journal == 3
        assert [r["logprob"] for r in again.results()] == [-1.5, -2.0, -1.5]
        journal.append([_entry(again.keys[0], 9.0)])  # an answer already there is not written again
    assert len(path.read_text(encoding="utf-8").splitlines()) == 2


def test_a_cut_short_last_line_is_dropped_and_the_file_repaired(tmp_path: Path, caplog) -> None:
    path = tmp_path / "journal.jsonl"
    good = json.dumps(_entry("a", -1.0)) + "\n"
    path.write_text(good + '{"key": "b", "result": {"logp', encoding="utf-8")
    with Journal(path) as journal:
        assert "a" in journal and "b" not in journal and len(journal) == 1
        journal.append([_entry("b", -2.0)])
    assert "partly written last line" in caplog.text
    lines = path.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["key"] for line in lines] == ["a", "b"]


def test_a_corrupt_line_in_the_middle_is_an_error_naming_the_line(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    path.write_text(json.dumps(_entry("a", -1.0)) + "\nnot json\n" + json.dumps(_entry("c", -3.0)) + "\n")
    with pytest.raises(NlueError, match=r"journal\.jsonl, line 2: not a journal entry"):
        Journal(path)


def test_one_run_at_a_time(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    with Journal(path), pytest.raises(NlueError, match="in use by another run"):
        Journal(path)
    Journal(path).close()  # released on close


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
