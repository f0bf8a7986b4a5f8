"""`nlue contamination`: planted test items found in a generated corpus, every input format, one process or two."""

from __future__ import annotations

import gzip
import importlib.util
import json
import random
import sys
from pathlib import Path
from types import ModuleType

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import nlue.corpus_blocks as corpus_blocks
from nlue.cli import main
from nlue.evals.contamination.findings_file import BadFindingsFile, contaminated_items, read_findings
from nlue.evals.contamination.items import dataset_tasks, task_items
from nlue.results import read_results

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "contamination_corpus.py"


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("contamination_corpus", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def planted(sample_build, bench: ModuleType, tmp_path_factory: pytest.TempPathFactory):
    """The sample's test items, a plan of which to plant how, a 3,000-line corpus and the translated rows."""
    repo = str(sample_build.repo_dir)
    items = [item for task in dataset_tasks(repo, None, "test") for item in task_items(repo, task, "test")]
    rng = random.Random(32)
    plan = bench.make_plan(items, rng)
    work = tmp_path_factory.mktemp("contamination")
    lines = list(bench.documents(items, plan, 3000, rng))
    corpus = work / "corpus.txt"
    corpus.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    sources = bench.write_sources(work / "sources", sample_build.repo_dir, plan)
    return repo, items, plan, lines, corpus, sources, work


def _run(*argv: str) -> int:
    return main(["contamination", "-q", *argv])


def _records(path: Path) -> dict[tuple[str, object], dict]:
    data = read_findings(path)
    return {(task, r["id"]): r for task, entry in data["tasks"].items() for r in entry["items"]}


def test_every_planted_item_is_found_and_nothing_else(planted, capsys) -> None:
    """issue 32, item 1: verbatim items found, edited ones by character n-grams only, sources by the source check,
    and no other item flagged."""
    repo, items, plan, _, corpus, sources, work = planted
    out = work / "found.json"
    assert _run("--dataset", repo, "--corpus", str(corpus), "--sources", str(sources), "--out", str(out)) == 0
    shown = capsys.readouterr().out
    assert "by word n-grams" in shown and "source in corpus" in shown and f"written: {out}" in shown
    records = _records(out)
    assert len(records) == len(items) and len(plan.verbatim) == len(plan.edited) == len(plan.sourced) >= 10
    # An item that shares a whole field with a planted one (the sample's cr items pair one sentence with two
    # others) is in the corpus too: found or not, it is no false alarm.
    planted_texts = {
        text for item in items if (item.task, item.id) in plan.verbatim | plan.edited for text in item.texts
    }
    sharing = {(i.task, i.id) for i in items if set(i.texts) & planted_texts} - plan.verbatim - plan.edited
    assert len(sharing) < 5
    for key, record in records.items():
        if key in plan.verbatim:
            assert record["verdict"] == "contaminated" and record["char"] == 1.0, key
            assert record["documents"]["char"], key
        elif key in plan.edited:
            assert "char" in record["found_by"] and "word" not in record["found_by"], (key, record)
        elif key not in sharing:
            assert record["verdict"] != "contaminated", (key, record)
        assert record["source_in_corpus"] is (key in plan.sourced), (key, record)
    found = {(t, i) for t, ids in contaminated_items(out).items() for i in ids}
    assert plan.verbatim | plan.edited <= found <= plan.verbatim | plan.edited | sharing
    with_source = contaminated_items(out, key="input_sha256", measures=("source",))
    assert sum(map(len, with_source.values())) == len(plan.sourced)


def test_word_n_grams_find_the_verbatim_items_that_have_them(planted) -> None:
    """issue 32, item 1: the word measure alone (a huge character threshold) still finds verbatim items long enough
    for a word n-gram, and names the corpus line that holds each."""
    repo, items, plan, lines, corpus, _, work = planted
    out = work / "words.json"
    assert _run("--dataset", repo, "--corpus", str(corpus), "--char-threshold", "1", "--out", str(out)) == 0
    records = _records(out)
    long_enough = [k for k in plan.verbatim if records[k]["word"] is not None]
    assert long_enough
    for key in long_enough:
        assert "word" in records[key]["found_by"]
        line = int(records[key]["documents"]["word"][0].rpartition(":")[2])
        item = next(i for i in items if (i.task, i.id) == key)
        assert item.texts[0] in lines[line - 1]


def _formats(corpus: Path, folder: Path) -> dict[str, Path]:
    texts = corpus.read_text(encoding="utf-8").splitlines()
    made = folder / "formats"
    (made / "folder").mkdir(parents=True)
    (made / "c.jsonl").write_text("".join(json.dumps({"content": t, "id": f"doc{i}"}, ensure_ascii=False) + "\n"
                                          for i, t in enumerate(texts)), encoding="utf-8")  # fmt: skip
    pq.write_table(pa.table({"content": texts}), made / "c.parquet", row_group_size=500)
    with gzip.open(made / "c.jsonl.gz", "wt", encoding="utf-8") as handle:
        handle.write((made / "c.jsonl").read_text(encoding="utf-8"))
    half = len(texts) // 2
    (made / "folder" / "a.txt").write_text("\n".join(texts[:half]) + "\n", encoding="utf-8")
    pq.write_table(pa.table({"content": texts[half:]}), made / "folder" / "b.parquet")
    return {"text": corpus, "jsonl": made / "c.jsonl", "parquet": made / "c.parquet",
            "gzip": made / "c.jsonl.gz", "folder": made / "folder"}  # fmt: skip


def test_every_format_and_two_processes_find_the_same(planted, monkeypatch) -> None:
    """issue 32, item 1: text, JSONL, Parquet, gzip and a folder give the same verdicts and ratios; --num-proc 2
    gives the same file as one process, with the workers reading blocks of the text and JSONL files themselves."""
    monkeypatch.setattr(corpus_blocks, "MIN_BLOCK_BYTES", 8192)  # many blocks: their order matters
    repo, _, _, _, corpus, _, work = planted
    summaries = {}
    made = _formats(corpus, work)
    for name, path in made.items():
        out = work / f"{name}.json"
        field = [] if name == "text" else ["--text-field", "content"]
        assert _run("--dataset", repo, "--corpus", str(path), *field, "--out", str(out)) == 0
        summaries[name] = {k: (r["verdict"], r["word"], r["char"]) for k, r in _records(out).items()}
        if name == "jsonl":
            assert {d for r in _records(out).values() for d in r["documents"]["char"]} <= {
                f"doc{i}" for i in range(3000)
            }
    assert all(summary == summaries["text"] for summary in summaries.values())
    # gzip is read by the command's process, the others in blocks (Parquet: row groups) by the workers
    for name, like in (("text", "text"), ("jsonl", "jsonl"), ("gzip", "jsonl"), ("parquet", "parquet"),
                       ("folder", "folder")):  # fmt: skip
        field = [] if name == "text" else ["--text-field", "content"]
        two = work / f"two-{name}.json"
        assert _run("--dataset", repo, "--corpus", str(made[name]), *field, "--num-proc", "2", "--out", str(two)) == 0
        assert read_findings(work / f"{like}.json")["tasks"] == read_findings(two)["tasks"]


@pytest.mark.parametrize(
    ("name", "content", "extra", "expected"),
    [
        ("bad.txt", b"fine\n\xff\xfe broken\n", [], "bad.txt: line 2: not UTF-8 text"),
        ("bad.jsonl", b'{"text": "a"}\n{"body": "b"}\n', [], "line 2: field 'text' missing; the record has 'body'"),
        ("bad.jsonl", b'{"text": "a"}\nnot json\n', [], "line 2: not a JSON object"),
        ("bad.jsonl", b'{"text": 5}\n', [], "field 'text' not text (int)"),
    ],
)
def test_bad_corpus_input_is_named_and_exits_2(sample_build, tmp_path, capsys, name, content, extra, expected) -> None:
    """issue 32, item 1: a line that is not UTF-8, a record without the field, a line that is not JSON: exit 2."""
    path = tmp_path / name
    path.write_bytes(content)
    assert _run("--dataset", str(sample_build.repo_dir), "--tasks", "sa", "--corpus", str(path), *extra,
                "--out", str(tmp_path / "o.json")) == 2  # fmt: skip
    assert expected in capsys.readouterr().err
    assert not (tmp_path / "o.json").exists()


def test_a_missing_corpus_or_column_exits_2(sample_build, tmp_path, capsys) -> None:
    """issue 32, item 1: a corpus that is not there, and a Parquet file without the text column."""
    repo = str(sample_build.repo_dir)
    assert _run("--dataset", repo, "--tasks", "sa", "--corpus", str(tmp_path / "nope.txt")) == 2
    assert "nope.txt: no such file or folder" in capsys.readouterr().err
    pq.write_table(pa.table({"body": ["x"]}), tmp_path / "c.parquet")
    assert _run("--dataset", repo, "--tasks", "sa", "--corpus", str(tmp_path / "c.parquet")) == 2
    assert "c.parquet: no column 'text'; its columns: body" in capsys.readouterr().err


def test_the_findings_file_is_checked_when_read_and_passed_by_results_readers(planted, tmp_path) -> None:
    """issue 32, item 1: a tampered file is refused naming the field; the default place is skipped by read_results."""
    repo, _, _, _, corpus, _, _ = planted
    results = tmp_path / "results"
    assert _run("--dataset", repo, "--tasks", "sa", "--corpus", str(corpus), "--results-dir", str(results)) == 0
    (written,) = (results / "contamination").rglob("*.json")
    assert written.name == "corpus.txt-tasks-sa.json" and list(read_results(results)) == []
    data = json.loads(written.read_text(encoding="utf-8"))
    data["tasks"]["sa"]["items"][0]["verdict"] = "contaminated"
    written.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(BadFindingsFile, match=r"tasks\.sa\.items\[0\]\.verdict"):
        read_findings(written)
    data["tasks"]["sa"]["items"][0].update(verdict="clean", char=1.5)
    written.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(BadFindingsFile, match=r"items\[0\]\.char: expected a share"):
        read_findings(written)
    written.write_text(json.dumps({**data, "schema_version": 2}), encoding="utf-8")
    with pytest.raises(BadFindingsFile, match="schema_version"):
        contaminated_items(written)


def test_a_check_of_some_tasks_or_another_split_never_replaces_the_whole_test_sets(planted, tmp_path) -> None:
    """A check of the whole test set, then of one task, then of another split, against the same corpus: each in a
    file of its own (the whole check had been replaced by the partial one's, which the report then read)."""
    repo, _, _, _, corpus, _, _ = planted
    results = tmp_path / "results"
    assert _run("--dataset", repo, "--corpus", str(corpus), "--results-dir", str(results)) == 0
    (whole,) = (results / "contamination").rglob("*.json")
    before = whole.read_bytes()
    assert _run("--dataset", repo, "--tasks", "sa", "--corpus", str(corpus), "--results-dir", str(results)) == 0
    assert _run("--dataset", repo, "--tasks", "sa", "--split", "validation", "--corpus", str(corpus),
                "--results-dir", str(results)) == 0  # fmt: skip
    names = sorted(path.name for path in (results / "contamination").rglob("*.json"))
    assert names == ["corpus.txt-tasks-sa.json", "corpus.txt-validation-tasks-sa.json", "corpus.txt.json"]
    assert whole.read_bytes() == before and len(read_findings(whole)["tasks"]) > 1


def test_a_gmet_sentence_with_its_word_in_place_is_found_by_both_measures(sample_build, tmp_path) -> None:
    """issue 32, item 3: a GMET item holds its blank as [MASK], which no corpus holds; the check fills the blank with
    the item's first accepted answer, so a corpus copy of the sentence with that word in place is found by word and
    by character n-grams with a full share; one with another accepted word is still found by its characters. An
    item without answers is checked as the two sides of its blank."""
    from nlue.data.access import load_task
    from nlue.evals.contamination.items import check_texts
    from nlue.registry.tasks import TASKS

    task = TASKS["gmet"]
    rows = list(load_task(str(sample_build.repo_dir), task)["test"])
    first, second = rows[0], rows[1]
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(f"एउटा कथाबाट: {first['sentence'].replace('[MASK]', first['answers'][0])} (उद्धृत)\n"
                      f"{second['sentence'].replace('[MASK]', second['answers'][1])}\nअरू कुनै पाठ\n",
                      encoding="utf-8")  # fmt: skip
    out = tmp_path / "gmet.json"
    assert _run("--dataset", str(sample_build.repo_dir), "--tasks", "gmet", "--corpus", str(corpus), "--out",
                str(out)) == 0  # fmt: skip
    records = [r for (task_name, _), r in _records(out).items() if task_name == "gmet"]
    assert records[0]["found_by"] == ["word", "char"] and records[0]["char"] == 1.0 and records[0]["word"] == 1.0
    assert "char" in records[1]["found_by"] and 0.5 <= records[1]["char"] < 1.0
    assert all(r["verdict"] != "contaminated" for r in records[2:])
    left, right = first["sentence"].split("[MASK]")
    assert check_texts(task, {**first, "answers": []}) == (left.strip(), right.strip())
    assert check_texts(task, first) == (first["sentence"].replace("[MASK]", first["answers"][0]),)
