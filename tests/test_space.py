"""The Space's logic without a browser: forms per task, predictions, the model list, the leaderboard."""

from __future__ import annotations

import json
import socket
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from nlue.boards import columns as cols
from nlue.boards.leaderboard import (
    filter_rows,
    leaderboard_frame,
    load_leaderboard,
    paper_rows,
    result_rows,
    sort_rows,
)
from nlue.errors import NlueError
from nlue.lm.tiny import save_tiny_classifier
from nlue.registry.paper import PAPER_MODELS, RESULT_COLUMNS
from nlue.registry.tasks import TASK_NAMES, TASKS, get_task
from nlue.results import RunResult, write_result
from nlue.scores import nlue_score
from nlue.space.cache import ModelCache
from nlue.space.demo_models import build_demo_models
from nlue.space.gmet import check_sentence
from nlue.space.inference import TRY_TASKS, InputError, field_label, format_prediction, max_fields, validate_inputs
from nlue.space.models import ModelCatalog, ModelNotAllowed, describe_checkpoint, load_catalog, scan_folder
from nlue.space.service import ModelLoadError, SpaceService
from nlue.space.settings import SpaceSettings

NEPALI = "आजको खाना एकदमै मीठो थियो।"


@pytest.fixture(autouse=True)
def _sample_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NLUE_CACHE", str(tmp_path_factory.getbasetemp() / "nlue-cache"))


@pytest.fixture(scope="module")
def models_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_demo_models(tmp_path_factory.mktemp("space") / "models", tasks=("sa", "mnli", "stsb"))


@pytest.fixture(scope="module")
def service(models_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> SpaceService:
    results = tmp_path_factory.mktemp("space-results")
    return SpaceService(SpaceSettings(models=models_dir, results_dir=results, max_chars=200))


def _result(tmp: Path, task: str, metrics: dict, name: str = "tiny-bert", **extra) -> Path:
    run = RunResult(task=task, model=f"runs/{task}", kind=extra.pop("kind", "fine-tune"), metrics=metrics, **extra)
    return write_result(run, tmp, name)


# --- the form: inputs per task ----------------------------------------------------------


@pytest.mark.parametrize("task_name", TRY_TASKS)
def test_form_shows_exactly_the_registry_fields(service: SpaceService, task_name: str) -> None:
    form = service.task_form(task_name)
    task = TASKS[task_name]
    assert len(form.fields) == max_fields()
    shown = [f.label for f in form.fields if f.visible]
    assert shown == [field_label(f) for f in task.input_fields]
    assert not any(f.visible for f in form.fields[len(task.input_fields) :])
    assert task.title in form.summary


def test_form_offers_only_models_whose_labels_fit(service: SpaceService) -> None:
    assert service.task_form("sa").models == ("models/sa",)
    assert service.task_form("mnli").models == ("models/mnli",)
    assert service.task_form("stsb").models == ("models/stsb",)
    empty = service.task_form("qnli")
    assert empty.models == () and "No model is configured" in empty.summary
    with pytest.raises(InputError, match="No model is offered for this task"):
        service.predict("qnli", None, NEPALI, NEPALI, "")
    assert "gmet" not in TRY_TASKS and service.catalog.masked_lms() == ["models/encoder"]


def test_field_labels_read_well() -> None:
    assert field_label("ad_description") == "Ad description"
    assert field_label("question1") == "Question1"


# --- inputs: empty, oversize, WinoGrande blank --------------------------------------------


def test_oversize_input_is_refused_with_the_limit() -> None:
    with pytest.raises(InputError, match=r"1,001 characters long; this Space accepts up to 1,000"):
        validate_inputs(TASKS["sa"], ["क" * 1001], max_chars=1000)
    assert validate_inputs(TASKS["sa"], ["क" * 1000], max_chars=1000) == {"text": "क" * 1000}


def test_empty_field_names_what_is_needed() -> None:
    with pytest.raises(InputError, match=r"Hypothesis is empty: Multi-Genre .* needs Premise, Hypothesis"):
        validate_inputs(TASKS["mnli"], [NEPALI, "  ", ""], max_chars=100)


def test_inputs_take_the_task_fields_and_ignore_spare_boxes() -> None:
    example = validate_inputs(TASKS["qadsm"], [" क ", "ख", "ग"], max_chars=10)
    assert example == {"query": "क", "ad_title": "ख", "ad_description": "ग"}
    assert validate_inputs(TASKS["sa"], [NEPALI, "unused", None], max_chars=100) == {"text": NEPALI}


def test_winogrande_needs_one_blank() -> None:
    with pytest.raises(InputError, match="exactly one blank '_', found 0"):
        validate_inputs(TASKS["wg"], ["राम र श्याम", "राम", "श्याम"], max_chars=100)
    assert validate_inputs(TASKS["wg"], ["_ घर गयो", "राम", "श्याम"], max_chars=100)["sentence"] == "_ घर गयो"


def test_service_refuses_oversize_input_before_loading_anything(service: SpaceService) -> None:
    with pytest.raises(InputError, match="accepts up to 200"):
        service.predict("sa", "models/sa", "क" * 201, "", "")


# --- prediction formatting ----------------------------------------------------------------


def test_classification_is_formatted_as_probabilities_by_label_name() -> None:
    shown = format_prediction(TASKS["mnli"], [2.0, 0.0, -1.0])
    assert list(shown) == ["entailment", "neutral", "contradiction"]
    assert sum(shown.values()) == pytest.approx(1.0)
    assert shown["entailment"] > shown["neutral"] > shown["contradiction"]
    assert all(isinstance(v, float) for v in shown.values())


def test_stsb_is_formatted_as_a_score_clipped_to_the_scale() -> None:
    assert format_prediction(TASKS["stsb"], [3.456]) == "similarity 3.46 / 5"
    assert format_prediction(TASKS["stsb"], [6.2]) == "similarity 5.00 / 5 (the model said 6.20)"
    assert format_prediction(TASKS["stsb"], [-0.001]) == "similarity 0.00 / 5"


def test_predict_with_a_tiny_classifier(service: SpaceService) -> None:
    output, details = service.predict("mnli", "models/mnli", NEPALI, "खाना मीठो थियो।", "")
    assert set(output) == set(TASKS["mnli"].label_names) and sum(output.values()) == pytest.approx(1.0)
    assert "models/mnli" in details and "ms" in details
    score, _ = service.predict("stsb", "models/stsb", NEPALI, "खाना मीठो थियो।", "")
    assert isinstance(score, str) and score.startswith("similarity ")


# --- only listed models ------------------------------------------------------------------


@pytest.mark.parametrize(
    "model",
    ["/etc", "https://huggingface.co/bert-base-uncased", "FacebookAI/xlm-roberta-base", "../models/sa", "", None],
)
def test_unlisted_models_are_refused(service: SpaceService, model: str | None) -> None:
    with pytest.raises(ModelNotAllowed):
        service.predict("sa", model, NEPALI, "", "")


def test_a_model_is_refused_for_a_task_it_was_not_trained_for(service: SpaceService) -> None:
    with pytest.raises(ModelNotAllowed, match="not offered for mnli"):
        service.predict("mnli", "models/sa", NEPALI, NEPALI, "")
    with pytest.raises(ModelNotAllowed, match="not a classifier"):
        service.predict("sa", "models/encoder", NEPALI, "", "")
    with pytest.raises(ModelNotAllowed, match="not a masked language model"):
        service.fill_blank("models/sa", "नेपालको राजधानी [MASK] हो।", 3)


def test_a_model_that_fails_to_load_is_reported_and_the_service_keeps_serving(models_dir: Path, tmp_path: Path) -> None:
    broken = tmp_path / "models" / "sa"
    broken.mkdir(parents=True)
    (broken / "config.json").write_text((models_dir / "sa" / "config.json").read_text(encoding="utf-8"))
    catalog = load_catalog(tmp_path / "models")
    good = ModelCatalog([*catalog, *(e for e in load_catalog(models_dir) if e.name == "models/mnli")])
    service = SpaceService(SpaceSettings(models=tmp_path, results_dir=tmp_path / "none"), catalog=good)
    with pytest.raises(ModelLoadError, match="could not be loaded"):
        service.predict("sa", "models/sa", NEPALI, "", "")
    output, _ = service.predict("mnli", "models/mnli", NEPALI, NEPALI, "")
    assert set(output) == set(TASKS["mnli"].label_names)


# --- the model list: scanning, models files ------------------------------------------------


def test_scan_reads_labels_and_uses_the_folder_name_to_tell_qnli_from_rte(tmp_path: Path) -> None:
    save_tiny_classifier(tmp_path / "m" / "xlmr" / "rte", "bert", "rte")
    save_tiny_classifier(tmp_path / "m" / "shared", "bert", "qnli")
    save_tiny_classifier(tmp_path / "m" / "xlmr" / "rte" / "checkpoint-10", "bert", "rte")  # Trainer leftovers
    (tmp_path / "m" / "notes").mkdir()
    entries = {e.name: e for e in scan_folder(tmp_path / "m")}
    assert set(entries) == {"m/xlmr/rte", "m/shared"}
    assert entries["m/xlmr/rte"].tasks == ("rte",)
    assert entries["m/shared"].tasks == ("qnli", "rte")  # same labels, no hint: both fit


def test_unnamed_labels_are_not_offered(tmp_path: Path) -> None:
    folder = save_tiny_classifier(tmp_path / "sa", "bert", "sa")
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    config["id2label"] = {"0": "LABEL_0", "1": "LABEL_1"}
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    assert describe_checkpoint(folder) is None


def test_a_lora_adapter_folder_is_a_classifier_for_its_task(models_dir: Path, tmp_path: Path) -> None:
    pytest.importorskip("peft")
    from peft import LoraConfig, TaskType, get_peft_model
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    base = AutoModelForSequenceClassification.from_pretrained(models_dir / "mnli")
    config = LoraConfig(
        task_type=TaskType.SEQ_CLS, r=2, target_modules=["query", "value"], modules_to_save=["classifier"]
    )
    adapter = tmp_path / "lora" / "run1"
    get_peft_model(base, config).save_pretrained(adapter)
    AutoTokenizer.from_pretrained(models_dir / "mnli").save_pretrained(adapter)
    (adapter / "nlue_results.json").write_text(json.dumps({"task": "mnli"}), encoding="utf-8")
    assert describe_checkpoint(adapter) == ("classifier", ("mnli",))
    service = SpaceService(SpaceSettings(models=tmp_path / "lora", results_dir=tmp_path / "none"))
    output, _ = service.predict("mnli", "lora/run1", NEPALI, NEPALI, "")
    assert set(output) == set(TASKS["mnli"].label_names)


def test_models_file_lists_folders_and_hub_ids(models_dir: Path, tmp_path: Path) -> None:
    spec = tmp_path / "models.yaml"
    spec.write_text(
        f"""
scan: [{models_dir}]
models:
  - path: my-org/xlmr-nlue-qnli
    name: XLM-R QNLI
    tasks: [qnli]
  - path: FacebookAI/xlm-roberta-base
    kind: masked-lm
  - path: {models_dir / "sa"}
    name: SA again
""",
        encoding="utf-8",
    )
    catalog = load_catalog(spec)
    assert catalog.classifiers_for("qnli") == ["XLM-R QNLI"]
    assert catalog.classifiers_for("sa") == ["models/sa", "SA again"]
    assert catalog.masked_lms() == ["models/encoder", "FacebookAI/xlm-roberta-base"]
    listed = tmp_path / "models.json"
    listed.write_text(json.dumps([{"path": str(models_dir / "mnli")}]), encoding="utf-8")
    assert load_catalog(listed).classifiers_for("mnli") == [str(models_dir / "mnli")]


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"path": "my-org/model"}, "needs `tasks:`"),
        ({"path": "https://example.com/model", "tasks": ["sa"]}, "is a URL"),
        ({"path": "my-org/model", "tasks": ["sa"], "trust_remote_code": True}, "unknown key"),
        ({"path": "my-org/model", "tasks": ["nope"]}, "unknown NLUE task"),
        ({"path": "my-org/model", "kind": "generator"}, "is not one of"),
    ],
)
def test_models_file_errors_say_where_and_what(tmp_path: Path, entry: dict, message: str) -> None:
    spec = tmp_path / "models.json"
    spec.write_text(json.dumps({"models": [entry]}), encoding="utf-8")
    with pytest.raises(NlueError, match=message) as caught:
        load_catalog(spec)
    assert "models[0]" in str(caught.value)


def test_a_local_folder_declared_for_the_wrong_task_is_an_error(models_dir: Path, tmp_path: Path) -> None:
    spec = tmp_path / "models.json"
    spec.write_text(json.dumps({"models": [{"path": str(models_dir / "sa"), "tasks": ["mnli"]}]}), encoding="utf-8")
    with pytest.raises(NlueError, match="cannot serve mnli"):
        load_catalog(spec)


def test_settings_come_from_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("NLUE_SPACE_MODELS", str(tmp_path / "m.yaml"))
    monkeypatch.setenv("NLUE_SPACE_RESULTS", str(tmp_path / "r"))
    monkeypatch.setenv("NLUE_SPACE_MAX_CHARS", "300")
    settings = SpaceSettings.from_env(default_models="ignored")
    assert (settings.models, settings.results_dir, settings.max_chars) == (tmp_path / "m.yaml", tmp_path / "r", 300)
    assert SpaceSettings.from_env(models=tmp_path / "x").models == tmp_path / "x"
    monkeypatch.setenv("NLUE_SPACE_MAX_CHARS", "lots")
    with pytest.raises(NlueError, match="NLUE_SPACE_MAX_CHARS must be a whole number"):
        SpaceSettings.from_env()


def test_cli_options_build_the_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import argparse

    from nlue.space import add_space_arguments

    parser = argparse.ArgumentParser()
    add_space_arguments(parser)
    args = parser.parse_args(["--models", str(tmp_path / "m.yaml"), "--results", "r", "--port", "7000"])
    assert (args.models, args.results, args.port, args.host) == (tmp_path / "m.yaml", [Path("r")], 7000, None)
    seen = {}
    monkeypatch.setattr("nlue.space.serve.launch", lambda settings, **kw: seen.update(settings=settings, **kw))
    from nlue.space.serve import run_space_command

    assert run_space_command(args) == 0
    assert seen["settings"].models == tmp_path / "m.yaml" and seen["port"] == 7000 and seen["block"] is True


# --- the model cache -----------------------------------------------------------------------


def test_cache_loads_each_model_once_under_concurrent_requests() -> None:
    calls: list[str] = []

    def loader(key: str) -> tuple[str, str]:
        calls.append(key)
        time.sleep(0.05)
        return f"model {key}", "tokenizer"

    cache = ModelCache(loader, max_models=2)
    threads = [threading.Thread(target=cache.get, args=(key,)) for key in ["a", "a", "b", "a", "b"]]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(calls) == ["a", "b"]
    assert cache.get("a").model == "model a" and len(calls) == 2
    cache.get("c")
    assert "b" not in cache and "a" in cache  # least recently used goes first


def test_cache_does_not_keep_a_failed_load() -> None:
    attempts = []

    def loader(key: str) -> tuple[str, str]:
        attempts.append(key)
        if len(attempts) == 1:
            raise OSError("hub timed out")
        return "model", "tokenizer"

    cache = ModelCache(loader)
    with pytest.raises(OSError):
        cache.get("x")
    assert cache.get("x").model == "model" and len(attempts) == 2


# --- GMET ---------------------------------------------------------------------------------


def test_gmet_sentence_needs_one_mask() -> None:
    with pytest.raises(InputError, match="exactly one \\[MASK\\]; it holds 0"):
        check_sentence("नेपालको राजधानी काठमाडौं हो।", 100)
    with pytest.raises(InputError, match="holds 2"):
        check_sentence("[MASK] र [MASK]", 100)
    with pytest.raises(InputError, match="accepts up to 10"):
        check_sentence("[MASK] " + "क" * 20, 10)


def test_gmet_fills_the_blank_with_top_k_words(service: SpaceService) -> None:
    words, details = service.fill_blank("models/encoder", "नेपालको राजधानी [MASK] हो।", 4)
    assert 0 < len(words) <= 4 and "top 4" in details
    probabilities = list(words.values())
    assert probabilities == sorted(probabilities, reverse=True) and all(0 <= p <= 1 for p in probabilities)
    assert all(word.strip() == word and word for word in words)


# --- data browser -------------------------------------------------------------------------


def test_data_pages_show_labels_by_name_and_clamp(service: SpaceService) -> None:
    frame, page, status = service.data_page("mnli", "train", 1, 5)
    assert page == 1 and len(frame) == 5 and "page 1 of" in status
    assert set(frame["label"]) <= set(TASKS["mnli"].label_names)
    assert list(frame.columns) == ["row", *TASKS["mnli"].input_fields, "label"]
    _, last, _ = service.data_page("mnli", "train", 999, 5)
    _, pages, _ = service.data_page("mnli", "train", last, 5)
    assert last == pages > 1
    gmet, _, _ = service.data_page("gmet", "test", 1, 3)
    assert " / " in gmet["answers"].iloc[0] or gmet["answers"].iloc[0]
    random_rows, status = service.data_random("sa", "validation", 4)
    assert len(random_rows) == 4 and "random" in status
    with pytest.raises(NlueError, match="no 'train' split"):
        service.data_page("gmet", "train", 1, 5)


def test_example_inputs_fill_the_form(service: SpaceService) -> None:
    values = service.example_inputs("qadsm", seed=1)
    assert len(values) == max_fields() and all(values)
    sentence, details = service.gmet_example(seed=1)
    assert "[MASK]" in sentence and "accepted:" in details


# --- leaderboard --------------------------------------------------------------------------


def test_paper_rows_come_from_the_registry() -> None:
    rows = {r.model: r for r in paper_rows()}
    assert len(rows) == 10 and "XLM-R Base" in rows
    xlmr = rows["XLM-R Base"]
    assert xlmr.kind == "paper" and xlmr.params_millions == 270
    assert xlmr.task_scores["mnli"] == TASKS["mnli"].paper_results["XLM-R Base"]["macro_f1"]
    assert xlmr.task_scores["stsb"] == pytest.approx(TASKS["stsb"].paper_primary_score("XLM-R Base"))
    assert xlmr.nlue.complete
    expected = nlue_score({t: TASKS[t].paper_results["XLM-R Base"] for t in TASK_NAMES}).score
    assert xlmr.nlue.score == pytest.approx(expected)


@pytest.mark.parametrize("folder", ["empty", "missing"])
def test_no_results_gives_the_paper_rows_and_no_crash(tmp_path: Path, folder: str) -> None:
    if folder == "empty":
        (tmp_path / folder).mkdir()
    assert result_rows(tmp_path / folder).rows == []
    board = load_leaderboard(tmp_path / folder)
    assert len(board.rows) == 10 and board.skipped == []
    assert len(leaderboard_frame([])) == 0
    assert list(leaderboard_frame([]).columns) == [c.name for c in cols.leaderboard_columns()]


def test_results_files_become_one_row_per_model_with_intervals(tmp_path: Path) -> None:
    _result(tmp_path, "sa", {"accuracy": 0.7, "macro_f1": 0.6, "macro_f1_ci_low": 0.5, "macro_f1_ci_high": 0.7})
    _result(tmp_path, "stsb", {"pearson": 0.5, "spearman": 0.3, "r2": 0.1}, dataset={"id": "me/nlue"})
    _result(tmp_path, "sa", {"accuracy": 0.9, "macro_f1": 0.8}, name="other", base_model="FacebookAI/xlm-roberta-base")
    board = result_rows(tmp_path)
    rows = {r.model: r for r in board.rows}
    assert set(rows) == {"tiny-bert", "other"} and board.skipped == []
    tiny = rows["tiny-bert"]
    assert tiny.task_scores == {"sa": 0.6, "stsb": pytest.approx(0.4)}
    assert tiny.intervals == {"sa": (0.5, 0.7)}
    assert not tiny.nlue.complete and tiny.nlue.score == pytest.approx(0.5)
    assert rows["other"].params_millions == 270  # base model is a paper model
    frame = leaderboard_frame([tiny], show_ci=True).iloc[0]
    assert frame["NLUE score"] == 50.0 and frame["SA"] == 60.0 and frame["STSB"] == 40.0
    assert frame["SA 95% CI"] == "50.0–70.0" and frame["STSB 95% CI"] == ""
    assert frame["Tasks"] == "2/12 incomplete" and pd.isna(frame["MNLI"])  # a missing task stays empty


def test_sample_data_runs_are_labelled(tmp_path: Path) -> None:
    _result(tmp_path, "sa", {"accuracy": 0.5, "macro_f1": 0.5}, dataset={"id": "nlue sample data", "is_sample": True})
    assert "sample" in result_rows(tmp_path).rows[0].data


def test_newest_file_wins_for_a_task(tmp_path: Path) -> None:
    _result(tmp_path, "sa", {"accuracy": 0.5, "macro_f1": 0.5}, created="2026-01-01T00:00:00+00:00")
    _result(
        tmp_path, "sa", {"accuracy": 0.9, "macro_f1": 0.9}, name="tiny-bert/again", created="2026-02-01T00:00:00+00:00"
    )
    old = tmp_path / "tiny-bert" / "again" / "sa.json"
    old.rename(tmp_path / "tiny-bert" / "sa-rerun.json")
    (tmp_path / "tiny-bert" / "again").rmdir()
    (row,) = result_rows(tmp_path).rows
    assert row.task_scores == {"sa": 0.9}


def test_malformed_results_files_are_skipped_and_reported(tmp_path: Path) -> None:
    _result(tmp_path, "mnli", {"accuracy": 0.4, "macro_f1": 0.35})
    (tmp_path / "broken.json").write_text("{not json", encoding="utf-8")
    (tmp_path / "tiny-bert" / "notes.json").write_text(json.dumps({"hello": 1}), encoding="utf-8")
    good = json.loads((tmp_path / "tiny-bert" / "mnli.json").read_text(encoding="utf-8"))
    bad = {
        "unknown-task": {**good, "task": "squad"},
        "text-metric": {**good, "metrics": {"accuracy": "high", "macro_f1": 0.3}},
        "no-primary": {**good, "task": "sa", "metrics": {"accuracy": 0.3}},
        "nan": {**good, "metrics": {"macro_f1": float("nan")}},
    }
    for name, data in bad.items():
        (tmp_path / "bad" / name).mkdir(parents=True)
        (tmp_path / "bad" / name / "x.json").write_text(json.dumps(data), encoding="utf-8")
    board = result_rows(tmp_path)
    assert [r.model for r in board.rows] == ["tiny-bert"]
    assert len(board.skipped) == 6
    skipped = " | ".join(board.skipped)
    assert "broken.json" in skipped and "unknown NLUE task 'squad'" in skipped and "not a number" in skipped
    assert "lack its primary metric" in skipped and "non-finite" in skipped


def test_filter_and_sort(tmp_path: Path) -> None:
    _result(tmp_path, "sa", {"accuracy": 0.99, "macro_f1": 0.99}, name="xlm-best")
    rows = load_leaderboard(tmp_path).rows
    assert [r.model for r in filter_rows(rows, ["fine-tune"])] == ["xlm-best"]
    assert {r.model for r in filter_rows(rows, None, "xlm")} == {"XLM-R Base", "xlm-best"}
    assert len(filter_rows(rows, ["paper", "fine-tune"], complete_only=True)) == 10
    assert filter_rows(rows, []) == []
    by_sa = sort_rows(rows, "SA")
    assert by_sa[0].model == "m-DeBERTa-v3" and by_sa[-1].model == "xlm-best"  # unverified: ranked after the checked
    by_mnli = sort_rows(rows, "MNLI")
    assert by_mnli[0].model == "m-DeBERTa-v3" and by_mnli[-1].model == "xlm-best"  # missing goes last
    assert sort_rows(rows, "MNLI", descending=False)[-1].model == "xlm-best"
    by_name = [r.model for r in sort_rows(rows, "Model", descending=False)]
    assert by_name == sorted(by_name, key=str.casefold)
    with pytest.raises(ValueError, match="cannot sort by"):
        sort_rows(rows, "Colour")


def test_columns_follow_the_registry() -> None:
    names = [c.name for c in cols.leaderboard_columns()]
    assert [c.task for c in cols.TASK_COLUMNS] == list(TASK_NAMES)
    assert names[:7] == ["Model", "Data", "Check", "Kind", "Source", "NLUE score", "Tasks"] and "GMET" in names
    with_ci = [c.name for c in cols.leaderboard_columns(show_ci=True)]
    assert with_ci.index("SA 95% CI") == with_ci.index("SA") + 1
    assert len(cols.column_widths(cols.leaderboard_columns(True))) == len(with_ci)
    assert all(c.description for c in cols.TASK_COLUMNS)
    assert get_task("stsb").primary_metric in {"pearson_spearman_mean"}


def test_gmet_automatic_and_judged_scores_are_kept_apart(tmp_path: Path) -> None:
    gmet = {"accuracy": 0.5, "equality": 0.9, "combined": 0.45, "sigma": 0.1}
    eleven = {t: ({"pearson": 0.5, "spearman": 0.5, "r2": 0.2} if t == "stsb" else {"accuracy": 0.6, "macro_f1": 0.6})
              for t in TASK_NAMES if t != "gmet"}  # fmt: skip
    for task, metrics in eleven.items():
        _result(tmp_path, task, metrics)
    _result(tmp_path, "gmet", gmet, verdicts="automatic", kind="zero-shot")
    (row,) = result_rows(tmp_path).rows
    assert row.automatic_scores == {"gmet": 0.45} and "gmet" not in row.task_scores
    assert not row.nlue.complete and row.nlue.missing == ("gmet",)  # automatic GMET never enters the NLUE score
    frame = leaderboard_frame([row]).iloc[0]
    assert frame["GMET auto"] == 45.0 and pd.isna(frame["GMET"])
    assert frame["Tasks"] == "11/12 incomplete (GMET auto only: judge it to count)"
    _result(tmp_path, "gmet", {**gmet, "combined": 0.4}, verdicts="human", kind="zero-shot")
    (row,) = result_rows(tmp_path).rows
    assert row.task_scores["gmet"] == 0.4 and row.automatic_scores["gmet"] == 0.45 and row.nlue.complete
    paper = leaderboard_frame([row], view=cols.PAPER_VIEW).iloc[0]
    assert paper["GMET C"] == 40.0 and paper["GMET auto C"] == 45.0


def test_an_older_gmet_result_without_verdicts_counts_as_automatic(tmp_path: Path) -> None:
    path = _result(tmp_path, "gmet", {"accuracy": 0.5, "combined": 0.45}, kind="baseline")
    data = json.loads(path.read_text(encoding="utf-8"))
    data.pop("verdicts")
    data["details"] = {"verdicts": "automatic: the top-1 predicted word equals one of the acceptable answers"}
    path.write_text(json.dumps(data), encoding="utf-8")
    (row,) = result_rows(tmp_path).rows
    assert row.automatic_scores == {"gmet": 0.45} and row.task_scores == {}


def test_a_diagnostic_never_gets_an_nlue_score(tmp_path: Path) -> None:
    _result(tmp_path, "gmet", {"accuracy": 0.9, "combined": 0.9}, kind="diagnostic", verdicts="automatic")
    _result(tmp_path, "sa", {"accuracy": 0.9, "macro_f1": 0.9}, kind="diagnostic")
    (row,) = result_rows(tmp_path).rows
    assert row.is_diagnostic and row.nlue.score is None
    frame = leaderboard_frame([row]).iloc[0]
    assert pd.isna(frame["NLUE score"]) and frame["Tasks"] == "diagnostic: not scored"
    assert sort_rows(load_leaderboard(tmp_path).rows, "NLUE score")[-1].model == row.model


def test_the_paper_view_shows_every_printed_number_and_the_flags() -> None:
    names = [c.name for c in cols.leaderboard_columns(view=cols.PAPER_VIEW)]
    assert names[:5] == ["Model", "Data", "Check", "Kind", "Source"] and "NLUE score" not in names
    assert [(c.task, c.metric) for c in cols.PAPER_METRIC_COLUMNS] == list(RESULT_COLUMNS)
    frame = leaderboard_frame(paper_rows(), view=cols.PAPER_VIEW).set_index("Model")
    assert frame.loc["NepBERTa", "WG acc"] == 67.12 and frame.loc["NepBERTa", "WG F1"] == 50.52  # as printed
    assert frame.loc["m-DeBERTa-v3", "STSB Spearman"] == 90.22 and frame.loc["m-DeBERTa-v3", "GMET C"] == 42.77
    assert frame.loc["NepBERTa", "Flags"] == "⚠ WG, STSB"
    assert frame.loc["m-DeBERTa-v3", "Flags"] == "⚠ STSB, GMET" and frame.loc["NepBERT", "Flags"] == "⚠ CR"
    assert [r.model for r in sort_rows(paper_rows(), cols.AS_LISTED)] == [m.name for m in PAPER_MODELS]


def test_ranking_by_a_convention_says_so(service: SpaceService) -> None:
    from nlue.boards import text

    _, listed = service.leaderboard_table(["paper"])
    assert "convention" not in listed
    _, ranked = service.leaderboard_table(["paper"], "", False, "NLUE score", True, False, cols.PRIMARY_VIEW)
    assert "NLUE score, an nlue convention" in ranked
    _, by_stsb = service.leaderboard_table(["paper"], "", False, "STSB", True, False, cols.PRIMARY_VIEW)
    assert "Pearson and Spearman, an nlue convention" in by_stsb
    assert "nlue convention" in text.leaderboard_legend() and "not comparable" in text.leaderboard_legend()
    legend = text.flags_legend()
    assert "NepBERTa, WG" in legend and "m-DeBERTa-v3, GMET" in legend and legend.count("STSB") == 9


def test_service_leaderboard_reports_skipped_files(service: SpaceService) -> None:
    (service.settings.results_dir / "broken.json").write_text("{", encoding="utf-8")
    service.reload_results()
    frame, status = service.leaderboard_table(["paper"], "", False, "NLUE score", True, False)
    assert len(frame) == 10 and "1 results file(s) skipped" in status
    assert service.default_chart_models()[0] == frame.iloc[0]["Model"]
    figure = service.chart(["XLM-R Base", "not a model"])
    assert len(figure.axes[0].patches) == len(TASK_NAMES) + 1


# --- the Space folder ------------------------------------------------------------------------

SPACE_DIR = Path(__file__).resolve().parents[1] / "spaces" / "nlue"


def test_space_card_declares_what_the_hub_needs() -> None:
    from huggingface_hub import SpaceCard

    card = SpaceCard.load(SPACE_DIR / "README.md").data.to_dict()
    assert card["sdk"] == "gradio" and card["sdk_version"].startswith("6.")
    assert card["python_version"] == "3.11" and (SPACE_DIR / card["app_file"]).is_file()
    assert 0 < len(card["short_description"]) <= 60
    for key in ("title", "emoji", "colorFrom", "colorTo", "pinned", "tags"):
        assert key in card
    requirements = (SPACE_DIR / "requirements.txt").read_text(encoding="utf-8")
    assert "nlue[" in requirements and "gradio" in requirements and "torch==" in requirements
    assert load_catalog(SPACE_DIR / "models.yaml") is not None  # the shipped models file parses


# --- the page ------------------------------------------------------------------------------


def test_page_builds_without_network_and_locks_down_the_model_choice(
    service: SpaceService, monkeypatch: pytest.MonkeyPatch
) -> None:
    gr = pytest.importorskip("gradio")

    def refuse(*args, **kwargs):
        raise AssertionError(f"network access while building the page: {args}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    from nlue.space.ui import build_demo

    demo = build_demo(service.settings, service)
    dropdowns = [b for b in demo.blocks.values() if isinstance(b, gr.Dropdown)]
    assert {"try-model", "gmet-model"} <= {d.elem_id for d in dropdowns}
    assert not any(d.allow_custom_value for d in dropdowns)  # no dropdown takes a typed value
    events = {fn.api_name: fn for fn in demo.fns.values() if fn.api_name}
    # Predictions are micro-batched, so their pool holds two batches; GMET keeps its own narrow pool.
    assert events["predict"].concurrency_limit == service.settings.predict_concurrency
    assert events["fill_blank"].concurrency_limit == service.settings.model_concurrency
    assert events["predict"].concurrency_id != events["fill_blank"].concurrency_id
    assert demo._queue.max_size == service.settings.queue_size


def test_page_handlers_turn_refusals_into_gradio_errors(service: SpaceService) -> None:
    gr = pytest.importorskip("gradio")
    from nlue.space.handler_errors import visitor_errors

    with pytest.raises(gr.Error, match="not a classifier this Space offers"):
        visitor_errors(service.predict)("sa", "/etc/passwd", NEPALI, "", "")
    # Input to fix is a warning, not an error: the outputs stay as they were.
    with pytest.warns(UserWarning, match="accepts up to 200"):
        kept = visitor_errors(service.predict, outputs=2)("sa", "models/sa", "क" * 500, "", "")
    assert kept == (gr.skip(), gr.skip())

    def crash() -> None:
        raise RuntimeError("boom")

    with pytest.raises(gr.Error, match="Something went wrong"):
        visitor_errors(crash)()


def test_leaderboard_shows_the_model_name_the_results_give(tmp_path: Path) -> None:
    from nlue.boards.leaderboard import result_rows
    from nlue.results import RunResult, write_result

    write_result(RunResult(task="gmet", model="baseline:bigram", kind="baseline", metrics={"combined": 0.04}), tmp_path)
    other = RunResult(task="sa", model="runs/sa", kind="fine-tune", metrics={"macro_f1": 0.5})
    write_result(other, tmp_path, name="my-model")
    assert sorted(row.model for row in result_rows(tmp_path).rows) == ["baseline:bigram", "my-model"]
