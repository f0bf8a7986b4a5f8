"""The fine-tuning recipe end to end on tiny locally built models and the sample data."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from huggingface_hub import ModelCard

from nlue.cli import main
from nlue.errors import NlueError
from nlue.lm.tiny import save_tiny_classifier, save_tiny_encoder
from nlue.registry.tasks import TASKS

QUICK = ["--num_train_epochs", "2", "--per_device_train_batch_size", "8", "--disable_tqdm", "true",
         "--bootstrap_resamples", "100", "--learning_rate", "1e-3"]  # fmt: skip


@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return save_tiny_encoder(tmp_path_factory.mktemp("models") / "tiny-bert", "bert")


@pytest.fixture(scope="module")
def tiny_roberta(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return save_tiny_encoder(tmp_path_factory.mktemp("models") / "tiny-roberta", "roberta")


@pytest.fixture(autouse=True)
def _sample_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NLUE_CACHE", str(tmp_path_factory.getbasetemp() / "nlue-cache"))


def _train(model: Path, task: str, out: Path, *extra: str) -> int:
    return main(["train", "--model", str(model), "--task", task, "--output_dir", str(out / "run"),
                 "--results_dir", str(out / "results"), *QUICK, *extra])  # fmt: skip


def test_train_writes_checkpoint_results_and_card(tiny_bert: Path, tmp_path: Path, capsys) -> None:
    assert _train(tiny_bert, "mnli", tmp_path, "--preset", "VI", "--extra_fc", "--seed", "7") == 0
    out = capsys.readouterr().out
    assert "test macro_f1" in out and "95% CI" in out
    result = json.loads((tmp_path / "results" / "run" / "mnli.json").read_text(encoding="utf-8"))
    assert result["task"] == "mnli" and result["kind"] == "fine-tune" and result["preset"] == "VI"
    assert result["seed"] == 7 and result["dataset"]["is_sample"] is True
    assert result["primary_metric"] == "macro_f1" and result["primary_score"] == result["metrics"]["macro_f1"]
    assert "nlue convention" in result["primary_note"]
    assert (
        result["metrics"]["macro_f1_ci_low"] <= result["metrics"]["macro_f1"] <= result["metrics"]["macro_f1_ci_high"]
    )
    assert result["hyperparameters"]["learning_rate"] == 1e-3 and "transformers" in result["versions"]
    assert result["hyperparameters"]["best_checkpoint"]
    hp = result["hyperparameters"]
    assert hp["extra_fc"] is True and hp["preset_scheme"] == 2 and "paper_hparams" not in hp
    assert hp["trainable"].startswith("preset VI: ") and "layers 2-3 of 4, extra FC, head" in hp["trainable"]
    from transformers import AutoConfig

    config = AutoConfig.from_pretrained(tmp_path / "run")
    assert config.id2label == TASKS["mnli"].id2label
    assert config.nlue_preset == "VI" and config.nlue_extra_fc is True
    card = ModelCard.load(tmp_path / "run" / "README.md")
    assert card.data.language == "ne" and card.data.base_model == str(tiny_bert)
    metrics = {r.metric_name: r.metric_value for r in card.data.eval_results}
    assert metrics["macro_f1"] == pytest.approx(result["metrics"]["macro_f1"], abs=1e-4)
    assert {r.dataset_config for r in card.data.eval_results} == {"mnli"}
    assert "SAMPLE data" in card.text
    assert "parameter preset VI with an extra fully connected layer before the classifier" in card.text


def test_regression_and_wg_train(tiny_roberta: Path, tmp_path: Path) -> None:
    assert _train(tiny_roberta, "stsb", tmp_path / "stsb") == 0
    stsb = json.loads((tmp_path / "stsb" / "results" / "run" / "stsb.json").read_text(encoding="utf-8"))
    assert {"pearson", "spearman", "r2"} <= set(stsb["metrics"]) and stsb["primary_metric"] == "pearson_spearman_mean"
    assert _train(tiny_roberta, "wg", tmp_path / "wg", "--preset", "I") == 0
    wg = json.loads((tmp_path / "wg" / "results" / "run" / "wg.json").read_text(encoding="utf-8"))
    assert 0.0 <= wg["metrics"]["accuracy"] <= 1.0


def test_classifier_with_other_label_order_is_refused(tmp_path: Path, capsys) -> None:
    model = save_tiny_classifier(tmp_path / "mnli-clf", "bert", "mnli")
    from transformers import AutoConfig

    config = AutoConfig.from_pretrained(model)
    config.id2label = {0: "contradiction", 1: "neutral", 2: "entailment"}
    config.label2id = {v: k for k, v in config.id2label.items()}
    config.save_pretrained(model)
    assert _train(model, "mnli", tmp_path) == 2
    err = capsys.readouterr().err
    assert "0=contradiction, 1=neutral, 2=entailment" in err and "0=entailment, 1=neutral, 2=contradiction" in err


def test_gmet_and_unknown_task_are_refused(tiny_bert: Path, tmp_path: Path, capsys) -> None:
    assert _train(tiny_bert, "gmet", tmp_path) == 2
    assert "gmet is zero-shot" in capsys.readouterr().err


def test_early_stopping_and_best_model(tiny_bert: Path, tmp_path: Path) -> None:
    # With a zero learning rate the validation loss never improves: training stops after
    # the patience runs out, long before the 15-epoch cap, and the first epoch is kept as best.
    code = main(["train", "--model", str(tiny_bert), "--task", "sa", "--output_dir", str(tmp_path / "run"),
                 "--results_dir", str(tmp_path / "results"), "--learning_rate", "0", "--lr_scheduler_type", "constant",
                 "--early_stopping_patience", "2", "--disable_tqdm", "true", "--bootstrap-resamples", "0"])  # fmt: skip
    assert code == 0
    result = json.loads((tmp_path / "results" / "run" / "sa.json").read_text(encoding="utf-8"))
    assert result["hyperparameters"]["epochs_trained"] == 3.0
    assert result["hyperparameters"]["best_checkpoint"].endswith(
        "checkpoint-2"
    )  # 30 rows / batch 16 = 2 steps an epoch
    assert "macro_f1_ci_low" not in result["metrics"]  # --bootstrap-resamples 0 (QUICK spells it with _)


def test_paper_hparams_resolution(tiny_bert: Path) -> None:
    from nlue.training.args import ModelArguments, NlueTrainingArguments, RecipeArguments
    from nlue.training.recipe import with_paper_hparams

    model_args = ModelArguments(model_name_or_path="FacebookAI/xlm-roberta-base")
    training_args = NlueTrainingArguments(output_dir="x")
    m, t, record = with_paper_hparams(model_args, training_args, RecipeArguments(paper_hparams="auto"), TASKS["rte"])
    assert (m.preset, t.learning_rate, t.num_train_epochs, t.per_device_train_batch_size) == ("V", 2e-5, 15.0, 32)
    assert record["paper_model"] == "XLM-R Base" and record["from_the_paper"]["configuration_numeral"] == "V"
    assert record["our_reading"] == "preset V = head + top ⌈L/2⌉ layers"
    m, t, _ = with_paper_hparams(model_args, training_args, RecipeArguments(paper_hparams="NepBERTa"), TASKS["cr"])
    assert (m.preset, t.learning_rate, t.num_train_epochs, t.per_device_train_batch_size) == ("V", 1e-5, 2.0, 32)
    assert with_paper_hparams(model_args, training_args, RecipeArguments(), TASKS["cr"]) == (
        model_args, training_args, None,
    )  # fmt: skip
    with pytest.raises(NlueError, match="not one of the paper's models"):
        with_paper_hparams(
            ModelArguments(model_name_or_path=str(tiny_bert)), training_args, RecipeArguments(paper_hparams="auto"),
            TASKS["rte"],
        )  # fmt: skip


def test_paper_hparams_are_recorded_as_the_papers_and_the_subset_as_ours(
    tiny_bert: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level("INFO", logger="nlue.training.recipe"):
        assert _train(tiny_bert, "cr", tmp_path, "--paper_hparams", "NepBERTa") == 0
    assert any("are the paper's" in m and "is our reading" in m for m in caplog.messages)
    result = json.loads((tmp_path / "results" / "run" / "cr.json").read_text(encoding="utf-8"))
    assert result["preset"] == "V" and result["hyperparameters"]["learning_rate"] == 1e-5
    paper = result["hyperparameters"]["paper_hparams"]
    assert paper["from_the_paper"] == {
        "learning_rate": 1e-5, "num_train_epochs": 2, "per_device_train_batch_size": 32, "configuration_numeral": "V"
    }  # fmt: skip
    assert "are the NLUE paper's best for NepBERTa on cr" in result["notes"] and "our reading" in result["notes"]
    card = ModelCard.load(tmp_path / "run" / "README.md").text
    assert result["notes"] in card and "our reading of the paper's configuration V" in card


def test_extra_fc_is_refused_with_lora(tiny_bert: Path, tmp_path: Path, capsys) -> None:
    assert _train(tiny_bert, "sa", tmp_path, "--lora", "--extra_fc") == 2
    assert "--extra_fc works with the parameter presets, not with --lora" in capsys.readouterr().err


def test_arguments_from_yaml_file(tiny_bert: Path, tmp_path: Path) -> None:
    config = tmp_path / "args.yaml"
    config.write_text(
        f"model_name_or_path: {tiny_bert}\ntask: cola\noutput_dir: {tmp_path / 'run'}\nresults_dir: {tmp_path / 'res'}\n"
        "num_train_epochs: 1\ndisable_tqdm: true\nbootstrap_resamples: 0\n",
        encoding="utf-8",
    )
    assert main(["train", str(config)]) == 0
    assert (tmp_path / "res" / "run" / "cola.json").is_file()


def test_lora_adapter_and_merge_reload_with_same_predictions(tiny_bert: Path, tmp_path: Path) -> None:
    from nlue.data.access import load_task
    from nlue.lm.checkpoints import load_classifier
    from nlue.training.predict import predict_logits

    assert _train(tiny_bert, "qnli", tmp_path, "--lora", "--lora_r", "4", "--merge") == 0
    run = tmp_path / "run"
    assert (run / "adapter_config.json").is_file() and (run / "merged" / "config.json").is_file()
    result = json.loads((tmp_path / "results" / "run" / "qnli.json").read_text(encoding="utf-8"))
    assert result["lora"]["r"] == 4 and result["preset"] is None
    rows = list(load_task(None, TASKS["qnli"])["test"])
    adapter_logits = predict_logits(*load_classifier(str(run)), TASKS["qnli"], rows)
    merged_logits = predict_logits(*load_classifier(str(run / "merged")), TASKS["qnli"], rows)
    np.testing.assert_allclose(adapter_logits, merged_logits, atol=1e-5)
    # The scores in the results file came from the same model the adapter reloads into.
    accuracy = float((adapter_logits.argmax(-1) == np.array([r["label"] for r in rows])).mean())
    assert accuracy == pytest.approx(result["metrics"]["accuracy"])
    card = ModelCard.load(run / "README.md")
    assert card.data.library_name == "peft" and "lora" in card.data.tags


def test_evaluate_command_scores_per_task_checkpoints(tiny_bert: Path, tmp_path: Path, capsys) -> None:
    for task in ("sa", "rte"):
        assert main(["train", "--model", str(tiny_bert), "--task", task, "--output_dir", str(tmp_path / "m" / task),
                     "--results_dir", str(tmp_path / "train-results"), *QUICK]) == 0  # fmt: skip
    capsys.readouterr()
    assert main(["evaluate", "--model", str(tmp_path / "m"), "--results-dir", str(tmp_path / "r"),
                 "--bootstrap-resamples", "50"]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert "NLUE score:" in out and "INCOMPLETE, missing: cola, wg" in out
    assert sorted(p.name for p in (tmp_path / "r" / "m").iterdir()) == [
        "rte.json",
        "rte.predictions.jsonl",
        "sa.json",
        "sa.predictions.jsonl",
    ]
    sa = json.loads((tmp_path / "r" / "m" / "sa.json").read_text(encoding="utf-8"))
    assert "macro_f1_ci_low" in sa["metrics"]
    # The other spellings of the option: snake case, and the short name nlue gmet takes.
    for spelling in ("--bootstrap_resamples", "--bootstrap"):
        assert main(["evaluate", "--model", str(tmp_path / "m"), "--task", "sa", "--results-dir",
                     str(tmp_path / spelling), spelling, "0", "--quiet"]) == 0  # fmt: skip
        sa = json.loads((tmp_path / spelling / "m" / "sa.json").read_text(encoding="utf-8"))
        assert "macro_f1_ci_low" not in sa["metrics"]


def test_push_dry_run_of_a_checkpoint_with_its_hub_eval_results(
    tiny_bert: Path, sample_build, tmp_path: Path, caplog, monkeypatch
) -> None:
    """issue 30, item 5: beside the model-index, .eval_results/ with the results file's own primary score, shown
    by the push dry run (which reaches no Hub)."""
    import logging

    from nlue.data.hub_eval_results import read_eval_results
    from nlue.training.modelcard import write_checkpoint_eval_results

    def no_network(*args, **kwargs):
        raise AssertionError("a dry run must not reach the Hub")

    monkeypatch.setattr("huggingface_hub.HfApi.create_repo", no_network)
    monkeypatch.setattr("huggingface_hub.HfApi.upload_folder", no_network)
    release = tmp_path / "release"  # a benchmark build that is not the sample, published as org/nlue
    shutil.copytree(sample_build.repo_dir, release)
    card = release / "README.md"
    card.write_text(card.read_text(encoding="utf-8").replace("sample-data", "release"), encoding="utf-8")
    push = ["--dataset", str(release), "--eval_results_dataset", "org/nlue", "--push_to_hub", "--hub_model_id",
            "me/tiny-sa", "--dry_run"]  # fmt: skip
    with caplog.at_level(logging.INFO):
        assert _train(tiny_bert, "sa", tmp_path, *push) == 0
    result = json.loads((tmp_path / "results" / "me__tiny-sa" / "sa.json").read_text(encoding="utf-8"))
    assert result["model"] == "me/tiny-sa"
    model_card = ModelCard.load(tmp_path / "run" / "README.md")
    assert model_card.data.model_name == "me/tiny-sa"
    (entry,) = read_eval_results(tmp_path / "run" / ".eval_results" / "nlue_sa.yaml")
    assert (entry.dataset_id, entry.task_id, entry.value) == ("org/nlue", "sa", result["primary_score"])
    assert entry.source_url == "https://huggingface.co/me/tiny-sa" and entry.date == result["created"]
    card_scores = {r.metric_name: r.metric_value for r in model_card.data.eval_results}
    assert card_scores["macro_f1"] == round(result["primary_score"], 4)  # the model-index, beside it
    logged = caplog.text
    assert "  .eval_results/nlue_sa.yaml  (" in logged and "nothing uploaded" in logged
    assert f"    nlue_sa.yaml: org/nlue task sa = {result['primary_score']}, notes: macro_f1 (0-1 scale)" in logged
    # A later run of the task in the same folder that may not have an entry (a partial test split, say)
    # removes the one an earlier run left, so that no push sends a score that run did not make.
    assert write_checkpoint_eval_results(tmp_path / "run", TASKS["sa"], None) is None
    assert not (tmp_path / "run" / ".eval_results" / "nlue_sa.yaml").exists()


def test_search_grid_with_presets_and_folds_resumes(tiny_bert: Path, tmp_path: Path) -> None:
    args = ["search", "--model", str(tiny_bert), "--task", "rte", "--output_dir", str(tmp_path / "run"),
            "--results_dir", str(tmp_path / "results"), "--presets", "VIII,VII", "--learning_rates", "1e-3,1e-4",
            "--batch_sizes", "16", "--folds", "2", "--num_train_epochs", "1", "--disable_tqdm", "true",
            "--bootstrap_resamples", "0"]  # fmt: skip
    assert main([*args, "--skip_final", "true"]) == 0
    trials = tmp_path / "run" / "search" / "trials"
    names = sorted(p.name for p in trials.iterdir())
    assert names == sorted(
        f"{preset}-lr{lr}-bs16-fold{fold}.json" for preset in ("VII", "VIII") for lr in ("0.001", "0.0001")
        for fold in (0, 1)
    )  # fmt: skip
    record = json.loads((trials / "VII-lr0.001-bs16-fold0.json").read_text(encoding="utf-8"))
    assert record["preset"] == "VII" and record["extra_fc"] is False and record["learning_rate"] == 1e-3
    kept = (trials / names[0]).read_text(encoding="utf-8")
    (trials / names[1]).unlink()  # as if the search had been interrupted there
    assert main(args) == 0
    assert (trials / names[0]).read_text(encoding="utf-8") == kept  # finished trials are not redone
    assert (trials / names[1]).is_file()
    summary = json.loads((tmp_path / "run" / "search" / "summary.json").read_text(encoding="utf-8"))
    ranking = summary["ranking"]
    assert summary["grid"]["presets"] == ["VIII", "VII"] and summary["presets_source"] == "given"
    assert {(row["preset"], row["learning_rate"]) for row in ranking} == {
        (p, lr) for p in ("VII", "VIII") for lr in (1e-3, 1e-4)
    }
    losses = [row["mean_validation_loss"] for row in ranking]
    assert losses == sorted(losses) and [row["rank"] for row in ranking] == [1, 2, 3, 4]
    assert summary["best"] == ranking[0] and all(row["folds"] == 2 for row in ranking)
    final = json.loads((tmp_path / "results" / "run" / "rte.json").read_text(encoding="utf-8"))
    assert final["preset"] == summary["best"]["preset"]
    assert final["hyperparameters"]["learning_rate"] == summary["best"]["learning_rate"]


def test_search_presets_choice(caplog: pytest.LogCaptureFixture) -> None:
    from nlue.training.args import ModelArguments, RecipeArguments
    from nlue.training.search import search_presets

    def choose(text: str, task: str, model: str = "local/tiny", paper: str | None = None, lora: bool = False):
        args = ModelArguments(model_name_or_path=model, preset="III")
        return search_presets(text, TASKS[task], args, RecipeArguments(paper_hparams=paper), lora)

    # A paper model (by Hub id or by name): its own appendix E cell and the neighbouring numerals.
    presets, why = choose("auto", "rte", "FacebookAI/xlm-roberta-base")
    assert presets == ["IV", "V", "VI"] and why == "the paper's best for XLM-R Base on rte (V) and its neighbours"
    assert choose("auto", "sa", "FacebookAI/xlm-roberta-base")[0] == ["I", "II"]
    assert choose("auto", "cr", "microsoft/mdeberta-v3-base")[0] == ["III", "IV", "V"]
    assert choose("auto", "cr", paper="NepBERTa")[0] == ["IV", "V", "VI"]
    # Another model: the task's most frequent best; cr's tie (IV and V, five models each) goes to IV.
    assert choose("auto", "mrpc")[0] == ["VI", "VII", "VIII"]
    presets, why = choose("auto", "cr")
    assert presets == ["III", "IV", "V"] and "most frequent best on cr (5 of its 10 models)" in why
    assert choose("I, iv,VI,IV", "rte")[0] == ["I", "IV", "VI"]
    assert choose("current", "rte")[0] == ["III"]
    with pytest.raises(NlueError, match=r"--presets: unknown preset 'IX'"):
        choose("I,IX", "rte")
    with caplog.at_level("INFO", logger="nlue.training.search"):
        assert choose("auto", "rte", lora=True)[0] == [None]
    assert any("presets do not apply" in m for m in caplog.messages)


def test_search_with_lora_varies_only_lr_and_batch(tiny_bert: Path, tmp_path: Path) -> None:
    assert main(["search", "--model", str(tiny_bert), "--task", "rte", "--output_dir", str(tmp_path / "run"),
                 "--lora", "--learning_rates", "1e-3", "--batch_sizes", "16", "--folds", "2",
                 "--num_train_epochs", "1", "--disable_tqdm", "true", "--skip_final", "true"]) == 0  # fmt: skip
    trials = tmp_path / "run" / "search" / "trials"
    assert sorted(p.name for p in trials.iterdir()) == ["lora-lr0.001-bs16-fold0.json", "lora-lr0.001-bs16-fold1.json"]
    summary = json.loads((tmp_path / "run" / "search" / "summary.json").read_text(encoding="utf-8"))
    assert summary["grid"]["presets"] == [None] and summary["best"]["preset"] is None and summary["lora"] is True


def test_stratified_folds_are_balanced() -> None:
    from nlue.training.search import stratified_folds

    folds = stratified_folds(np.array([0] * 50 + [1] * 30), 5, seed=1)
    for k in range(5):
        assert (folds[:50] == k).sum() == 10 and (folds[50:] == k).sum() == 6
    assert not np.array_equal(folds, stratified_folds(np.array([0] * 50 + [1] * 30), 5, seed=2))


# One optimizer step over 10 items in either layout: the sample's 30 training items split evenly into 3 steps
# of 10 in one process and 3 steps of 2 x 5 in two (an uneven split tops up a process's last batch with
# repeated items, a difference of its own).
SAME_STEPS = ["--task", "sa", "--num_train_epochs", "2", "--learning_rate", "1e-3", "--disable_tqdm", "true",
              "--bootstrap_resamples", "0", "--seed", "11", "--max_seq_length", "32"]  # fmt: skip
ACCELERATE_EXAMPLES = Path(__file__).resolve().parents[1] / "docs" / "examples" / "accelerate"
# Two processes at batch 5 against one at batch 10 (measured: trained weights 6e-8 apart, validation loss
# 7e-8, per-item logits equal to the 5 decimals the predictions keep; doubling the effective batch instead
# moves the logits by 0.018 and the validation loss by 4e-4). Not 0: the two processes' gradients are summed
# by the all-reduce in another order than one process sums its batch.
WEIGHTS_TOLERANCE, LOSS_TOLERANCE, LOGITS_TOLERANCE = 1e-5, 1e-5, 1e-4


@pytest.fixture(scope="module")
def tiny_bert_without_dropout(tiny_bert: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """tiny_bert with dropout off. Each process draws its own dropout masks, unlike one process's draw, which
    would blur the comparison of one and two processes into seed noise (measured: logits 0.007 apart)."""
    out = tmp_path_factory.mktemp("models") / "tiny-bert-no-dropout"
    shutil.copytree(tiny_bert, out)
    config = json.loads((out / "config.json").read_text(encoding="utf-8"))
    config.update(hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    (out / "config.json").write_text(json.dumps(config), encoding="utf-8")
    return out


@pytest.fixture(scope="module")
def one_process_run(tiny_bert_without_dropout: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("one-process")
    assert main(["train", "--model", str(tiny_bert_without_dropout), *SAME_STEPS, "--per_device_train_batch_size",
                 "10", "--output_dir", str(out / "run"), "--results_dir", str(out / "results")]) == 0  # fmt: skip
    return out


def _launch_two(launcher: str, args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``nlue train ARGS`` in two CPU processes, started by torchrun or by accelerate launch with the DDP
    config the training guide shows (docs/examples/accelerate/ddp.yaml)."""
    bin_dir = os.path.dirname(sys.executable)
    if launcher == "torchrun":
        # --standalone takes a free port: with a fixed one, two runs on one machine can meet (issue 29, item 30).
        command = [shutil.which("torchrun", path=bin_dir), "--standalone", "--nproc_per_node", "2"]
    else:
        command = [shutil.which("accelerate", path=bin_dir), "launch", "--config_file",
                   str(ACCELERATE_EXAMPLES / "ddp.yaml")]  # fmt: skip
    env = {**os.environ, "OMP_NUM_THREADS": "1", **env}
    return subprocess.run([*map(str, command), "-m", "nlue.cli", "train", *args], capture_output=True, text=True,
                          timeout=300, env=env)  # fmt: skip


def _files(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())


def _logits(results: Path) -> np.ndarray:
    lines = (results / "run" / "sa.predictions.jsonl").read_text(encoding="utf-8").splitlines()
    return np.array([json.loads(line)["logits"] for line in lines])


@pytest.mark.skipif(sys.platform != "linux", reason="gloo on two local processes")
@pytest.mark.parametrize("launcher", ["torchrun", "accelerate"])
def test_two_processes_train_as_one_at_the_same_effective_batch(
    launcher: str, tiny_bert_without_dropout: Path, one_process_run: Path, tmp_path: Path
) -> None:
    """issue 31, item 4: `nlue train` under torchrun and under accelerate launch, two CPU processes (gloo) at
    batch 5, trains the model one process trains at batch 10 (same seed) within the tolerances above, and
    writes one results file, one predictions file and one checkpoint folder, from the first process only.

    Before, on a machine without a GPU the processes never exchanged gradients: each trained alone on half the
    data (the first process's half-trained model was saved) and, without --ddp_backend gloo, each wrote the
    results; transformers also doubled the loss of a BERT head in two processes."""
    from safetensors.numpy import load_file

    done = _launch_two(launcher, ["--model", str(tiny_bert_without_dropout), *SAME_STEPS,
                                  "--per_device_train_batch_size", "5", "--output_dir", str(tmp_path / "run"),
                                  "--results_dir", str(tmp_path / "results")],
                       {"NLUE_CACHE": str(tmp_path / "cache")})  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.count("results    :") == 1  # one process reports
    assert _files(tmp_path / "results") == _files(one_process_run / "results") == [
        "run/sa.json", "run/sa.predictions.jsonl"
    ]  # fmt: skip
    # One checkpoint folder per epoch kept, one card, one results file; each process's random state beside
    # each checkpoint (the Trainer resumes every process from its own).
    files = _files(tmp_path / "run")
    assert [f for f in files if "/rng_state" not in f] == [
        f for f in _files(one_process_run / "run") if "/rng_state" not in f
    ]
    assert {f.rsplit("/", 1)[1] for f in files if "/rng_state" in f} == {"rng_state_0.pth", "rng_state_1.pth"}
    two = json.loads((tmp_path / "results" / "run" / "sa.json").read_text(encoding="utf-8"))
    one = json.loads((one_process_run / "results" / "run" / "sa.json").read_text(encoding="utf-8"))
    assert (two["hyperparameters"]["world_size"], one["hyperparameters"]["world_size"]) == (2, 1)
    assert two["hyperparameters"]["effective_train_batch_size"] == one["hyperparameters"]["effective_train_batch_size"]
    assert two["hyperparameters"]["effective_train_batch_size"] == 10
    # The number of processes moves the numbers (a little): another identity, never a silent replacement.
    assert two["identity"]["settings"]["effective_batch"] == 10 and "effective_batch" not in one["identity"]["settings"]
    assert two["identity_key"] != one["identity_key"]
    assert two["metrics"] == one["metrics"]
    assert abs(two["validation_metrics"]["loss"] - one["validation_metrics"]["loss"]) < LOSS_TOLERANCE
    train_loss = [json.loads((r / "run" / "train_results.json").read_text(encoding="utf-8"))["train_loss"]
                  for r in (tmp_path, one_process_run)]  # fmt: skip
    assert abs(train_loss[0] - train_loss[1]) < LOSS_TOLERANCE
    assert np.abs(_logits(tmp_path / "results") - _logits(one_process_run / "results")).max() < LOGITS_TOLERANCE
    weights = [load_file(r / "run" / "model.safetensors") for r in (tmp_path, one_process_run)]
    assert max(float(np.abs(weights[0][k] - weights[1][k]).max()) for k in weights[1]) < WEIGHTS_TOLERANCE


@pytest.mark.skipif(sys.platform != "linux", reason="gloo on two local processes")
def test_a_failing_process_fails_the_run_and_nothing_is_written(tiny_bert: Path, tmp_path: Path) -> None:
    """issue 31, item 4: when the second process fails after training (its scoring raises), the run exits
    non-zero, the failing process says which it is, and the first process writes no results: it waits for
    every process before it writes, and the launcher stops it there."""
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(
        "import os\n"
        "if os.environ.get('RANK') == '1':\n"
        "    import nlue.scores\n"
        "    def broken(*args, **kwargs):\n"
        "        raise OSError('the disk of the second process is gone (made to fail by the test)')\n"
        "    nlue.scores.score_task = broken\n",
        encoding="utf-8",
    )
    python_path = os.pathsep.join(filter(None, [str(hook), os.environ.get("PYTHONPATH", "")]))
    done = _launch_two("torchrun", ["--model", str(tiny_bert), *SAME_STEPS, "--num_train_epochs", "1",
                                    "--per_device_train_batch_size", "5", "--output_dir", str(tmp_path / "run"),
                                    "--results_dir", str(tmp_path / "results")],
                       {"NLUE_CACHE": str(tmp_path / "cache"), "PYTHONPATH": python_path})  # fmt: skip
    assert done.returncode != 0
    assert "nlue train (process 1 of 2): error: the disk of the second process is gone" in done.stderr
    assert not (tmp_path / "results").exists()
    assert not (tmp_path / "run" / "nlue_results.json").exists()


def test_accelerate_configs_in_the_docs_are_read_by_accelerate() -> None:
    """issue 31, item 4: the DDP, two-machine, FSDP and DeepSpeed configs the training guide shows load with
    accelerate's own reader (which refuses an unknown key) and name only options `accelerate launch` takes.
    Only ddp.yaml runs here (the two-process test); the others need GPUs."""
    from accelerate.commands.config.config_args import load_config_from_file
    from accelerate.commands.launch import launch_command_parser
    from accelerate.utils import DistributedType

    options = {action.dest for action in launch_command_parser()._actions}
    kinds = {}
    for path in sorted(ACCELERATE_EXAMPLES.glob("*.yaml")):
        config = load_config_from_file(str(path))
        kinds[path.stem] = config.distributed_type
        for key in config.fsdp_config:
            assert (key if key.startswith("fsdp_") else f"fsdp_{key}") in options, (path.name, key)
        for key in config.deepspeed_config:
            assert key in options, (path.name, key)
    assert kinds == {"ddp": DistributedType.MULTI_GPU, "ddp-two-nodes": DistributedType.MULTI_GPU,
                     "deepspeed": DistributedType.DEEPSPEED, "fsdp": DistributedType.FSDP}  # fmt: skip


def test_launched_processes_are_checked(monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """issue 31, item 4: a launched process on a machine without a GPU takes the CPU path; a launch whose
    processes would train alone is refused; accelerate's one-process CPU launcher is named in a warning."""
    from types import SimpleNamespace

    from accelerate.utils import DistributedType

    from nlue.training import processes

    assert processes.process_label({"WORLD_SIZE": "4", "RANK": "3"}) == " (process 3 of 4)"
    assert processes.process_label({}) == "" and processes.launched_processes({"OMPI_COMM_WORLD_SIZE": "2"}) == 2
    monkeypatch.setattr(processes, "_has_accelerator", lambda: False)
    monkeypatch.setenv("WORLD_SIZE", "2")
    args = SimpleNamespace(use_cpu=False)
    processes.settle_cpu_processes(args)
    assert args.use_cpu is True
    alone = SimpleNamespace(distributed_state=SimpleNamespace(distributed_type=DistributedType.NO), world_size=2)
    with pytest.raises(NlueError, match="started 2 processes, but transformers set them up to train alone"):
        processes.check_processes(alone)
    monkeypatch.delenv("WORLD_SIZE")
    monkeypatch.setenv("ACCELERATE_USE_CPU", "True")
    monkeypatch.setenv("MASTER_ADDR", "127.0.0.1")
    processes.settle_cpu_processes(SimpleNamespace(use_cpu=True))
    assert any("started this one process only" in m for m in caplog.messages)
    assert (
        processes.effective_batch(SimpleNamespace(train_batch_size=8, world_size=4, gradient_accumulation_steps=2))
        == 64
    )


def test_item_mean_loss_is_the_classifiers_loss() -> None:
    """issue 31, item 4: the validation loss recomputed over the items (several processes) is the loss the
    model averages: cross-entropy, or the squared error for a regression head."""
    import torch

    from nlue.training.recipe import item_mean_loss

    logits = np.random.default_rng(0).normal(size=(7, 3)).astype(np.float32)
    labels = np.array([0, 2, 1, 1, 0, 2, 2])
    expected = torch.nn.functional.cross_entropy(torch.tensor(logits), torch.tensor(labels)).item()
    assert item_mean_loss(logits, labels) == pytest.approx(expected, rel=1e-6)
    scores, gold = logits[:, :1], np.linspace(0, 5, 7)
    assert item_mean_loss((scores,), gold) == pytest.approx(float(np.mean((scores[:, 0] - gold) ** 2)), rel=1e-6)


def test_model_upload_plan_leaves_out_checkpoints(tmp_path: Path) -> None:
    from nlue.data.publish import plan_upload

    (tmp_path / "checkpoint-4").mkdir()
    (tmp_path / "checkpoint-4" / "model.safetensors").write_bytes(b"x")
    (tmp_path / "merged").mkdir()
    (tmp_path / "merged" / "config.json").write_text("{}", encoding="utf-8")
    for name in ("README.md", "config.json", "model.safetensors"):
        (tmp_path / name).write_text("x", encoding="utf-8")
    plan = plan_upload(tmp_path, "me/model", "model")
    assert [path for path, _ in plan.files] == ["README.md", "config.json", "merged/config.json", "model.safetensors"]


def test_test_metrics_are_written_once_and_results_default_to_the_folder_the_space_reads(
    tiny_bert: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("NLUE_RESULTS_DIR", raising=False)
    run = tmp_path / "runs" / "sa-run"
    code = main(["train", "--model", str(tiny_bert), "--task", "sa", "--output_dir", str(run), *QUICK])
    assert code == 0
    own = run / "nlue_results.json"
    shared = tmp_path / "build" / "results" / "sa-run" / "sa.json"  # the one default, where `nlue space` looks
    assert own.read_bytes() == shared.read_bytes()  # the leaderboard's copy of the one results file
    assert not (run / "test_results.json").exists()
    everything = json.loads((run / "all_results.json").read_text(encoding="utf-8"))
    assert not any(key.startswith("test_") for key in everything)  # the Trainer's files: train and eval only
    assert not (tmp_path / "results").exists()


def test_several_seeds_give_the_mean_the_sd_and_each_seed(tiny_bert: Path, tmp_path: Path, capsys) -> None:
    import statistics

    from nlue.predictions import read_predictions

    results = tmp_path / "results"
    run = tmp_path / "run"
    assert main(["train", "--model", str(tiny_bert), "--task", "sa", "--output_dir", str(run), "--seeds", "3",
                 "--seed", "7", "--results_dir", str(results), "--results_name", "tiny-sa", *QUICK]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert "seeds      : 7, 8, 9" in out and " sd" in out
    saved = json.loads((results / "tiny-sa" / "sa.json").read_text(encoding="utf-8"))
    per_seed = saved["details"]["per_seed"]
    own = [json.loads((run / f"seed-{s}" / "nlue_results.json").read_text(encoding="utf-8")) for s in (7, 8, 9)]
    assert [per_seed[str(s)]["macro_f1"] for s in (7, 8, 9)] == [o["metrics"]["macro_f1"] for o in own]
    values = [o["metrics"]["macro_f1"] for o in own]
    assert saved["metrics"]["macro_f1"] == pytest.approx(statistics.fmean(values))
    assert saved["metrics"]["macro_f1_sd"] == pytest.approx(statistics.stdev(values))
    assert saved["primary_score"] == pytest.approx(statistics.fmean(values)) and saved["details"]["seeds"] == [7, 8, 9]
    low, high = saved["metrics"]["macro_f1_ci_low"], saved["metrics"]["macro_f1_ci_high"]
    assert low <= saved["metrics"]["macro_f1"] <= high
    rows = read_predictions(results / "tiny-sa" / saved["predictions"])
    assert all(len(row["prediction"]) == 3 and list(row)[-1] == "gold" for row in rows)
    assert not (results / "seed-7").exists()  # only the combined run reaches the shared results folder
    from nlue.boards.columns import PRIMARY_VIEW
    from nlue.boards.leaderboard import leaderboard_frame, result_rows

    (row,) = result_rows(results).rows
    assert row.sds == {"sa": pytest.approx(statistics.stdev(values))}
    frame = leaderboard_frame([row], view=PRIMARY_VIEW)
    assert list(frame.columns)[list(frame.columns).index("SA") + 1] == "SA ± sd"  # mean, then its sd beside it
    assert frame["SA ± sd"].iloc[0] == pytest.approx(100 * statistics.stdev(values), abs=0.01)


def test_search_tests_the_winner_over_several_seeds(tiny_bert: Path, tmp_path: Path) -> None:
    assert main(["search", "--model", str(tiny_bert), "--task", "rte", "--output_dir", str(tmp_path / "run"),
                 "--results_dir", str(tmp_path / "results"), "--lora", "--learning_rates", "1e-3", "--batch_sizes",
                 "16", "--folds", "2", "--num_train_epochs", "1", "--disable_tqdm", "true", "--seeds", "2",
                 "--bootstrap_resamples", "0"]) == 0  # fmt: skip
    (saved,) = [json.loads(p.read_text(encoding="utf-8")) for p in (tmp_path / "results").glob("*/rte.json")]
    assert saved["details"]["seeds"] == [42, 43] and "macro_f1_sd" in saved["metrics"]
