"""Issue 30, item 2: the commands that make or score runs, end to end on tasks nlue does not ship.

An Urdu review-sentiment task, a Nepali five-topic news task and a Sinhala arithmetic exam
(tests/user_tasks.py), each built from its task file, are fine-tuned (one run, two seeds, a search),
put to a tiny causal LM by log-likelihood and by generation (`llm nlue`, `llm mcq`), exported to
lm-evaluation-harness and run there, and swept by a roster that names a task file. Tiny random models,
a few items each: the numbers mean nothing; that every command takes the user's task is the point.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

pytest.importorskip("torch")
pytest.importorskip("transformers")

from nlue.cli import main
from nlue.registry.label_prompts import ANSWER_LINES
from tests.answer_store import stored
from tests.user_task_files import write_ne_idioms, write_ne_topic, write_si_exam, write_ur_sentiment

SRC = Path(__file__).resolve().parents[1] / "src"


@pytest.fixture(scope="module")
def tasks(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The four task files, each built by `nlue build --task-file`, and a tiny encoder."""
    from nlue.lm.tiny import save_tiny_encoder

    folder = tmp_path_factory.mktemp("user-tasks")
    files = {"ur_sentiment": write_ur_sentiment(folder), "ne_topic": write_ne_topic(folder),
             "si_exam": write_si_exam(folder), "ne_idioms": write_ne_idioms(folder)}  # fmt: skip
    out = folder / "build"
    for path in files.values():
        assert main(["build", "--task-file", str(path), "--out", str(out), "-q"]) == 0
    encoder = save_tiny_encoder(folder / "encoder", "bert", seed=0)
    return {"files": files, "builds": {name: out / name for name in files}, "encoder": encoder, "root": folder}


def _journal_requests(results: Path) -> list[dict[str, Any]]:
    """Every request the test's runs asked (the per-test answer cache; ``results`` is no longer where it is)."""
    from nlue.lm.answer_cache import cache_path

    return [entry["request"] for entry in stored(cache_path())]


def test_fine_tuning_a_user_task_with_seeds_from_a_built_dataset_alone(tasks: dict[str, Any], tmp_path: Path) -> None:
    """Issue 30, item 2: `nlue train --task ne_topic --dataset REPO --seeds 2`: the repo's carried file is enough."""
    argv = ["train", "--model", str(tasks["encoder"]), "--task", "ne_topic", "--dataset", str(tasks["builds"]["ne_topic"]),
            "--output_dir", str(tmp_path / "run"), "--results_dir", str(tmp_path / "results"), "--num_train_epochs", "1",
            "--per_device_train_batch_size", "8", "--seeds", "2", "--bootstrap_resamples", "0", "-q"]  # fmt: skip
    assert main(argv) == 0
    result = json.loads(next((tmp_path / "results").glob("*/ne_topic.json")).read_text(encoding="utf-8"))
    assert result["task"] == "ne_topic" and result["details"]["seeds"] == [42, 43]
    assert result["metrics"]["macro_f1"] >= 0.0


def test_fine_tuning_from_an_arguments_file_that_names_the_task_file(
    tasks: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 30, item 2: `nlue train args.yaml` with task_file in it (no command line to scan), on a dataset that
    does not carry the file."""
    bare = tmp_path / "bare"
    shutil.copytree(tasks["builds"]["ur_sentiment"], bare)
    shutil.rmtree(bare / "tasks")
    arguments = {"model_name_or_path": str(tasks["encoder"]), "task": "ur_sentiment", "dataset": str(bare),
                 "task_file": [str(tasks["files"]["ur_sentiment"])], "output_dir": str(tmp_path / "run"),
                 "results_dir": str(tmp_path / "results"), "num_train_epochs": 1, "bootstrap_resamples": 0}  # fmt: skip
    path = tmp_path / "args.yaml"
    path.write_text(yaml.safe_dump(arguments, allow_unicode=True), encoding="utf-8")
    assert main(["train", str(path), "-q"]) == 0
    assert next((tmp_path / "results").glob("*/ur_sentiment.json")).is_file()
    argv = ["evaluate", "--model", str(tmp_path / "run"), "--task", "ur_sentiment", "--dataset", str(bare),
            "--task-file", str(tasks["files"]["ur_sentiment"]), "--results-dir", str(tmp_path / "scored"),
            "--bootstrap", "0", "-q"]  # fmt: skip
    assert main(argv) == 0  # `nlue evaluate` scores the checkpoint on the user's task
    assert next((tmp_path / "scored").glob("*/ur_sentiment.json")).is_file()
    assert "NLUE score" not in capsys.readouterr().out  # NLUE's mean is over NLUE's tasks, never a task file's


def test_a_search_over_a_user_task(tasks: dict[str, Any], tmp_path: Path) -> None:
    """Issue 30, item 2: `nlue search` (k-fold cross-validation) on a user's task, named with --task-file."""
    argv = ["search", "--model", str(tasks["encoder"]), "--task", "ur_sentiment", "--task-file",
            str(tasks["files"]["ur_sentiment"]), "--dataset", str(tasks["builds"]["ur_sentiment"]), "--folds", "2",
            "--learning_rates", "1e-4", "--batch_sizes", "8", "--presets", "current", "--skip_final",
            "--num_train_epochs", "1", "--output_dir", str(tmp_path / "run"), "-q"]  # fmt: skip
    assert main(argv) == 0
    trials = sorted(p.name for p in (tmp_path / "run" / "search" / "trials").glob("*.json"))
    assert trials == ["I-lr0.0001-bs8-fold0.json", "I-lr0.0001-bs8-fold1.json"]  # one grid point, two folds


@pytest.mark.parametrize("mode", ["loglik", "generate"])
def test_a_causal_lm_is_asked_the_task_files_prompts(
    tasks: dict[str, Any], tiny_lms, tmp_path: Path, mode: str
) -> None:
    """Issue 30, item 2: `llm nlue` in both modes, in the tasks' own languages: the prompts are the task files';
    a generating model is told the label words by the file's answer line (Urdu) or the shipped one (Nepali)."""
    results = tmp_path / "results"
    common = ["llm", "nlue", "--model", str(tiny_lms["gpt2"]), "--prompt-language", "native", "--mode", mode,
              "--limit", "2", "--results-dir", str(results), "--bootstrap", "0", "--max-new-tokens", "4", "-q"]  # fmt: skip
    urdu = ["--dataset", str(tasks["builds"]["ur_sentiment"]), "--tasks", "ur_sentiment", "--task-file",
            str(tasks["files"]["ur_sentiment"])]  # fmt: skip
    assert main([*common, *urdu]) == 0
    assert main([*common, "--dataset", str(tasks["builds"]["ne_topic"]), "--tasks", "ne_topic"]) == 0
    suffix = "-generate" if mode == "generate" else ""
    assert (results / f"gpt2__ur-0shot{suffix}-limit2" / "ur_sentiment.json").is_file()
    assert (results / f"gpt2__ne-0shot{suffix}-limit2" / "ne_topic.json").is_file()
    prompts = [
        request.get("context") or json.dumps(request, ensure_ascii=False) for request in _journal_requests(results)
    ]
    assert any("اس تبصرے میں رائے منفی ہے، غیر جانبدار ہے یا مثبت؟" in p for p in prompts)
    assert any("यो समाचार शीर्षक कुन विषयको हो?" in p for p in prompts)
    if mode == "generate":
        assert any("صرف ان میں سے ایک لفظ لکھیں: منفی، غیرجانبدار، مثبت۔" in p for p in prompts)
        shipped = ANSWER_LINES["ne"].render(("राजनीति", "खेलकुद", "अर्थतन्त्र", "मौसम", "शिक्षा"))
        assert any(json.dumps(shipped, ensure_ascii=False)[1:-1] in p for p in prompts)


def test_a_rerun_with_reworded_prompts_is_another_run(
    tasks: dict[str, Any], tiny_lms, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 30, item 2 (leftover 3): the task file's declaration is part of a run's identity, so a rerun after its
    prompt was reworded is refused (exit 2, saying task_fingerprint differs) instead of silently taking the old
    result's place; --overwrite replaces it, and the new file records the new fingerprint."""
    original = tasks["files"]["ur_sentiment"]
    reworded = original.with_name("ur_sentiment_reworded.yaml")  # beside it: its data paths stay right
    text = original.read_text(encoding="utf-8")
    reworded.write_text(text.replace("Is the opinion in this review", "Is the feeling in this review"), "utf-8")
    argv = ["llm", "nlue", "--model", str(tiny_lms["gpt2"]), "--dataset", str(tasks["builds"]["ur_sentiment"]),
            "--tasks", "ur_sentiment", "--mode", "loglik", "--limit", "2", "--results-dir", str(tmp_path),
            "--bootstrap", "0", "-q"]  # fmt: skip
    assert main([*argv, "--task-file", str(original)]) == 0
    result = tmp_path / "gpt2__en-0shot-limit2" / "ur_sentiment.json"
    first = json.loads(result.read_text(encoding="utf-8"))
    assert main([*argv, "--task-file", str(original)]) == 0  # the same run again: replaced quietly
    capsys.readouterr()
    assert main([*argv, "--task-file", str(reworded)]) == 2
    err = capsys.readouterr().err
    assert "task_fingerprint: " in err and "--overwrite" in err
    assert json.loads(result.read_text(encoding="utf-8"))["identity_key"] == first["identity_key"]
    assert main([*argv, "--task-file", str(reworded), "--overwrite"]) == 0
    second = json.loads(result.read_text(encoding="utf-8"))
    assert second["identity"]["task_fingerprint"] != first["identity"]["task_fingerprint"]


@pytest.mark.parametrize("mode", ["generate", "loglik"])
def test_a_user_exam_in_both_modes(tasks: dict[str, Any], tiny_lms, tmp_path: Path, mode: str) -> None:
    """Issue 30, item 2: `llm mcq` on a Sinhala exam declared in a task file (its dataset carries the file)."""
    argv = ["llm", "mcq", "--model", str(tiny_lms["gpt2"]), "--dataset", str(tasks["builds"]["si_exam"]), "--task",
            "si_exam", "--mode", mode, "--limit", "2", "--max-new-tokens", "8", "--results-dir", str(tmp_path),
            "--bootstrap", "0", "--no-chart", "-q"]  # fmt: skip
    assert main(argv) == 0
    run = next(p for p in tmp_path.iterdir() if p.name.startswith("gpt2__en-0shot"))
    result = json.loads((run / "si_exam.json").read_text(encoding="utf-8"))
    assert result["task"] == "si_exam" and result["dataset"]["items"] == 2


SINHALA_LABELS = ("විෂය:", "මට්ටම:", "ප්‍රශ්නය:")  # si_exam's own subject, level and question labels


@pytest.mark.parametrize("mode", ["generate", "loglik"])
def test_a_user_exam_prompted_in_its_own_language(tasks: dict[str, Any], tiny_lms, tmp_path: Path, mode: str,
                                                   capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    """Issue 30, item 2 (leftover 1): `llm mcq --prompt-language native` on a Sinhala exam, a language nlue ships
    no prompt words for: the prompt (its preview, the requests, the stop sequence) is the task file's Sinhala."""
    common = ["llm", "mcq", "--model", str(tiny_lms["gpt2"]), "--dataset", str(tasks["builds"]["si_exam"]),
              "--task", "si_exam", "--mode", mode, "--prompt-language", "native", "--limit", "2"]  # fmt: skip
    assert main([*common, "--show-prompt", "--no-chat", "--shots", "1", "-q"]) == 0
    shown = capsys.readouterr().out
    assert "si prompt · 1-shot" in shown and "පහත ප්‍රශ්නයට නිවැරදි පිළිතුර තෝරන්න." in shown
    assert all(shown.count(label) == 4 for label in SINHALA_LABELS)  # 2 items, each after 1 demonstration
    argv = [*common, "--max-new-tokens", "8", "--results-dir", str(tmp_path), "--bootstrap", "0", "--no-chart", "-q"]
    assert main(argv) == 0
    suffix = "-loglik" if mode == "loglik" else ""
    result = json.loads((tmp_path / f"gpt2__si-0shot{suffix}-limit2" / "si_exam.json").read_text(encoding="utf-8"))
    assert result["hyperparameters"]["prompt_language"] == "si" and result["dataset"]["items"] == 2
    requests = [json.dumps(request, ensure_ascii=False) for request in _journal_requests(tmp_path)]
    assert len(requests) == (2 if mode == "generate" else 8)  # 2 items; by log-likelihood, 4 options each
    assert all(all(label in r for label in SINHALA_LABELS) and "Subject:" not in r for r in requests)
    if mode == "generate":
        assert result["hyperparameters"]["stop"] == ["\nවිෂය:"]


@pytest.mark.parametrize("mode", ["loglik", "generate"])
def test_a_user_idiomaticity_task_is_asked_in_its_own_words(
    tasks: dict[str, Any], tiny_lms, tmp_path: Path, capsys: pytest.CaptureFixture[str], mode: str
) -> None:
    """Issue 30, item 2 (leftover 2): `nlue idioms eval --task ne_idioms` (the task carried by its --dataset): the
    zero-shot prompts, label words and answer line are the task file's, not neDIOM's; no paper rows are printed."""
    argv = ["idioms", "eval", "--task", "ne_idioms", "--dataset", str(tasks["builds"]["ne_idioms"]), "--model",
            str(tiny_lms["gpt2"]), "--setting", "zero-shot", "--context", "S2", "--idiom", "with", "--limit", "2",
            "--mode", mode, "--max-new-tokens", "4", "--prompt-language", "both", "--bootstrap", "0",
            "--results-dir", str(tmp_path), "-q"]  # fmt: skip
    assert main(argv) == 0
    assert "(paper)" not in capsys.readouterr().out  # neDIOM's Table 3 is not this task's
    written = sorted(p.parent.name for p in tmp_path.glob("*/ne_idioms.json"))
    suffix = "-generate" if mode == "generate" else ""
    assert written == [f"gpt2__zero-shot-{lang}{suffix}-limit2__v1-S2-with-idiom" for lang in ("en", "ne")]
    requests = _journal_requests(tmp_path)
    prompts = [r.get("context") or r.get("prompt") or json.dumps(r, ensure_ascii=False) for r in requests]
    assert any(p.startswith("Does the idiom in this passage carry its figurative meaning") for p in prompts)
    assert any(p.startswith("यस अनुच्छेदमा टुक्काको अर्थ घुमाउरो हो कि सोझो?") and "अनुच्छेद: " in p for p in prompts)
    assert not any("In the text below" in p or "तलको पाठमा" in p for p in prompts)  # neDIOM's own words
    if mode == "loglik":
        assert {r["continuation"] for r in requests} == {" figurative", " plain", " घुमाउरो", " सोझो"}
    else:
        assert any("Write only one word, either figurative or plain.\nMeaning:" in p for p in prompts)


def test_the_lm_eval_export_of_user_tasks_runs_in_lm_eval(tasks: dict[str, Any], tiny_lms, tmp_path: Path) -> None:
    """Issue 30, item 2: `nlue export lm-eval` of two user tasks (one named by --task-file, one carried by its
    dataset), run by lm-evaluation-harness itself on a tiny model."""
    lm_eval = pytest.importorskip("lm_eval")
    from lm_eval.models.huggingface import HFLM
    from lm_eval.tasks import TaskManager

    folder = tmp_path / "lm_eval_tasks"
    urdu = ["--task-file", str(tasks["files"]["ur_sentiment"]), "--languages", "en", "ur"]
    for name, extra in (("ur_sentiment", urdu), ("ne_topic", [])):
        argv = ["export", "lm-eval", "--out", str(folder), "--dataset", str(tasks["builds"][name]), *extra]
        assert main(argv) == 0
    groups = sorted(p.stem for p in folder.glob("*_all_*.yaml"))
    assert groups == ["nlue_ne_topic_all_en", "nlue_ne_topic_all_ne", "nlue_ur_sentiment_all_en",
                      "nlue_ur_sentiment_all_ur"]  # fmt: skip
    model = HFLM(pretrained=str(tiny_lms["gpt2"]), dtype="float32", device="cpu", batch_size=8)
    manager = TaskManager(include_path=str(folder), include_defaults=False)
    out = lm_eval.simple_evaluate(model=model, tasks=groups, limit=2, num_fewshot=0, task_manager=manager,
                                  bootstrap_iters=0, log_samples=False)  # fmt: skip
    tasks_run = {name: r for name, r in out["results"].items() if not name.startswith(tuple(groups))}
    assert set(tasks_run) == {"nlue_ur_sentiment_en", "nlue_ur_sentiment_ur", "nlue_ne_topic_en", "nlue_ne_topic_ne"}
    assert all({"acc,none", "acc_norm,none"} <= set(r) and r["sample_len"] == 2 for r in tasks_run.values())


def test_a_sweep_roster_names_a_task_file(tasks: dict[str, Any], tiny_lms, tmp_path: Path, capsys) -> None:
    """Issue 30, item 2: a roster's task_files and a dataset per user benchmark: its cells name them, and a sweep
    (its own process, as a user runs it) fine-tunes and prompts on the user's tasks."""
    builds = tasks["builds"]
    roster = {
        "name": "mine", "out": str(tmp_path / "out"), "task_files": [str(tasks["files"]["ur_sentiment"])],
        "datasets": {"ur_sentiment": str(builds["ur_sentiment"]), "ne_topic": str(builds["ne_topic"])},
        "defaults": {"limit": 4, "bootstrap_resamples": 0},
        "models": [{"name": "tiny-encoder", "id": str(tasks["encoder"]), "kind": "encoder"},
                   {"name": "tiny-causal", "id": str(tiny_lms["gpt2"]), "kind": "causal-lm"}],
        "runs": [{"run": "train", "models": ["tiny-encoder"], "tasks": ["ne_topic"], "presets": ["I"], "epochs": 1},
                 {"run": "llm nlue", "models": ["tiny-causal"], "tasks": ["ur_sentiment", "ne_topic"],
                  "prompt_languages": ["native"], "modes": ["loglik"]}],
    }  # fmt: skip
    path = tmp_path / "mine.yaml"
    path.write_text(yaml.safe_dump(roster, allow_unicode=True, sort_keys=False), encoding="utf-8")
    assert main(["sweep", str(path), "--dry-run"]) == 0
    commands = [line for line in capsys.readouterr().out.splitlines() if "nlue " in line]
    urdu = next(line for line in commands if "--tasks ur_sentiment" in line)
    assert f"--task-file {tasks['files']['ur_sentiment']}" in urdu and f"--dataset {builds['ur_sentiment']}" in urdu
    topic = next(line for line in commands if "--tasks ne_topic" in line)
    assert "--task-file" not in topic and f"--dataset {builds['ne_topic']}" in topic  # the dataset carries it
    bare = tmp_path / "bare.yaml"  # the task file given to the sweep's command line instead of the roster
    bare.write_text(yaml.safe_dump({**roster, "task_files": []}, allow_unicode=True), encoding="utf-8")
    assert main(["sweep", str(bare), "--dry-run", "--task-file", str(tasks["files"]["ur_sentiment"])]) == 0
    assert f"--tasks ur_sentiment --task-file {tasks['files']['ur_sentiment']}" in capsys.readouterr().out
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(SRC), str(SRC.parent),
                                                                         os.environ.get("PYTHONPATH")]))}  # fmt: skip
    process = subprocess.run([sys.executable, "-m", "nlue.cli", "sweep", str(path), "-q"], cwd=tmp_path, env=env,
                             capture_output=True, text=True, timeout=600)  # fmt: skip
    assert process.returncode == 0, process.stderr[-3000:] + process.stdout[-3000:]
    results = tmp_path / "out" / "results"
    written = sorted(str(p.relative_to(results)) for p in results.glob("*/*.json"))
    assert written == ["tiny-causal__ne-0shot-limit4/ne_topic.json", "tiny-causal__ur-0shot-limit4/ur_sentiment.json",
                       "tiny-encoder-limit4/ne_topic.json"], written  # fmt: skip
    summary = (results / "summary.csv").read_text(encoding="utf-8")
    assert "ur_sentiment" in summary and "ne_topic" in summary
