"""`nlue gmet --model` end to end with tiny masked LMs trained here, and the download-free baselines."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("matplotlib")

from nlue.gmet.cli import main  # noqa: E402
from nlue.gmet.evaluate import dataset_info, evaluate, make_predictor, run_result  # noqa: E402
from nlue.gmet.items import load_items  # noqa: E402
from nlue.gmet.report import chart_title  # noqa: E402
from nlue.lm.backends import WORD_BASELINES as BASELINES  # noqa: E402
from nlue.lm.baselines.ngram import NgramBaseline, corpus_texts  # noqa: E402
from nlue.lm.baselines.tiny_mlm import train_tiny_mlm  # noqa: E402
from nlue.registry.tasks import GMET_CATEGORY_THEME  # noqa: E402
from nlue.scores import score_task  # noqa: E402
from nlue.text.normalize import normalize_answer  # noqa: E402

RESAMPLES = 200


pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def tiny_models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A BERT-style (WordPiece, [MASK]) and a RoBERTa-style (byte-level BPE, <mask>) masked LM, trained briefly."""
    root = tmp_path_factory.mktemp("gmet-models")
    texts = list(corpus_texts())
    return {family: train_tiny_mlm(root / family, texts, family, steps=15) for family in ("bert", "roberta")}


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("family", ["bert", "roberta"])
def test_end_to_end(tiny_models: dict[str, Path], tmp_path: Path, family: str, capsys: pytest.CaptureFixture[str]):
    out, results = tmp_path / "out", tmp_path / "results"
    code = main(["--model", str(tiny_models[family]), "--out", str(out), "--results-dir", str(results),
                 "--name", f"tiny-{family}", "--bootstrap", str(RESAMPLES), "--seed", "3", "--quiet"])  # fmt: skip
    assert code == 0
    printed = capsys.readouterr().out
    assert "A = " in printed and "C = " in printed
    for name in ("predictions.csv", "predictions.jsonl", "categories.csv", "categories.md", "run.json"):
        assert (out / name).is_file(), name
    assert (out / "gmet_categories.png").stat().st_size > 10_000
    rows = _rows(out / "predictions.jsonl")
    assert len(rows) == 150
    for row in rows:
        assert row["prediction"] == row["top_k"][0]
        assert 1 <= len(row["top_k"]) <= 10
        assert len({normalize_answer(w) for w in row["top_k"]}) == len(row["top_k"])
        assert row["top_k_scores"] == sorted(row["top_k_scores"], reverse=True)
        assert row["theme"] == GMET_CATEGORY_THEME[row["category"]]
        wanted = {normalize_answer(a) for a in row["answers"]}
        assert row["automatic"] == int(normalize_answer(row["prediction"]) in wanted)
    # A, E and C of the results file are the metric recomputed from the per-item file.
    saved = json.loads((results / f"tiny-{family}" / "gmet.json").read_text(encoding="utf-8"))
    assert saved["task"] == "gmet" and saved["kind"] == "zero-shot" and saved["dataset"]["is_sample"] is True
    categories = [r["category"] for r in rows]
    from_words = score_task("gmet", [r["prediction"] for r in rows], [r["answers"] for r in rows],
                            categories=categories, bootstrap_resamples=RESAMPLES, seed=3)  # fmt: skip
    from_verdicts = score_task("gmet", [r["prediction"] for r in rows], [r["automatic"] for r in rows],
                               categories=categories)  # fmt: skip
    for key in ("accuracy", "equality", "combined", "sigma"):
        assert saved["metrics"][key] == pytest.approx(from_words[key])
        assert saved["metrics"][key] == pytest.approx(from_verdicts[key])
        assert saved["metrics"][f"{key}_ci_low"] == pytest.approx(from_words[f"{key}_ci_low"])
        assert saved["metrics"][f"{key}_ci_high"] == pytest.approx(from_words[f"{key}_ci_high"])
    assert saved["primary_score"] == pytest.approx(from_words["combined"])
    assert "paper's own headline score" in saved["primary_note"] and saved["verdicts"] == "automatic"
    assert "SAMPLE DATA" in saved["notes"]
    run = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert run["metrics"]["category_accuracy"] == pytest.approx(from_words["category_accuracy"])
    with (out / "categories.csv").open(encoding="utf-8", newline="") as handle:
        table = list(csv.DictReader(handle))
    assert len(table) == 75 and sum(int(r["items"]) for r in table) == 150
    assert {r["category"]: float(r["accuracy"]) for r in table} == pytest.approx(from_words["category_accuracy"])


def test_limited_open_vocabulary_run_marks_empty_categories(tiny_models: dict[str, Path], tmp_path: Path):
    out = tmp_path / "out"
    code = main(["--model", str(tiny_models["roberta"]), "--out", str(out), "--no-results", "--limit", "12",
                 "--no-answer-candidates", "--max-pieces", "2", "--top-k", "4", "--bootstrap", "0", "--quiet"])  # fmt: skip
    assert code == 0
    rows = _rows(out / "predictions.jsonl")
    assert len(rows) == 12 and all(len(r["top_k"]) <= 4 for r in rows)
    run = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert run["settings"]["answer_candidates"] is False and run["dataset"]["limit"] == 12
    with (out / "categories.csv").open(encoding="utf-8", newline="") as handle:
        table = list(csv.DictReader(handle))
    assert len(table) == 75
    assert sum(1 for r in table if r["accuracy"] == "") == 75 - len({r["category"] for r in rows})


@pytest.mark.parametrize("model", ["bert", "roberta", "baseline:bigram"])
def test_default_predictions_never_depend_on_the_listed_answers(tiny_models: dict[str, Path], model: str):
    """The model proposes its words from the sentence alone: other answers, or none, change nothing."""
    import dataclasses

    items = load_items(None)[:40]
    name = model if model.startswith("baseline:") else str(tiny_models[model])
    predictor = make_predictor(name, top_k=5, max_pieces=2, show_progress=False)
    runs = [
        predictor.predict(items),
        predictor.predict([dataclasses.replace(item, answers=("अरूनै", "कुनैशब्द")) for item in items]),
        predictor.predict([dataclasses.replace(item, answers=()) for item in items]),
    ]
    first = [(p.top_k, p.scores) for p in runs[0]]
    assert all([(p.top_k, p.scores) for p in run] == first for run in runs[1:])


def test_answer_ranked_mode_is_a_labelled_diagnostic(
    tiny_models: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    results = tmp_path / "results"
    common = ["--model", str(tiny_models["bert"]), "--results-dir", str(results), "--name", "tiny",
              "--bootstrap", "0", "--max-pieces", "2", "--quiet"]  # fmt: skip
    assert main([*common, "--out", str(tmp_path / "plain")]) == 0
    plain_out = capsys.readouterr().out
    assert main([*common, "--out", str(tmp_path / "diag"), "--answer-ranked-diagnostic"]) == 0
    printed = capsys.readouterr().out
    assert "DIAGNOSTIC" in printed and "DIAGNOSTIC" not in plain_out
    plain = json.loads((results / "tiny" / "gmet.json").read_text(encoding="utf-8"))
    diagnostic = json.loads((results / "tiny__answer-ranked-diagnostic" / "gmet.json").read_text(encoding="utf-8"))
    assert plain["kind"] == "zero-shot" and plain["verdicts"] == "automatic"
    assert diagnostic["kind"] == "diagnostic" and diagnostic["details"]["diagnostic"] == "answer-ranked"
    assert "DIAGNOSTIC" in diagnostic["notes"] and "DIAGNOSTIC" in (tmp_path / "diag" / "categories.md").read_text()
    # Ranking the listed answers can only add credit: the diagnostic is an upper reference, not a score.
    assert diagnostic["metrics"]["accuracy"] >= plain["metrics"]["accuracy"]


def test_items_without_answers_are_predicted_but_not_scored(tiny_models: dict[str, Path], tmp_path: Path):
    import dataclasses

    from nlue.gmet.evaluate import write_run

    items = [dataclasses.replace(item, answers=()) for item in load_items(None)[:10]]
    predictor = make_predictor(str(tiny_models["bert"]), top_k=3, max_pieces=1, show_progress=False)
    run = evaluate(predictor, items, dataset_info(None, "test", len(items)), bootstrap_resamples=None)
    assert run.verdicts is None and run.metrics == {} and "No automatic score" in run.notes[0]
    paths = write_run(run, tmp_path / "out", results_dir=tmp_path / "results")
    assert "result" not in paths and not (tmp_path / "results").exists()
    assert paths["sheet"].is_file() and json.loads(paths["run"].read_text(encoding="utf-8"))["verdicts"] is None


def test_chart_title_says_when_data_is_the_sample():
    metrics = {"accuracy": 0.5, "equality": 0.9, "combined": 0.45}
    assert "SAMPLE DATA" in chart_title("m", metrics, 150, is_sample=True, verdicts="automatic")
    title = chart_title("m", metrics, 1500, is_sample=False, verdicts="human")
    assert "SAMPLE DATA" not in title and "A = 0.5000" in title and "human verdicts" in title


@pytest.mark.parametrize("name", ["baseline:unigram", "baseline:bigram"])
def test_ngram_baselines(name: str):
    items = load_items(None)
    predictor = make_predictor(name, top_k=5)
    run = evaluate(predictor, items, dataset_info(None, "test", len(items)), bootstrap_resamples=None)
    assert run.kind == "baseline" and run.model == name
    assert all(1 <= len(p.top_k) <= 5 for p in run.predictions)
    if name == "baseline:unigram":  # no context: the same word everywhere
        assert len({p.prediction for p in run.predictions}) == 1
    result = run_result(run)
    assert result.kind == "baseline" and "trained on the embedded sample data" in result.notes
    assert result.primary_score == pytest.approx(run.metrics["combined"])
    assert 0.0 <= run.metrics["accuracy"] <= 1.0


def test_baseline_corpus_never_sees_gmet():
    sentences = {item.sentence.replace("[MASK]", "").split()[0] for item in load_items(None)}
    corpus = list(corpus_texts())
    assert corpus and not any("[MASK]" in text for text in corpus)
    gmet_texts = {item.sentence for item in load_items(None)}
    assert not gmet_texts & set(corpus)
    assert sentences  # sanity: the GMET items were read


def test_bigram_baseline_uses_both_neighbours():
    model = NgramBaseline("baseline:bigram", ["म भात खान्छु", "म भात खान्छु", "ऊ रोटी पकाउँछ", "ऊ रोटी पकाउँछ"])
    from nlue.gmet.items import GmetItem

    item = GmetItem(0, "म [MASK] खान्छु", "Food", "Daily Life & Home", ("भात",))
    assert model.predict([item])[0].prediction == "भात"
    item = GmetItem(1, "ऊ [MASK] पकाउँछ", "Food", "Daily Life & Home", ("रोटी",))
    assert model.predict([item])[0].prediction == "रोटी"


def test_tiny_mlm_baseline_is_a_baseline(monkeypatch: pytest.MonkeyPatch, tiny_models: dict[str, Path]):
    import nlue.lm.baselines.tiny_mlm as baseline

    monkeypatch.setattr(baseline, "tiny_mlm_baseline_path", lambda *a, **k: tiny_models["bert"])
    predictor = make_predictor("baseline:tiny-mlm", show_progress=False)
    assert predictor.name == "baseline:tiny-mlm" and predictor.kind == "baseline"
    assert set(BASELINES) == {"baseline:unigram", "baseline:bigram", "baseline:tiny-mlm"}


def test_help_and_usage_errors(capsys: pytest.CaptureFixture[str], tmp_path: Path):
    assert main(["--help"]) == 0
    text = capsys.readouterr().out
    for needle in ("--model", "--judgments", "--ties", "baseline:bigram", "predictions.csv", "Cohen's kappa"):
        assert needle in text
    assert main([]) == 2  # one of --model / --judgments is required
    assert main(["--model", "baseline:nope", "--no-results", "--out", str(tmp_path)]) == 2
    assert "unknown baseline 'baseline:nope'" in capsys.readouterr().err
    missing = tmp_path / "no-such-model"
    assert main(["--model", str(missing), "--no-results", "--out", str(tmp_path / "o"), "--limit", "2"]) == 2
    assert str(missing) in capsys.readouterr().err


def test_vectorised_ngram_scores_equal_the_formula():
    texts = list(corpus_texts())
    for name in ("baseline:unigram", "baseline:bigram"):
        model = NgramBaseline(name, texts)
        words = [*model.vocabulary[:50], "कहिल्यैनदेखिएकोशब्द"]
        for left, right in (("म", "छ"), ("<s>", "</s>"), ("कहिल्यैनदेखिएकोशब्द", "र")):
            expected = [model.score(w, left, right) for w in words]
            assert model.score_vector(words, left, right).tolist() == pytest.approx(expected)
