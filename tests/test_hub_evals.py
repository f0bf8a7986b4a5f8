"""The Hub's benchmark file (eval.yaml) of a built dataset and a model's .eval_results entries (offline).

The shapes checked are the Hub's documented ones: huggingface/hub-docs docs/hub/eval-results.md
("Eval.yaml specification") and eval_results.yaml; the entries round-trip through huggingface_hub's
own EvalResultEntry / eval_result_entries_to_yaml / parse_eval_result_entries.
"""

from __future__ import annotations

import json
import shutil

import pytest
import yaml
from huggingface_hub import EvalResultEntry, eval_result_entries_to_yaml, parse_eval_result_entries

from nlue.cli import main
from nlue.data.hub_benchmark import benchmark_problems, card_configs, read_benchmark_file
from nlue.data.hub_eval_results import entries_problems, eval_results_file, read_eval_results
from nlue.results import RunResult

# The specification's own examples (hub-docs docs/hub/eval-results.md and eval_results.yaml), as data.
SPEC_MINIMAL = {"name": "MathArena AIME 2026", "description": "The AIME.", "evaluation_framework": "math-arena",
                "tasks": [{"id": "MathArena/aime_2026"}]}  # fmt: skip
SPEC_INSPECT = {
    "name": "HLE", "description": "A benchmark.", "evaluation_framework": "inspect-ai",
    "tasks": [{"id": "hle", "config": "default", "split": "test", "field_spec": {"input": "question", "target": "answer"},
               "solvers": [{"name": "generate"}], "scorers": [{"name": "model_graded_fact"}]}],
}  # fmt: skip
SPEC_ENTRIES = yaml.safe_load("""
- dataset: {id: cais/hle, task_id: default, revision: 5503434ddd753f426f4b38109466949a1217c2bb}
  value: 20.90
  verifyToken: eyJhbGciOi
  date: "2025-01-15"
  source: {url: "https://huggingface.co/spaces/SaylorTwift/smollm3-mmlu-pro", name: Eval traces, user: SaylorTwift}
  notes: no-tools
- dataset: {id: Idavidrein/gpqa, task_id: gpqa_diamond}
  value: 0.412
""")


def test_a_build_carries_the_hubs_benchmark_file_read_back_and_checked(sample_build, exam_build) -> None:
    """issue 30, item 5: eval.yaml beside the card's YAML configs: every config and its test split, framework nlue."""
    for build in (sample_build, exam_build):
        repo = build.repo_dir
        data = read_benchmark_file(repo)  # checked against the specification and the card's configs
        assert data is not None and set(data) == {"name", "description", "evaluation_framework", "tasks"}
        assert data["evaluation_framework"] == "nlue" and "SAMPLE DATA" in data["description"]
        configs = card_configs(repo)
        assert [task["config"] for task in data["tasks"]] == list(build.configs)  # registry order
        assert set(configs) == set(build.configs)
        assert all(task["id"] == task["config"] and task["split"] == "test" for task in data["tasks"])
        assert all("test" in configs[task["config"]] for task in data["tasks"])
        card = (repo / "README.md").read_text("utf-8")
        assert data["name"].endswith("(sample data)") and data["name"] in card
        assert "`eval.yaml` makes it a benchmark on the Hub, with one leaderboard per config" in card
    assert "sa macro_f1" in read_benchmark_file(sample_build.repo_dir)["description"]  # the leaderboard value
    assert benchmark_problems(SPEC_MINIMAL) == [] and benchmark_problems(SPEC_INSPECT) == []


def test_a_benchmark_file_that_breaks_the_format_gets_every_problem(sample_build) -> None:
    """issue 30, item 5: the checker reports each departure from the specification at once."""
    bad = {"name": "", "evaluation_framework": "nlue", "leaderboard": True,
           "tasks": [{"id": "sa", "config": "sa"}, {"id": "sa", "config": "nope"}, {"config": "cola", "split": "dev"},
                     "qnli"]}  # fmt: skip
    problems = benchmark_problems(bad, card_configs(sample_build.repo_dir))
    assert problems == [
        "leaderboard: not in the Hub's eval.yaml specification",
        "name: required, a non-empty string",
        "description: required, a non-empty string",
        "tasks[1].id: 'sa' is used by an earlier task; each task is its own leaderboard",
        "tasks[1].config: 'nope' is not a config of the dataset card",
        "tasks[2].id: required, a non-empty string",
        "tasks[2].split: config 'cola' has no 'dev' split in the dataset card",
        "tasks[3]: expected a mapping with id (and config, split)",
    ]
    inspect = {**SPEC_INSPECT, "tasks": [{"id": "hle"}]}
    assert benchmark_problems(inspect) == [f"tasks[0].{key}: required with evaluation_framework inspect-ai"
                                           for key in ("field_spec", "solvers", "scorers")]  # fmt: skip


def test_push_dry_run_shows_the_benchmark_file_and_refuses_a_broken_one(sample_build, tmp_path, capsys) -> None:
    """issue 30, item 5: `nlue push --dry-run` of a dataset shows eval.yaml's tasks; a bad one stops the push."""
    assert main(["push", str(sample_build.repo_dir), "--repo-id", "org/nlue", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "  eval.yaml  (" in out and "evaluation_framework nlue, 12 tasks (leaderboards):" in out
    assert "    stsb: config stsb, split test" in out and "    gmet: config gmet, split test" in out
    assert "lm-evaluation-harness runs cola, cr, mnli" in out and "--dataset org/nlue" in out
    repo = tmp_path / "nlue"
    shutil.copytree(sample_build.repo_dir, repo)
    (repo / "eval.yaml").write_text("name: x\ntasks:\n- id: sa\n  config: squad\n", encoding="utf-8")
    assert main(["push", str(repo), "--repo-id", "org/nlue", "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert "eval.yaml: not a benchmark file the Hub takes (3 problems)" in err
    assert "tasks[0].config: 'squad' is not a config of the dataset card" in err


def _result(**changes) -> RunResult:
    base = {"task": "sa", "model": "org/xlmr-sa", "kind": "fine-tune",
            "metrics": {"accuracy": 0.8125, "macro_f1": 0.7904761904761906},
            "dataset": {"id": "org/nlue", "config": "sa", "split": "test", "is_sample": False}}  # fmt: skip
    return RunResult(**{**base, **changes})


def test_a_results_file_becomes_hub_eval_results_that_round_trip_through_huggingface_hub(tmp_path) -> None:
    """issue 30, item 5: .eval_results entries from a results file: dataset id, task id, its own primary score."""
    result = _result()
    planned, reason = eval_results_file(
        result.to_dict(), "org/nlue", "https://huggingface.co/org/xlmr-sa", "Model card"
    )
    assert reason == "" and planned is not None and planned.path == ".eval_results/nlue_sa.yaml"
    data = yaml.safe_load(planned.text)
    assert entries_problems(data) == [] and entries_problems(SPEC_ENTRIES) == []
    (entry,) = parse_eval_result_entries(data)
    assert entry == planned.entries[0] and eval_result_entries_to_yaml([entry]) == data
    assert entry.value == result.primary_score == 0.7904761904761906  # the file's own number, as stored
    assert (entry.dataset_id, entry.task_id) == ("org/nlue", "sa") and entry.verify_token is None
    assert entry.date == result.created and isinstance(data[0]["date"], str)  # quoted, not a YAML date
    assert entry.source_url == "https://huggingface.co/org/xlmr-sa" and entry.notes.startswith("macro_f1 (0-1 scale)")
    path = tmp_path / "e.yaml"
    path.write_text(planned.text, encoding="utf-8")
    assert read_eval_results(path) == [entry]
    llm = _result(kind="zero-shot", hyperparameters={"mode": "generate", "prompt_language": "ne", "shots": 0})
    planned, _ = eval_results_file(llm.to_dict(), "org/nlue")
    assert planned.path == ".eval_results/nlue_sa_generate_prompt-language-ne_0-shot.yaml"
    assert "zero-shot, generate, prompt language ne, 0-shot" in planned.entries[0].notes


@pytest.mark.parametrize(
    ("changes", "dataset_id", "whole", "why"),
    [
        ({"dataset": {"id": "nlue sample data", "split": "test", "is_sample": True}}, "org/nlue", True, "SAMPLE"),
        ({"kind": "diagnostic"}, "org/nlue", True, "diagnostic"),
        ({"task": "gmet", "metrics": {"combined": 0.5}, "verdicts": "human"}, "org/nlue", True, "human-judged"),
        ({}, "org/nlue", False, "part of the test split"),
        ({"dataset": {"id": "org/nlue", "split": "validation"}}, "org/nlue", True, "'validation' split"),
        ({}, "build/nlue", True, "not a Hub dataset id"),
        ({}, None, True, "not named"),
    ],
)
def test_only_a_score_a_leaderboard_can_rank_is_written(changes, dataset_id, whole, why, tmp_path, monkeypatch):
    """issue 30, item 5: sample data, diagnostics, human verdicts, partial or other splits, local data: none, and why."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "build" / "nlue").mkdir(parents=True)  # a local build, named as `--dataset build/nlue` names it
    planned, reason = eval_results_file(_result(**changes).to_dict(), dataset_id, whole_split=whole)
    assert planned is None and why in reason


def test_an_eval_results_file_that_breaks_the_format_gets_every_problem() -> None:
    """issue 30, item 5: the checker reports each departure from eval_results.yaml at once."""
    data = yaml.safe_load("""
- dataset: {id: build/local/nlue, config: sa}
  value: "0.8"
  date: 2025-01-15
  source: {name: traces}
  metric: accuracy
""")
    assert entries_problems(data) == [
        "[0].metric: not in the Hub's eval results specification",
        "[0].dataset.config: not in the specification",
        "[0].dataset.id: required, the benchmark's Hub dataset id (owner/name)",
        "[0].dataset.task_id: required, a non-empty string",
        "[0].value: required, a finite number (the metric's value)",
        "[0].date: a string when given (quoted: YAML reads a bare date as a date)",
        "[0].source.url: required with a source, a link",
    ]
    assert EvalResultEntry(dataset_id="cais/hle", task_id="hle", value=1.0).source_url is None


def test_push_dry_run_of_a_model_folder_shows_its_eval_results(tmp_path, capsys) -> None:
    """issue 30, item 5: `nlue push --repo-type model --dry-run` lists .eval_results/ and what each entry says."""
    folder = tmp_path / "model"
    (folder / ".eval_results").mkdir(parents=True)
    (folder / "README.md").write_text("---\nlicense: mit\n---\n# m\n", encoding="utf-8")
    planned, _ = eval_results_file(_result().to_dict(), "org/nlue")
    (folder / planned.path).write_text(planned.text, encoding="utf-8")
    (folder / ".eval_results" / ".partial.yaml.tmp").write_text("", encoding="utf-8")  # a dot-file stays home
    assert main(["push", str(folder), "--repo-id", "org/xlmr-sa", "--repo-type", "model", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "  .eval_results/nlue_sa.yaml  (" in out and ".partial" not in out
    assert "    nlue_sa.yaml: org/nlue task sa = 0.7904761904761906, notes: macro_f1 (0-1 scale)" in out
    (folder / planned.path).write_text("- dataset: {id: org/nlue}\n  value: high\n", encoding="utf-8")
    assert main(["push", str(folder), "--repo-id", "org/xlmr-sa", "--repo-type", "model", "--dry-run"]) == 2
    assert "(2 problems)" in capsys.readouterr().err


def test_submit_lists_each_models_eval_results_and_opens_a_pull_request_on_request(
    sample_build, tmp_path, monkeypatch, capsys
) -> None:
    """issue 30, item 5: `nlue submit` shows the checked scores as .eval_results for each model repo."""
    import nlue.data.access

    release = tmp_path / "release"
    shutil.copytree(sample_build.repo_dir, release)
    card = release / "README.md"
    card.write_text(card.read_text(encoding="utf-8").replace("sample-data", "release"), encoding="utf-8")
    results = tmp_path / "results"
    assert main(["baseline", "--tasks", "sa,rte", "--dataset", str(release), "--bootstrap", "0",
                 "--results-dir", str(results), "--name", "tfidf", "-q"]) == 0  # fmt: skip
    run = results / "tfidf"
    stored = json.loads((run / "sa.json").read_text(encoding="utf-8"))
    local = main(["submit", str(run), "--repo-id", "org/results", "--release", str(release), "--dry-run"])
    assert local == 0 and "baseline:tfidf (sa): none: not a model repo on the Hub" in capsys.readouterr().out
    for name in ("sa.json", "rte.json"):  # as if a Hub model had made these predictions
        data = json.loads((run / name).read_text(encoding="utf-8"))
        (run / name).write_text(json.dumps({**data, "model": "org/tfidf-nlue"}), encoding="utf-8")
    load_task = nlue.data.access.load_task  # the release on the Hub, read here from its local copy
    monkeypatch.setattr(nlue.data.access, "load_task", lambda dataset, task: load_task(
        str(release) if dataset == "org/nlue" else dataset, task))  # fmt: skip
    assert main(["submit", str(run), "--repo-id", "org/results", "--release", "org/nlue", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "the Hub's evaluation results for the model repos (a pull request on each with --eval-results-pr):" in out
    assert (f"  org/tfidf-nlue (sa): .eval_results/nlue_sa.yaml: org/nlue task sa = {stored['primary_score']}, "
            "notes: macro_f1 (0-1 scale), baseline") in out  # fmt: skip
    assert "source https://huggingface.co/datasets/org/results" in out and "dry run: nothing was sent" in out
    sent = []

    class FakeApi:
        def list_repo_files(self, repo_id, repo_type=None):  # what a command reads first: the release's task files
            return ["README.md", "sa/test-00000-of-00001.parquet"]

        def create_commit(self, repo_id, operations, **kwargs):
            sent.append((repo_id, {op.path_in_repo: op.path_or_fileobj for op in operations}, kwargs))
            return type("Info", (), {"pr_url": f"https://huggingface.co/{repo_id}/discussions/1"})()

    monkeypatch.setattr("huggingface_hub.HfApi", FakeApi)
    assert main(["submit", str(run), "--repo-id", "org/results", "--release", "org/nlue", "--eval-results-pr"]) == 0
    (results_repo, _, first), (model, files, second) = sent
    assert results_repo == "org/results" and first["repo_type"] == "dataset"
    assert model == "org/tfidf-nlue" and second["repo_type"] == "model" and second["create_pr"] is True
    assert sorted(files) == [".eval_results/nlue_rte.yaml", ".eval_results/nlue_sa.yaml"]
    entries = parse_eval_result_entries(yaml.safe_load(files[".eval_results/nlue_sa.yaml"].decode("utf-8")))
    assert [(e.dataset_id, e.task_id, e.value) for e in entries] == [("org/nlue", "sa", stored["primary_score"])]
    assert "evaluation results pull request: https://huggingface.co/org/tfidf-nlue/discussions/1" in (
        capsys.readouterr().out
    )
