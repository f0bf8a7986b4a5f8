"""`nlue report`: real runs of the commands laid out beside the papers' rows, checked cell by cell, and in a browser.

The results folder is made by the commands themselves on the embedded sample data with tiny
local models: the baseline (two seeds), a tiny classifier, GMET's bigram baseline, a tiny causal
LM on the Urdu sample exam in both prompt languages at 0 and 1 shots, and neDIOM zero-shot with
two sizes of the tiny LM. The page is opened in headless Chromium and a screenshot kept in
test-artifacts/report/ (gitignored).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from nlue.boards.columns import PAPER_METRIC_COLUMNS
from nlue.cli import main
from nlue.evals.compare.pairs import compare_runs
from nlue.evals.report.runs import model_family, model_size
from nlue.registry.mcq import URDUMMLU_TABLE4
from nlue.registry.nediom import TABLE3
from nlue.registry.paper import PAPER_MODELS, RESULT_COLUMNS, paper_model
from nlue.text.safe import csv_cell_read
from tests.browser import ARTIFACTS as TEST_ARTIFACTS
from tests.browser import chromium_page

pytest.importorskip("matplotlib")
RESAMPLES = 300
ARTIFACTS = TEST_ARTIFACTS / "report"
SMALL, LARGE = "tiny-gpt2-0.1m", "tiny-gpt2-0.2m"  # n_embd 32 and 64: about 0.09M and 0.20M parameters


@pytest.fixture(scope="module")
def results(tmp_path_factory, sample_build, exam_build, nediom_build, one_torch_thread) -> Path:
    from nlue.lm.tiny import save_tiny_causal_lm, save_tiny_classifier

    root = tmp_path_factory.mktemp("report-runs")
    out = root / "results"
    small = save_tiny_causal_lm(root / SMALL, "gpt2")
    large = save_tiny_causal_lm(root / LARGE, "gpt2", n_embd=64, n_inner=128)
    nlue, exams, idioms = (str(b.repo_dir) for b in (sample_build, exam_build, nediom_build))
    common = ["--results-dir", str(out), "-q"]
    runs = [
        ["baseline", "--tasks", "sa,rte,stsb", "--dataset", nlue, "--bootstrap", "0", "--name", "tfidf-a"],
        ["baseline", "--tasks", "sa,rte", "--dataset", nlue, "--bootstrap", "0", "--name", "tfidf-b", "--seed", "3"],
        ["evaluate", "--model", str(save_tiny_classifier(root / "clf", task="sa")), "--task", "sa", "--dataset",
         nlue, "--bootstrap", "0", "--name", "tiny-clf"],
        ["gmet", "--model", "baseline:bigram", "--limit", "20", "--out", str(root / "gmet"), "--bootstrap", "0"],
        *(["llm", "mcq", "--model", str(small), "--dataset", exams, "--task", "mcq_ur", "--prompt-language", "both",
           "--shots", shots, "--mode", "loglik", "--no-chart", "--bootstrap", "0", "--device", "cpu"]
          for shots in ("0", "1")),
        ["idioms", "eval", "--model", str(small), "--setting", "zero-shot", "--dataset", idioms, "--bootstrap", "0"],
        ["idioms", "eval", "--model", str(large), "--setting", "zero-shot", "--context", "S2", "--dataset", idioms,
         "--bootstrap", "0"],
    ]  # fmt: skip
    for argv in runs:
        assert main([*argv, *common]) == 0, argv
    # A run written before per-item predictions existed: in the tables, left out of the paired tests.
    legacy = json.loads((out / "tfidf-a" / "sa.json").read_text(encoding="utf-8"))
    legacy.pop("predictions")
    (out / "legacy").mkdir()
    (out / "legacy" / "sa.json").write_text(json.dumps(legacy), encoding="utf-8")
    return out


@pytest.fixture(scope="module")
def report(results: Path, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("report") / "site"
    assert main(["report", str(results), "--out", str(out), "--resamples", str(RESAMPLES), "-q"]) == 0
    return out


def _csv(report: Path, name: str) -> list[dict[str, str]]:
    with (report / f"{name}.csv").open(encoding="utf-8", newline="") as handle:  # text cells carry the formula guard
        return [{k: csv_cell_read(v) for k, v in row.items()} for row in csv.DictReader(handle)]


def _file(results: Path, run: str, task: str) -> dict:
    return json.loads((results / run / f"{task}.json").read_text(encoding="utf-8"))


def test_every_section_is_on_the_page_in_markdown_and_csv(report: Path) -> None:
    page = (report / "index.html").read_text(encoding="utf-8")
    markdown = (report / "report.md").read_text(encoding="utf-8")
    for section in ("nlue", "nediom", "mcq", "models", "significance"):
        assert f'<section id="{section}">' in page
    for title in ("NLUE Table 2 · single sentence", "NLUE Table 5 · GMET", "neDIOM Table 3", "neDIOM Figure 3",
                  "neDIOM Figure 4", "neDIOM Figure 5", "UrduMMLU Table 4", "Few-shot: k-shot minus zero-shot",
                  "UrduMMLU Table 15", "mcq_ur · our runs, accuracy by level", "monolingual vs multilingual",
                  "Parameters vs NLUE score", "sa · no prompt (fine-tuned, baselines, classifiers) · row minus column"):  # fmt: skip
        assert title in page and title in markdown, title
    for name in ("nlue_table2_single_sentence", "nlue_table3_similarity_paraphrase", "nlue_table4_inference",
                 "nlue_table5_gmet", "nediom_table3", "mcq_table4", "mcq_fewshot_deltas", "mcq_stem_humanities_paper",
                 "mcq_stem_humanities_ours", "mcq_ur_by_level", "models_by_pretraining", "significance_pairs"):  # fmt: skip
        assert (report / f"{name}.csv").is_file() and f'href="{name}.csv"' in page
    images = sorted(p.name for p in report.glob("*.png"))
    assert "nediom_figure5.png" in images and "nlue_scores_1.png" in images
    assert all(f'src="{name}"' in page for name in images)  # relative links, beside the page
    assert not list(report.parent.glob(".site.*"))  # no temporary folder left behind


def test_the_papers_rows_are_as_printed_with_the_leaderboards_flags(report: Path) -> None:
    by_model, flags = {}, {}
    for table in ("nlue_table2_single_sentence", "nlue_table3_similarity_paraphrase", "nlue_table4_inference",
                  "nlue_table5_gmet"):  # fmt: skip
        for row in _csv(report, table):
            if row["numbers"] == "paper, as printed":
                by_model.setdefault(row["Model"], {}).update(row)
                flags[row["Model"]] = "; ".join(f for f in (flags.get(row["Model"]), row["flags"]) if f)
    assert list(by_model) == [m.name for m in PAPER_MODELS]
    columns = {(c.task, c.metric): c.name for c in PAPER_METRIC_COLUMNS}
    for model in PAPER_MODELS:  # every printed number, unchanged
        printed = [float(by_model[model.name][columns[key]]) for key in RESULT_COLUMNS]
        assert printed == list(model.results_percent), model.name
    assert "WG acc" in flags["NepBERTa"] and "STSB R²" in flags["XLM-R Base"]
    assert flags["NepBERT"] == "CR acc: accuracy and macro-F1 cannot both hold; CR F1: accuracy and " \
                                          "macro-F1 cannot both hold"  # fmt: skip
    page = (report / "index.html").read_text(encoding="utf-8")
    assert 'title="R² &gt; Pearson²: columns probably swapped">⚠ 81.33' in page  # m-DeBERTa-v3, STS-B Spearman

    table4 = {(r["model"], r["prompt"]): r for r in _csv(report, "mcq_table4") if r["numbers"] == "paper, as printed"}
    for paper in URDUMMLU_TABLE4:
        assert float(table4[(paper.model, "native")]["All (parseable)"]) == paper.ur[-1]
        assert table4[(paper.model, "en")]["Inv%"] == paper.en_invalid
    assert "above what its Inv% allows" in table4[("BLOOMZ-3B", "native")]["flags"]
    gaps = {r["model"]: r for r in _csv(report, "mcq_stem_humanities_paper")}
    assert float(gaps["Gemini-3.5-Flash"]["gap, Urdu prompt (Table 15)"]) == 12.50  # as the paper quotes it

    table3 = [r for r in _csv(report, "nediom_table3") if r["numbers"] == "paper, as printed"]
    gpt = next(r for r in table3 if r["model"] == "GPT-3.5" and r["setting"] == "10-shot")
    assert float(gpt["v1 S2/with-idiom"]) == TABLE3["S2"]["GPT-3.5"][4]  # 0.52
    xlmr = next(r for r in table3 if r["model"] == "XLM-R" and r["setting"] == "zero-shot")
    assert "on the always idiomatic floor" in xlmr["flags"]  # 0.44, printed: the always-idiomatic floor
    deltas = [r for r in _csv(report, "mcq_fewshot_deltas") if r["numbers"] == "paper, as printed"]
    assert [(r["prompt"], r["Δ 5-shot"]) for r in deltas] == [("english", "2.67"), ("native", "2.28")]


def test_our_numbers_are_the_results_files(report: Path, results: Path) -> None:
    ours = {r["Model"]: r for r in _csv(report, "nlue_table2_single_sentence") if r["numbers"] == "ours"}
    assert set(ours) == {"tfidf-a", "tfidf-b", "tiny-clf", "legacy"}
    for run in ("tfidf-a", "tfidf-b", "tiny-clf"):
        metrics = _file(results, run, "sa")["metrics"]
        assert float(ours[run]["SA F1"]) == round(100 * metrics["macro_f1"], 2)
        assert float(ours[run]["SA acc"]) == round(100 * metrics["accuracy"], 2)
        assert ours[run]["Data"] == "⚠ sample data"
    stsb = next(r for r in _csv(report, "nlue_table3_similarity_paraphrase") if r["Model"] == "tfidf-a")
    assert float(stsb["STSB Pearson"]) == round(100 * _file(results, "tfidf-a", "stsb")["metrics"]["pearson"], 2)
    gmet = next(r for r in _csv(report, "nlue_table5_gmet") if r["numbers"] == "ours")
    assert gmet["GMET acc"] == "" and gmet["GMET auto acc"] != ""  # automatic verdicts never sit in the judged column

    exams = {r["model"]: r for r in _csv(report, "mcq_table4") if r["numbers"] == "ours"}
    assert len(exams) == 4
    for run, row in exams.items():
        saved = _file(results, run, "mcq_ur")
        assert float(row["All (all items)"]) == round(100 * saved["metrics"]["accuracy_all_items"], 2)
        domains = {d["group"]: d for d in saved["details"]["tables"]["domain"]}
        assert float(row["STEM"]) == round(100 * domains["STEM"]["accuracy_parseable"], 2)
    base = Path(SMALL).name
    for prompt, language in (("english", "en"), ("native", "ur")):
        zero = _file(results, f"{base}__{language}-0shot-loglik", "mcq_ur")["metrics"]["accuracy_all_items"]
        one = _file(results, f"{base}__{language}-1shot-loglik", "mcq_ur")["metrics"]["accuracy_all_items"]
        (row,) = [r for r in _csv(report, "mcq_fewshot_deltas") if r["model"] == base and r["prompt"] == prompt]
        assert float(row["Δ 1-shot"]) == round(100 * (one - zero), 2) and row["Δ 3-shot"] == ""
    levels = {r["run"]: r for r in _csv(report, "mcq_ur_by_level")}
    saved = _file(results, f"{base}__ur-1shot-loglik", "mcq_ur")["details"]["tables"]["level"]
    for level in saved:
        row = levels[f"{base}__ur-1shot-loglik"]
        assert float(row[f"{level['group']} (%)"]) == round(100 * level["accuracy_all_items"], 2)

    idioms = [r for r in _csv(report, "nediom_table3") if r["numbers"] == "ours"]
    assert {r["model"] for r in idioms} == {SMALL, LARGE}
    small = next(r for r in idioms if r["model"] == SMALL)
    folder = next(results.glob(f"{SMALL}__zero-shot-en__v3-*"))
    assert small["v3 S1+S2/with-idiom"] == f"{_file(results, folder.name, 'nediom')['metrics']['macro_f1']:.2f}"


def test_the_significance_matrix_is_compare_runs(report: Path, results: Path) -> None:
    pairs = _csv(report, "significance_pairs")
    assert pairs and all(p["run_a"] != "legacy" and p["run_b"] != "legacy" for p in pairs)
    for a, b in {(p["run_a"], p["run_b"]) for p in pairs}:
        for c in compare_runs([results / a, results / b], resamples=RESAMPLES, seed=0):
            (row,) = [p for p in pairs if (p["run_a"], p["run_b"], p["task"]) == (a, b, c.task)]
            assert float(row["difference"]) == pytest.approx(c.difference) and float(row["p_holm"]) == c.p_holm
    # Only the classifier and the baseline's two seeds share a setting with another model: the two seeds of the
    # baseline (one model) are not tested against each other, nor are runs that answered every item alike.
    assert {(p["task"], p["run_a"], p["run_b"]) for p in pairs} == {("sa", "tfidf-a", "tiny-clf"),
                                                                     ("sa", "tfidf-b", "tiny-clf")}  # fmt: skip
    untested = {(r["task"], r["runs"]): r["why"] for r in _csv(report, "significance_not_tested")}
    assert "runs of one model (baseline:tfidf)" in untested[("rte", "tfidf-a, tfidf-b")]
    matrix = {r["run (row)"]: r for r in _csv(report, "significance_sa_1")}
    (c,) = compare_runs([results / "tfidf-a", results / "tiny-clf"], ["sa"], resamples=RESAMPLES, seed=0)
    index = {name: row["#"] for name, row in matrix.items()}
    assert matrix["tfidf-a"][index["tiny-clf"]] == f"{round(c.difference, 3) + 0.0:+.3f} (p={c.p_holm:.3f})"
    assert matrix["tfidf-a"][index["tfidf-b"]] == "same model: not tested"
    page = (report / "index.html").read_text(encoding="utf-8")
    assert "Left out, no per-item predictions beside the results file: legacy/sa.json" in page


def test_sample_data_is_said_prominently(report: Path) -> None:
    page = (report / "index.html").read_text(encoding="utf-8")
    assert '<div class="banner">⚠ SAMPLE DATA:' in page and page.count('class="sample"') == 5
    assert "**⚠ SAMPLE DATA:" in (report / "report.md").read_text(encoding="utf-8")


def test_an_empty_results_folder_gives_the_papers_rows_and_says_what_is_missing(
    tmp_path: Path, capsys, monkeypatch
) -> None:
    (tmp_path / "results").mkdir()
    out = tmp_path / "site"
    monkeypatch.setenv("NLUE_RESULTS_DIR", str(tmp_path / "results"))  # the default results folder
    assert main(["report", "--out", str(out), "-q"]) == 0
    printed = capsys.readouterr().out
    page = (out / "index.html").read_text(encoding="utf-8")
    for message in ("No NLUE run in the results folder", "No neDIOM run", "No exam run", "no pair to test"):
        assert message in page and message in printed
    assert "SAMPLE DATA" not in page
    assert len([r for r in _csv(out, "nlue_table2_single_sentence") if r["numbers"] == "paper, as printed"]) == 10
    assert not list(out.glob("nediom_figure*.png"))


def test_a_run_from_a_paper_encoder_takes_its_pretraining_and_size(tmp_path: Path) -> None:
    from nlue.results import RunResult, write_result

    run = RunResult(task="sa", model="me/xlmr-sa", kind="fine-tune", metrics={"accuracy": 0.9, "macro_f1": 0.88},
                    base_model="FacebookAI/xlm-roberta-base", dataset={"id": "me/nlue", "is_sample": False})  # fmt: skip
    write_result(run, tmp_path / "results", "xlmr-sa")
    assert main(["report", str(tmp_path / "results"), "--out", str(tmp_path / "site"), "-q"]) == 0
    (row,) = [r for r in _csv(tmp_path / "site", "models_by_pretraining") if r["numbers"] == "ours"]
    assert (row["pretraining"], row["base model"], row["params (M)"]) == ("multilingual", "XLM-R Base", "270.0")
    assert "SAMPLE DATA" not in (tmp_path / "site" / "index.html").read_text(encoding="utf-8")


def test_bad_input_and_a_failed_write_leave_the_earlier_report(tmp_path: Path, monkeypatch, capsys) -> None:
    from nlue.evals.report import render as report_render

    results = tmp_path / "results"
    results.mkdir()
    assert main(["report", str(tmp_path / "missing"), "--out", str(tmp_path / "a")]) == 2
    assert "no such results folder" in capsys.readouterr().err
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "mine.txt").write_text("keep me", encoding="utf-8")
    assert main(["report", str(results), "--out", str(tmp_path / "notes")]) == 2
    assert "not a report" in capsys.readouterr().err and (tmp_path / "notes" / "mine.txt").is_file()
    out = tmp_path / "site"
    assert main(["report", "--results_dir", str(results), "--out", str(out), "-q"]) == 0  # either spelling
    before = sorted(p.name for p in out.iterdir())

    def broken(chart):
        raise OSError("disk full")

    monkeypatch.setattr(report_render, "_png", broken)
    assert main(["report", str(results), "--out", str(out), "-q"]) == 1
    assert sorted(p.name for p in out.iterdir()) == before  # the earlier report, whole
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes", "results", "site"]  # no temporary folder


def test_sizes_paper_models_and_idiom_cells_are_read_as_meant() -> None:
    from nlue.evals.report.nediom import _number

    # A variant a run lacks is a blank of the board's frame (NaN): no number, never a NaN in a figure's mean.
    assert _number(float("nan")) is None and _number("-") is None and _number("0.61 ± 0.05") == 0.61
    assert model_size("bigscience/bloom-560m") == 560 and model_size("bloom-1b1") == 1100
    assert model_size("Qwen3.6-35B-A3B") == 35_000 and model_size("tiny-gpt2") is None
    assert model_family("bloom-560m") == model_family("bloom-7b1") == "bloom"
    assert paper_model("facebookai/XLM-roberta-base").name == "XLM-R Base" and paper_model("gpt2") is None
    assert [m.name for m in PAPER_MODELS if m.multilingual] == ["Multilingual BERT", "XLM-R Base", "m-DeBERTa-v3"]


def test_the_page_in_a_browser(report: Path) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with chromium_page(1440, 1000, "the report's browser test") as page:
        page.goto(report.joinpath("index.html").as_uri())
        page.wait_for_load_state("load")
        images = page.evaluate("Array.from(document.images, i => [i.getAttribute('src'), i.naturalWidth])")
        assert len(images) >= 7 and all(width > 0 for _, width in images), images
        assert page.locator(".banner").inner_text().startswith("⚠ SAMPLE DATA")
        # The page never grows sideways: wide tables scroll inside their own box.
        assert page.evaluate("document.documentElement.scrollWidth") <= 1440
        page.screenshot(path=str(ARTIFACTS / "index.png"), full_page=True)
    assert (ARTIFACTS / "index.png").stat().st_size > 50_000
