"""A run's identity (issue 29, items 1-3): a partial run never replaces a complete one, a result of another
identity is refused unless --overwrite, the journal keys on what answers (not on a model's name), and every
file a command writes is strict JSON with null for a metric that cannot be computed, and its reason."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from nlue.cli import main
from tests.answer_store import cache_text, stored

pytest.importorskip("transformers")
pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _read(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _strict(text: str) -> object:
    def refuse(constant: str) -> object:
        raise ValueError(f"{constant} is not JSON")

    return json.loads(text, parse_constant=refuse)


# ------------------------------------------------------------------ item 1: partial runs, other identities
def _llm(model: Path, dataset: Path, results: Path, *extra: str) -> int:
    return main(["llm", "nlue", "--model", str(model), "--dataset", str(dataset), "--tasks", "sa", "--bootstrap", "0",
                 "--results-dir", str(results), "--name", "lm", "-q", *extra])  # fmt: skip


def test_a_limited_run_has_a_folder_of_its_own_and_leaves_the_full_result_alone(
    tiny_lms, sample_build, tmp_path: Path
) -> None:
    """issue 29, item 1: `nlue llm nlue ... --limit 3` after a full run no longer rewrites the full result."""
    full = tmp_path / "lm__en-0shot" / "sa.json"
    assert _llm(tiny_lms["gpt2"], sample_build.repo_dir, tmp_path) == 0
    before = full.read_bytes()
    assert _llm(tiny_lms["gpt2"], sample_build.repo_dir, tmp_path, "--limit", "3") == 0
    assert full.read_bytes() == before  # the complete run is untouched
    kept, partial = _read(full), _read(tmp_path / "lm__en-0shot-limit3" / "sa.json")
    assert kept["identity"]["complete"] is True and kept["identity"]["items"] == kept["identity"]["split_items"] == 10
    assert partial["identity"]["complete"] is False and partial["identity"]["limit"] == 3
    assert partial["identity"]["items"] == 3 and partial["dataset"]["items"] == 3
    # The two differ only in the limit: the same model, weights, data and settings.
    same = ("model", "model_fingerprint", "dataset_fingerprint", "mode", "shots", "prompt_language", "seed")
    assert all(kept["identity"][k] == partial["identity"][k] for k in same)
    assert kept["identity"]["model_fingerprint"].startswith("sampled-sha256:")
    assert len(kept["identity_key"]) == 16 and kept["identity_key"] != partial["identity_key"]


def test_the_writer_refuses_a_partial_or_different_run_says_what_differs_and_how_to_overwrite(
    tiny_lms, sample_build, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """issue 29, item 1: replacing a complete result with a partial one, or with one of another identity, is refused
    (exit 2, before any request) unless --overwrite; the same run again replaces it quietly."""
    from nlue.evals.llm.nlue_llm import nlue_tasks, run_nlue_llm
    from nlue.lm.factory import load_model
    from nlue.lm.spec import ModelSpec
    from nlue.results import ResultExists

    full = tmp_path / "lm__en-0shot" / "sa.json"
    assert _llm(tiny_lms["gpt2"], sample_build.repo_dir, tmp_path) == 0
    before = full.read_bytes()
    # A partial run told to write into the complete run's folder (a script calling the evaluator itself).
    model = load_model(ModelSpec(str(tiny_lms["gpt2"]), show_progress=False))
    with pytest.raises(ResultExists, match=r"complete run \(10 of 10 items\).*partial \(3 of 10 items\).*--overwrite"):
        run_nlue_llm(model, str(sample_build.repo_dir), nlue_tasks(["sa"], "en"), "en", 0, tmp_path, "lm__en-0shot",
                     bootstrap_resamples=0, limit=3)  # fmt: skip
    assert full.read_bytes() == before
    capsys.readouterr()
    # Another identity (the seed) in the same folder: refused, with what differs and how to overwrite.
    assert _llm(tiny_lms["gpt2"], sample_build.repo_dir, tmp_path, "--seed", "7") == 2
    err = capsys.readouterr().err
    assert "seed: 42 there, 7 in this run" in err and "--overwrite" in err and "Traceback" not in err
    assert full.read_bytes() == before
    # Another model in the same folder (another fingerprint), refused the same way.
    assert main(["llm", "nlue", "--model", str(tiny_lms["llama"]), "--dataset", str(sample_build.repo_dir), "--tasks",
                 "sa", "--bootstrap", "0", "--results-dir", str(tmp_path), "--name", "lm", "-q"]) == 2  # fmt: skip
    assert "model_fingerprint: " in capsys.readouterr().err
    # The same run again replaces quietly; --overwrite replaces another identity.
    assert _llm(tiny_lms["gpt2"], sample_build.repo_dir, tmp_path) == 0
    assert "not replaced" not in capsys.readouterr().err
    assert _llm(tiny_lms["gpt2"], sample_build.repo_dir, tmp_path, "--seed", "7", "--overwrite") == 0
    assert _read(full)["identity"]["seed"] == 7


def _identity(**changes: object) -> dict:
    from nlue.run_identity import SplitFacts, run_identity

    facts = SplitFacts("d" * 64, split_items=10, items=int(changes.pop("items", 10)))  # type: ignore[arg-type]
    answerer = {"backend": "transformers", "model": "m", "model_fingerprint": "sampled-sha256:aa", "endpoint": None}
    fields = {"mode": "loglik", "shots": 0, "prompt_language": "en", "limit": None, "seed": 42, **changes}
    return run_identity("sa", answerer, facts, **fields)  # type: ignore[arg-type]


def test_what_may_replace_what() -> None:
    """issue 29, item 1: the rule itself, case by case."""
    from nlue.run_identity import identity_key, replacement_refusal

    complete, partial = _identity(), _identity(limit=3, items=3)
    assert replacement_refusal({"identity": complete}, _identity()) is None  # the same run again
    assert "partial" in str(replacement_refusal({"identity": complete}, partial))
    assert replacement_refusal({"identity": partial}, complete) is None  # a complete run replaces its partial one
    assert replacement_refusal({"identity": partial}, _identity(limit=3, items=3)) is None
    assert "limit" in str(replacement_refusal({"identity": _identity(limit=5, items=5)}, partial))
    assert "seed: 42 there, 1 in this run" in str(replacement_refusal({"identity": complete}, _identity(seed=1)))
    assert replacement_refusal({"task": "sa"}, complete) is None  # written before identities: a complete run replaces
    assert "without a run identity" in str(replacement_refusal({"task": "sa"}, partial))
    assert identity_key(complete) == identity_key(json.loads(json.dumps(complete)))
    # `nlue train` then `nlue evaluate` of the checkpoint it wrote: one checkpoint, the same items.
    trained = {**_identity(mode="fine-tune"), "checkpoint": {"path": "runs/x", "fingerprint": "sampled-sha256:bb"}}
    scored = {**_identity(mode="classify"), "model": "runs/x", "model_fingerprint": "sampled-sha256:bb"}
    assert replacement_refusal({"identity": trained}, scored) is None  # those very weights scored again
    assert replacement_refusal({"identity": scored}, trained) is None  # a training run rewriting runs/x
    other = {**scored, "model": "runs/y", "model_fingerprint": "sampled-sha256:cc"}
    assert "another identity" in str(replacement_refusal({"identity": trained}, other))


def test_a_tasks_declaration_is_part_of_a_runs_identity(tmp_path: Path) -> None:
    """Issue 30, item 2 (leftover 3): the task's declaration fingerprint is in the identity and its key, for shipped
    and user tasks: an edit of the prompts, labels, label words or metrics makes another identity, an edit of the
    title, description or citation does not, and the copy a build carries fingerprints as the file it came from."""
    from nlue.registry.declaration import task_fingerprint
    from nlue.registry.task_file.carry import carried_text
    from nlue.registry.task_file.load import load_task_file
    from nlue.registry.tasks import TASKS, registered_task_files
    from nlue.run_identity import identity_key, replacement_refusal
    from tests.user_task_files import write_ur_sentiment

    shipped = {name: task_fingerprint(task) for name, task in TASKS.items()}
    assert len(set(shipped.values())) == len(shipped) and _identity()["task_fingerprint"] == shipped["sa"]
    path = write_ur_sentiment(tmp_path)
    original = path.read_text(encoding="utf-8")
    first = load_task_file(path)

    def edited(old: str, new: str) -> str:
        assert old in original
        path.write_text(original.replace(old, new), encoding="utf-8")
        return task_fingerprint(load_task_file(path))

    described = original.replace("title: ", "title: Edited ").replace("description: ", "description: Edited ")
    path.write_text(described, encoding="utf-8")
    assert task_fingerprint(load_task_file(path)) == task_fingerprint(first)  # words about the task
    instruction = first.prompts["ur"].instruction
    assert edited(instruction, instruction + " جواب دیں") != task_fingerprint(first)  # a prompt
    assert edited("label_field: label\n", "label_field: label\nprimary_metric: accuracy\n") != task_fingerprint(first)
    label_word = first.prompts["en"].label_words[0]
    assert edited(f"{label_word},", f"{label_word}ly,") != task_fingerprint(first)  # a label word
    path.write_text(original, encoding="utf-8")
    carried = tmp_path / "carried.yaml"  # as `nlue build` writes it into the dataset (no data:, its benchmark)
    carried.write_text(carried_text(first), encoding="utf-8")
    assert task_fingerprint(load_task_file(carried)) == task_fingerprint(first)
    # In a run's identity, through the registry: the edited prompt is another identity, said so.
    with registered_task_files([path]):
        before = _identity_of("ur_sentiment")
    path.write_text(original.replace(instruction, instruction + " جواب دیں"), encoding="utf-8")
    with registered_task_files([path]):
        after = _identity_of("ur_sentiment")
    assert identity_key(before) != identity_key(after)
    assert "task_fingerprint: " in str(replacement_refusal({"identity": before}, after))


def _identity_of(task: str, **changes: object) -> dict:
    from nlue.run_identity import SplitFacts, run_identity

    answerer = {"backend": "transformers", "model": "m", "model_fingerprint": "sampled-sha256:aa", "endpoint": None}
    fields = {"mode": "loglik", "shots": 0, "prompt_language": "en", "limit": None, "seed": 42, **changes}
    return run_identity(task, answerer, SplitFacts("d" * 64, 10, 10), **fields)  # type: ignore[arg-type]


def test_a_result_written_before_the_task_fingerprint_counts_it_as_unknown() -> None:
    """Issue 30, item 2 (leftover 3): a results file of identity version 1 (no task_fingerprint) keeps its key; a
    complete run that agrees on the rest replaces it, a partial one or one that differs elsewhere does not."""
    from nlue.run_identity import identity_key, replacement_refusal

    older = {k: v for k, v in _identity().items() if k != "task_fingerprint"} | {"version": 1}
    assert identity_key(older) == _key_as_version_1(older)  # the key it was written with
    assert replacement_refusal({"identity": older}, _identity()) is None  # unknown there, the rest the same
    partial = {k: v for k, v in _identity(limit=3, items=3).items() if k != "task_fingerprint"}
    assert "before run identities recorded task_fingerprint" in str(
        replacement_refusal({"identity": partial}, _identity(limit=3, items=3))
    )
    refused = str(replacement_refusal({"identity": older}, _identity(seed=1)))
    assert "seed: 42 there, 1 in this run" in refused and "task_fingerprint" not in refused


def _key_as_version_1(identity: dict) -> str:
    """identity_key as version 1 computed it (its key fields, without task_fingerprint)."""
    import hashlib

    names = ("task", "split", "model", "backend", "model_fingerprint", "endpoint", "mode", "shots", "prompt_language",
             "limit", "seed", "dataset_fingerprint", "demonstrations_fingerprint", "settings")  # fmt: skip
    text = json.dumps({n: identity.get(n) for n in names}, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


# ------------------------------------------------------------------ item 2: the answer cache keys on what answers
def test_answers_from_one_server_never_stand_for_anothers(
    transformers_serve, sample_build, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """issue 29, item 2: answers journalled from a real server; the same command against a port where nothing
    listens must not exit 0 from the journal (nor write a result naming that port)."""
    from nlue.lm.serve import free_port

    url, model = transformers_serve
    served = ["llm", "nlue", "--model", str(model), "--dataset", str(sample_build.repo_dir), "--tasks", "sa",
              "--mode", "generate", "--limit", "2", "--max-new-tokens", "4", "--concurrency", "1", "--bootstrap", "0",
              "--results-dir", str(tmp_path), "--journal", str(tmp_path / "answers.sqlite"), "-q"]  # fmt: skip
    assert main([*served, "--endpoint", url, "--name", "live"]) == 0
    dead = f"http://user:secret-word@127.0.0.1:{free_port()}/v1"
    code = main([*served, "--endpoint", dead, "--name", "dead", "--max-retries", "0"])
    assert code != 0, "answered from another server's journal"
    assert "Connection refused" in capsys.readouterr().err or code == 1
    assert not list(tmp_path.glob("dead*/sa.json"))
    lines = stored(tmp_path / "answers.sqlite")
    assert lines and {line["answerer"]["endpoint"] for line in lines} == {url}
    assert "secret-word" not in cache_text(tmp_path / "answers.sqlite")
    saved = _read(tmp_path / "live__en-0shot-generate-limit2" / "sa.json")["identity"]
    assert saved["endpoint"] == url and saved["model"] == str(model) and saved["model_fingerprint"] is None


def test_a_model_retrained_into_the_same_folder_is_asked_again(tmp_path: Path) -> None:
    """issue 29, item 2: the key follows the weights (a folder's sampled fingerprint), not the folder's name."""
    from nlue.lm.description import Capabilities, ModelDescription
    from nlue.lm.fingerprint import folder_fingerprint
    from nlue.lm.journal import JournalledCall

    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "config.json").write_text('{"model_type": "gpt2"}', encoding="utf-8")
    weights = bytearray(3 * 2**20)  # larger than a whole-file hash: sampled
    (folder / "model.safetensors").write_bytes(bytes(weights))
    (folder / "README.md").write_text("a card", encoding="utf-8")

    class Local:
        def describe(self) -> ModelDescription:
            return ModelDescription("transformers", f"hf:{folder}", str(folder), Capabilities(generate=True))

    requests = [{"prompt": "नमस्ते", "stop": [], "max_new_tokens": 4}]
    first = JournalledCall(None, Local(), "generate", {}, requests).keys
    (folder / "README.md").write_text("another card", encoding="utf-8")  # not the weights: the same model
    assert JournalledCall(None, Local(), "generate", {}, requests).keys == first
    (folder / "model.safetensors").write_bytes(bytes([1]) * len(weights))  # retrained: the weights change throughout
    assert JournalledCall(None, Local(), "generate", {}, requests).keys != first
    assert folder_fingerprint(folder).startswith("sampled-sha256:")
    named = JournalledCall(None, f"hf:{folder}", "generate", {}, requests).keys  # a name alone is another key
    assert named != first


# ------------------------------------------------------------------ item 3: strict JSON, null with a reason
@pytest.fixture(scope="module")
def written(tmp_path_factory, tiny_lms, sample_build, exam_build, nediom_build) -> Path:
    """A representative set of commands on the sample with tiny models, all into one results folder."""
    root = tmp_path_factory.mktemp("strict")
    out = root / "results"
    nlue, exams, idioms = (str(b.repo_dir) for b in (sample_build, exam_build, nediom_build))
    lm = ["--model", str(tiny_lms["llama"]), "--bootstrap", "20"]
    runs = [
        ["llm", "nlue", *lm, "--dataset", nlue, "--tasks", "sa", "rte", "--mode", "generate", "--max-new-tokens",
         "4", "--limit", "6"],
        ["llm", "nlue", *lm, "--dataset", nlue, "--tasks", "sa", "--mode", "loglik", "--limit", "6"],
        ["llm", "mcq", *lm, "--dataset", exams, "--task", "mcq_ne", "--mode", "generate", "--max-new-tokens", "4",
         "--limit", "6", "--no-chart"],
        ["llm", "mcq", *lm, "--dataset", exams, "--task", "mcq_ne", "--mode", "loglik", "--limit", "6", "--no-chart"],
        ["idioms", "eval", *lm, "--dataset", idioms, "--setting", "zero-shot", "--context", "S2", "--idiom", "with",
         "--mode", "generate", "--max-new-tokens", "4", "--limit", "6"],
        ["gmet", "--model", "baseline:bigram", "--limit", "12", "--out", str(root / "gmet"), "--bootstrap", "20"],
        ["baseline", "--tasks", "sa,stsb", "--dataset", nlue, "--bootstrap", "20"],
    ]  # fmt: skip
    for argv in runs:
        assert main([*argv, "--results-dir", str(out), "-q"]) == 0, argv
    return root


def test_every_file_the_commands_write_is_strict_json(written: Path) -> None:
    """issue 29, item 3: no NaN or Infinity in any results, predictions, raw outputs or run file."""
    files = [p for p in written.rglob("*") if p.suffix in (".json", ".jsonl") and p.is_file()]
    assert len(files) > 20
    for path in files:
        text = path.read_text(encoding="utf-8")
        for line in [text] if path.suffix == ".json" else [t for t in text.splitlines() if t.strip()]:
            _strict(line)  # raises on NaN, Infinity, -Infinity


def test_a_metric_that_cannot_be_computed_is_null_with_its_reason(written: Path) -> None:
    """issue 29, item 3: nothing parsed (tiny random models answer nonsense): the parseable-only numbers are null,
    and the file says why; every results file records its identity."""
    results = written / "results"
    generated = _read(results / "llama__en-0shot-generate-limit6" / "sa.json")
    assert generated["metrics"]["accuracy_parseable"] is None
    assert "no answer could be parsed" in generated["details"]["null_metrics"]["accuracy_parseable"]
    exam = _read(results / "llama__en-0shot-limit6" / "mcq_ne.json")
    assert exam["metrics"]["accuracy_parseable"] is None and "accuracy_parseable" in exam["details"]["null_metrics"]
    assert all(row["accuracy_parseable"] is None for row in exam["details"]["tables"]["domain"])
    for path in results.rglob("*.json"):
        data = _read(path)
        if "task" in data and "schema_version" in data:
            assert data["identity"]["dataset_fingerprint"] and data["identity_key"], path
            nulls = {k for k, v in data["metrics"].items() if v is None}
            assert nulls == set(data["details"].get("null_metrics", {})), path


def test_readers_take_null_metrics(written: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """issue 29, item 3: the report, the leaderboard and compare read results with null metrics without failing."""
    from nlue.boards.leaderboard import result_rows

    results = written / "results"
    assert main(["report", str(results), "--out", str(tmp_path / "site"), "--resamples", "20", "-q"]) == 0
    assert (tmp_path / "site" / "index.html").is_file()
    board = result_rows(results)
    assert any(row.model.startswith("llama__en-0shot-generate") for row in board.rows)
    capsys.readouterr()
    runs = [str(results / "llama__en-0shot-generate-limit6"), str(results / "llama__en-0shot-limit6")]
    assert main(["compare", *runs, "--tasks", "sa", "--resamples", "20", "--json", str(tmp_path / "c.json")]) == 0
    _strict((tmp_path / "c.json").read_text(encoding="utf-8"))


def test_an_undefined_correlation_is_null_and_leaves_the_nlue_score() -> None:
    """issue 29, item 3: constant predictions give no correlation: null with its reason, never NaN; the NLUE score
    counts such a task as missing instead of becoming NaN."""
    from nlue.results import RunResult
    from nlue.scores import nlue_score, score_task
    from nlue.strict_json import dumps

    metrics = score_task("stsb", [2.5] * 6, [0.0, 1.0, 2.0, 3.0, 4.0, 5.0], bootstrap_resamples=20, seed=0)
    assert math.isnan(metrics["pearson"])  # the maths keep SciPy's convention
    result = RunResult(task="stsb", model="m", kind="baseline", metrics=dict(metrics))
    assert result.metrics["pearson"] is None and result.primary_score is None
    assert "do not vary" in result.details["null_metrics"]["pearson"] or "same value" in result.details[
        "null_metrics"]["pearson"]  # fmt: skip
    _strict(dumps(result.to_dict()))
    score = nlue_score({"stsb": result.metrics, "sa": {"macro_f1": 0.5, "accuracy": 0.5}}, ["sa", "stsb"])
    assert score.score == 0.5 and score.missing == ("stsb",)
    with pytest.raises(ValueError, match="not JSON"):
        _strict('{"a": NaN}')
