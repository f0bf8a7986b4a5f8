"""`nlue translate` through the engine's OpenAI-compatible backend, against a scripted loopback server.

The scripted server of :mod:`tests.lm_fault_server` answers chat requests here as a
translator would (each item's text rewritten into Devanagari letters, deterministically,
so the expected rows are known), and injects faults: on the wire (HTTP 500, a timeout, a
body cut short, a body that is not JSON: retried by the engine) and in the answer (a
count that is wrong once or always, JSON cut at the token cap, prose around the JSON:
retried, split and finally rejected by the schedule). A run killed with SIGKILL and
resumed writes exactly what an uninterrupted run writes, asking nothing twice.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import nlue.process_map as process_map
import tests.lm_fault_server as fault_server
from nlue.cli import main as nlue_main
from nlue.translate.cli import main as translate_main
from tests.answer_store import count_answers, stored
from tests.lm_fault_server import FaultServer, tokens_of

GLUE = Path(__file__).parent / "data" / "glue"
ONCE: set[str] = set()  # answer faults already given once


def fake_nepali(text: str) -> str:
    """The scripted 'translation': every Latin letter becomes a Devanagari consonant, the rest stays."""
    return "".join(chr(0x0915 + ord(c.lower()) - 97) if c.isascii() and c.isalpha() else c for c in text)


def _items(content: str) -> list[dict[str, Any]]:
    return json.loads(content.split("Items:\n", 1)[1])


def _translated(text: str, item: dict[str, Any]) -> str:
    """An item marked [english] comes back untranslated, one marked [cyrillic] with a Russian word in it, one
    marked [invisible] as a zero-width joiner alone (read as an answer, empty after the builder's rules)."""
    marks = json.dumps(item)
    if "[english]" in marks:
        return text
    if "[invisible]" in marks:
        return "\u200d"
    return fake_nepali(text) + (" привет" if "[cyrillic]" in marks else "")


def back_to_latin(text: str) -> str:
    """The scripted back-translation: the inverse of :func:`fake_nepali` (in lower case)."""
    return "".join(chr(ord(c) - 0x0915 + 97) if 0x0915 <= ord(c) < 0x0915 + 26 else c for c in text)


def translation_body(request: dict[str, Any]) -> dict[str, Any]:
    content = request["messages"][-1]["content"]
    if content.startswith("Translate this Nepali text into English"):
        return _chat(request, back_to_latin(content.split("\n\n", 1)[1]), "stop")
    items = _items(content)
    answer = [{k: (v if k == "n" else _translated(v, item)) for k, v in item.items()} for item in items]
    if "Review round" in content:
        answer = [{k: (v if k == "n" else "संशोधित " + v) for k, v in item.items()} for item in answer]
    finish = "stop"
    if "[count-once]" in content and "count-once" not in ONCE:
        ONCE.add("count-once")
        answer = answer[:-1]
    if "[count-always]" in content:
        answer = answer[:-1]
    text = json.dumps(answer, ensure_ascii=False)
    if "[truncate]" in content:
        text, finish = text[: len(text) // 2], "length"
    elif "[prose]" in content:
        text = "Here are the translations you asked for:\n" + text
    elif "[fenced]" in content:
        text = "```json\n" + text + "\n```"
    return _chat(request, text, finish)


def _chat(request: dict[str, Any], text: str, finish: str) -> dict[str, Any]:
    prompt_tokens = sum(len(tokens_of(m["content"])) for m in request["messages"])
    return {
        "id": "chatcmpl-t",
        "object": "chat.completion",
        "created": 0,
        "model": request.get("model", "m"),
        "choices": [{"index": 0, "finish_reason": finish, "message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": len(tokens_of(text)),
                  "total_tokens": prompt_tokens + len(tokens_of(text))},
    }  # fmt: skip


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FaultServer]:
    monkeypatch.setattr(fault_server, "_chat_body", translation_body)
    ONCE.clear()
    scripted = FaultServer().start()
    yield scripted
    scripted.stop()


def _translate(server: FaultServer, source: Path, out: Path, *extra: str) -> int:
    argv = ["--task", "rte", "--source", str(source), "--endpoint", server.base_url, "--model", "tiny",
            "--out", str(out), "--timeout", "1", "-q", *extra]  # fmt: skip
    return translate_main(argv)


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _rte_source(path: Path, sentences: list[tuple[str, str, str]]) -> Path:
    lines = ["index\tsentence1\tsentence2\tlabel"] + [
        f"{i}\t{a}\t{b}\t{label}" for i, (a, b, label) in enumerate(sentences)
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_well_formed_run_with_wire_faults_builds(server: FaultServer, tmp_path: Path, capsys) -> None:
    server.state.script = ["500", "sleep:3", "truncated", "malformed"]  # each retried by the engine
    out = tmp_path / "work"
    assert _translate(server, GLUE / "RTE.train.tsv", out, "--batch-size", "4", "--concurrency", "2") == 0
    rows = _rows(out / "rte" / "train.translated.jsonl")
    source = [line.split("\t") for line in (GLUE / "RTE.train.tsv").read_text().splitlines()[1:]]
    assert len(rows) == 12
    for row, (index, first, second, label) in zip(rows, source, strict=True):
        assert row["sentence1"] == fake_nepali(first) and row["sentence2"] == fake_nepali(second)
        assert row["label"] == label  # attached after translation, by name
        provenance = row["provenance"]
        assert provenance["source_id"] == index and provenance["source_text"]["sentence1"] == first
        assert provenance["model"] == "openai:tiny" and provenance["prompt_version"] == "nlue-translate-v1"
        assert provenance["batch"] == f"{label}-000{1 + int(index) // 8}"
    asked = [r.body for r in server.state.records if r.fault == "ok"]
    assert len(asked) == 4  # 6 rows of each class in batches of 4: 4 + 2, twice
    labels = {first: label for _, first, _, label in source}
    for body in asked:
        sent = json.dumps(body, ensure_ascii=False)
        assert "entailment" not in sent and '"label"' not in sent  # labels never leave the process
        items = _items(body["messages"][-1]["content"])
        assert len({labels[item["sentence1"]] for item in items}) == 1  # one class per request
    report = json.loads((out / "_translate" / "rte-train" / "report.json").read_text())
    assert report["rows"]["written"] == 12 and report["schedule"]["failed_answers"] == {}
    assert report["class_balance"]["before"] == report["class_balance"]["after"] == {
        "entailment": 6, "not_entailment": 6}  # fmt: skip
    usage = report["translator"]["model"]["usage"]
    assert usage["responses"] == 4 and usage["prompt_tokens"] > 0 and usage["completion_tokens"] > 0
    assert "12 rows written of 12 read" in capsys.readouterr().out
    # the builder takes the folder as it is: the run's own files sit in _translate/, which it skips
    build = tmp_path / "build"
    assert nlue_main(["build", "--source", str(out), "--configs", "rte", "--out", str(build), "-q"]) == 0
    import datasets

    built = datasets.load_dataset(str(build / "nlue"), "rte")
    assert built["train"].num_rows + built["validation"].num_rows == 12
    texts = set(built["train"]["sentence1"]) | set(built["validation"]["sentence1"])
    assert texts == {fake_nepali(first) for _, first, _, _ in source}


def test_answer_faults_are_retried_split_and_rejected(server: FaultServer, tmp_path: Path) -> None:
    rows = [
        (f"Entailing premise number {i}{m}.", f"Claim {i}.", "entailment")
        for i, m in enumerate(["", " [count-once]", "", "", " [count-always]", "", "", " [fenced]"])
    ]
    rows += [(f"Other premise number {i}{m}.", f"Other claim {i}.", "not_entailment")
             for i, m in enumerate(["", " [truncate]", " [prose]", ""])]  # fmt: skip
    source = _rte_source(tmp_path / "train.tsv", rows)
    out = tmp_path / "work"
    assert _translate(server, source, out, "--batch-size", "4", "--concurrency", "3") == 0
    written = _rows(out / "rte" / "train.translated.jsonl")
    assert [r["provenance"]["source_id"] for r in written] == ["0", "1", "2", "3", "5", "6", "7", "8", "11"]
    work = out / "_translate" / "rte-train"
    rejects = {r["row"]: r for r in _rows(work / "rejects.jsonl")}
    assert sorted(rejects) == [5, 10, 11] and {r["stage"] for r in rejects.values()} == {"translate"}
    assert rejects[5]["reason"] == "count mismatch: 1 items sent, 0 returned (translated alone, tried 2 times)"
    assert rejects[10]["reason"].startswith("not valid JSON") and "reached the token cap" in rejects[10]["reason"]
    assert rejects[11]["reason"].startswith("not valid JSON") and rejects[11]["value"] == "not_entailment-0001/2.1"
    report = json.loads((work / "report.json").read_text())
    assert report["schedule"]["failed_answers"] == {"count mismatch": 7, "invalid JSON": 10}
    assert report["schedule"]["requests"] == len(server.state.records) == 22
    assert report["rows"]["rejected_in_translation"] == 3 and report["rows"]["written"] == 9
    assert report["script_filter"]["rows_with_latin_words"] == 0
    assert report["class_balance"] == {"before": {"entailment": 8, "not_entailment": 4},
                                       "after": {"entailment": 7, "not_entailment": 2}}  # fmt: skip
    # a second run answers everything from the answer cache: nothing is asked, the same rows come out
    before = len(server.state.records)
    first = (out / "rte" / "train.translated.jsonl").read_bytes()
    assert _translate(server, source, out, "--batch-size", "4") == 0
    assert len(server.state.records) == before
    assert (out / "rte" / "train.translated.jsonl").read_bytes() == first


def test_a_refused_request_is_split_and_a_failing_server_stops_the_run(
    server: FaultServer, tmp_path: Path, capsys
) -> None:
    rows = [(f"Premise {i}{' [bad]' if i == 1 else ''}.", f"Claim {i}.", "entailment") for i in range(4)]
    source = _rte_source(tmp_path / "train.tsv", rows)
    server.state.rules = {"[bad]": "400"}  # refused: given up at once by the engine, split by the schedule
    out = tmp_path / "work"
    assert _translate(server, source, out, "--batch-size", "4", "--retries", "0") == 0
    rejects = _rows(out / "_translate" / "rte-train" / "rejects.jsonl")
    assert [r["row"] for r in rejects] == [2] and "HTTP 400" in rejects[0]["reason"]
    assert len(_rows(out / "rte" / "train.translated.jsonl")) == 3
    server.state.rules = {"Premise": "500"}
    code = _translate(
        server, source, tmp_path / "dead", "--batch-size", "1", "--max-retries", "0", "--concurrency", "1"
    )
    assert code == 2 and not (tmp_path / "dead" / "rte").exists()  # nothing half-written, no row rejected
    assert "kept failing" in capsys.readouterr().err
    server.state.rules = {}
    assert _translate(server, source, tmp_path / "dead", "--batch-size", "1") == 0
    assert len(_rows(tmp_path / "dead" / "rte" / "train.translated.jsonl")) == 4


def test_cli_says_what_is_missing(tmp_path: Path, capsys) -> None:
    source = GLUE / "RTE.train.tsv"
    assert translate_main(["--task", "rte", "--source", str(source), "--out", str(tmp_path)]) == 2
    assert "give either --endpoint and --model" in capsys.readouterr().err
    assert translate_main(["--task", "rte", "--source", str(tmp_path / "no.tsv"), "--mt-model", "x",
                           "--out", str(tmp_path)]) == 2  # fmt: skip
    assert "file not found" in capsys.readouterr().err
    argv = ["--task", "rte", "--source", str(GLUE / "RTE.train.tsv"), "--split", "test", "--mt-model", "x"]
    assert translate_main([*argv, "--out", str(tmp_path)]) == 2
    assert nlue_main(["translate", "--help"]) == 0
    assert "--mt-model" in capsys.readouterr().out


def test_the_script_filter_rejects_english_and_other_scripts(server: FaultServer, tmp_path: Path) -> None:
    rows = [
        ("The first premise.", "A claim.", "entailment"),
        ("The second premise [english].", "Claim.", "entailment"),
        ("The third premise [cyrillic].", "Claim.", "entailment"),
        ("The fourth premise.", "Claim.", "entailment"),
    ]
    source = _rte_source(tmp_path / "train.tsv", rows)
    out = tmp_path / "work"
    assert _translate(server, source, out) == 0
    assert [r["provenance"]["source_row"] for r in _rows(out / "rte" / "train.translated.jsonl")] == [1, 4]
    rejects = _rows(out / "_translate" / "rte-train" / "rejects.jsonl")
    assert [(r["row"], r["stage"]) for r in rejects] == [(2, "quality"), (3, "quality")]
    assert rejects[0]["reason"] == "untranslated: 0% of the letters are Devanagari (at least 80% expected)"
    assert rejects[1]["reason"] == "other script: letters of cyrillic (12)"
    # --min-devanagari 0 keeps the English row; another script is never kept
    assert _translate(server, source, tmp_path / "lenient", "--min-devanagari", "0") == 0
    report = json.loads((tmp_path / "lenient" / "_translate" / "rte-train" / "report.json").read_text())
    assert report["rows"]["written"] == 3 and report["rows"]["rejected_by_script_filter"] == 1
    assert report["script_filter"]["rows_with_latin_words"] == 1
    assert report["script_filter"]["most_frequent_latin_words"]["Claim"] == 1


def test_checks_on_two_processes_write_the_same_bytes_as_one(
    server: FaultServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    """issue 31, item 5: `nlue translate --num-proc 2` checks the rows on two processes and writes the same files,
    rejects (read, check and quality stages, each naming file and row) and report as one process."""
    monkeypatch.setattr(process_map, "DEFAULT_CHUNK_ITEMS", 4)  # many chunks from a few rows
    marks = ["", "", "[english]", "", "[cyrillic]", "", "[invisible]", ""]
    rows = [(f"Premise {i} about the river {marks[i % len(marks)]}.", f"Claim {i}.", ("entailment", "not_entailment")[i % 3 == 0])
            for i in range(40)]  # fmt: skip
    source = _rte_source(tmp_path / "train.tsv", rows)
    lines = source.read_text(encoding="utf-8").splitlines()
    lines[5] += "\tan extra cell"  # rejected on reading, as are an unknown label and an empty premise
    lines[12] = lines[12].replace("not_entailment", "maybe").replace("\tentailment", "\tmaybe")
    lines[20] = "20\t \tA claim.\tentailment"
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    written = {}
    for num_proc in ("1", "2"):
        out = tmp_path / f"np{num_proc}"
        # --no-cache: both runs ask the server, so what they print and report is comparable
        assert _translate(server, source, out, "--batch-size", "8", "--num-proc", num_proc, "--no-cache") == 0
        printed = capsys.readouterr().out.replace(str(out), "OUT")
        files = {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
        report = json.loads(files.pop("_translate/rte-train/report.json"))
        report.pop("output"), report["translator"]["model"].pop("pace")  # the server's measured speed
        written[num_proc] = (files, report, printed)
    assert written["1"] == written["2"]
    files, report, _ = written["1"]
    rejects = [json.loads(line) for line in files["_translate/rte-train/rejects.jsonl"].decode().splitlines()]
    assert {r["stage"] for r in rejects} == {"read", "check", "quality"}
    assert all(r["file"] == str(source) and r["row"] >= 1 for r in rejects)
    assert report["rows"]["rejected_in_check"] == 5 and report["rows"]["written"] > 20


KILLED_RUN = "import sys; from nlue.translate.cli import main; sys.exit(main(sys.argv[1:]))"


def test_a_run_killed_with_sigkill_resumes_to_exactly_the_uninterrupted_rows(
    server: FaultServer, tmp_path: Path, answer_cache: Path
) -> None:
    rows = [(f"Premise {i} about the {w} market.", f"Claim {i}.", ("entailment", "not_entailment")[i % 3 == 0])
            for i, w in enumerate(["old", "new", "night", "fish", "fruit", "book"] * 7)]  # fmt: skip
    source = _rte_source(tmp_path / "train.tsv", rows)
    common = ["--task", "rte", "--source", str(source), "--endpoint", server.base_url, "--model", "tiny",
              "--batch-size", "2", "--concurrency", "2", "--timeout", "5", "-q"]  # fmt: skip
    killed = tmp_path / "killed"
    journal = answer_cache
    server.state.delay = 0.05
    child = subprocess.Popen([sys.executable, "-c", KILLED_RUN, *common, "--out", str(killed)])
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and child.poll() is None:
        if count_answers(journal) >= 6:
            break
        time.sleep(0.02)
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    time.sleep(0.2)  # requests in flight reach the server's records
    server.state.delay = 0.0
    kept = {entry["request"]["messages"][-1]["content"] for entry in stored(journal)}
    assert 6 <= len(kept) < 21, "the run must be killed mid-way"
    assert not (killed / "rte").exists()  # the output is written whole at the end, or not at all
    before = len(server.state.records)
    assert translate_main([*common, "--out", str(killed)]) == 0
    asked_again = [r.body["messages"][-1]["content"] for r in server.state.records[before:]]
    assert not kept & set(asked_again) and len(asked_again) == len(set(asked_again))  # nothing asked twice
    assert len(kept) + len(asked_again) == 21  # 14 + 7 rows in batches of 2: nothing lost
    whole = tmp_path / "whole"
    assert translate_main([*common, "--out", str(whole), "--no-cache"]) == 0  # asked afresh, not read back
    output = Path("rte") / "train.translated.jsonl"
    assert (killed / output).read_bytes() == (whole / output).read_bytes()
    assert len(_rows(whole / output)) == 42


def test_garbage_from_a_real_server_ends_as_counted_rejects(transformers_serve, tmp_path: Path) -> None:
    """`transformers serve` with a tiny random model answers gibberish: every row is rejected, none crashes."""
    url, model = transformers_serve
    out = tmp_path / "work"
    argv = ["--task", "rte", "--source", str(GLUE / "RTE.train.tsv"), "--endpoint", url, "--model", str(model),
            "--out", str(out), "--batch-size", "3", "--retries", "0", "--tokens-per-row", "4", "--limit", "6",
            "--concurrency", "2", "--timeout", "60", "-q"]  # fmt: skip
    assert translate_main(argv) == 0
    assert _rows(out / "rte" / "train.translated.jsonl") == []
    rejects = _rows(out / "_translate" / "rte-train" / "rejects.jsonl")
    assert [r["row"] for r in rejects] == [1, 2, 3, 4, 5, 6] and all(r["stage"] == "translate" for r in rejects)
    report = json.loads((out / "_translate" / "rte-train" / "report.json").read_text())
    failed = report["schedule"]["failed_answers"]
    assert sum(failed.values()) == report["schedule"]["requests"] == 2 * (1 + 2 + 2)  # 3 -> 1 + 2 -> 1 + 1
    assert report["rows"]["rejected_in_translation"] == 6
