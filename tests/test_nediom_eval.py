"""neDIOM evaluation: prompts never show markers or the gold label, zero-shot (causal and masked), few-shot, table, CLI."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import datasets
import numpy as np
import pytest
from sklearn.metrics import f1_score

from nlue.data.sample import sample_data_dir
from nlue.idioms.cli import main
from nlue.idioms.evaluate import EvalRequest, load_items, run_eval, select_variants, variant_folder
from nlue.idioms.few_shot import FewShotSettings
from nlue.idioms.split import shots
from nlue.idioms.table import Cell, floors, table3_text, variant_rows, variant_text
from nlue.idioms.zero_shot import LabelScorer, render_prompt
from nlue.lm.backends import model_family
from nlue.lm.masked.labels import MaskedLMScorer
from nlue.lm.tiny import save_tiny_causal_lm, save_tiny_encoder
from nlue.registry.kinds.idiomaticity import VARIANTS, variant_input
from nlue.registry.nediom import NEDIOM_PROMPTS, NEDIOM_TASKS, TABLE3, TABLE3_MODELS, TABLE3_SETTINGS
from nlue.results import read_results

TASK = NEDIOM_TASKS[0]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("nediom-models")
    return {"causal": save_tiny_causal_lm(root / "gpt2", "gpt2"), "masked": save_tiny_encoder(root / "bert", "bert")}


@pytest.fixture(scope="module")
def items(nediom_build) -> tuple[list[dict], list[dict]]:
    data = datasets.load_dataset(str(nediom_build.repo_dir), TASK.name)
    return list(data["train"]), list(data["test"])


class Recording:
    """A real engine backend that also keeps every request it was asked (to inspect what the model saw)."""

    def __init__(self, model) -> None:
        self.model, self.requests = model, []
        self.name = model.name

    def loglikelihood(self, requests):
        self.requests += list(requests)
        return self.model.loglikelihood(requests)

    def describe(self):
        return self.model.describe()


def test_no_input_shows_markers_or_the_gold_label(items, tiny, one_torch_thread) -> None:
    from nlue.lm.local import LocalCausalLM

    train, test = items
    label_words = {w for prompt in NEDIOM_PROMPTS.values() for w in prompt.label_words} | set(TASK.label_names)
    for item in train + test:
        flipped = {**item, "label": 1 - item["label"]}
        for variant in VARIANTS:
            shown = " ".join(filter(None, variant_input(item, variant)))
            assert "###" not in shown and not any(word in shown for word in label_words), (item["id"], variant.name)
            for language in NEDIOM_PROMPTS:
                prompt = render_prompt(item, variant, language)
                assert "#" not in prompt and prompt == render_prompt(flipped, variant, language)
                assert (item["idiom"] in prompt) == variant.with_idiom or item["idiom"] in item["S2"]
    spy = Recording(LocalCausalLM(tiny["causal"], show_progress=False, batch_size=8))
    scorer = LabelScorer(spy)
    for variant in VARIANTS:
        scorer.scores(test[:3], variant, "ne")
    assert len(spy.requests) == 8 * 3 * 2  # every variant, item and label word; nothing else was asked
    assert {r.continuation for r in spy.requests} == {" " + w for w in NEDIOM_PROMPTS["ne"].label_words}
    assert all("###" not in r.context and r.context.endswith(NEDIOM_PROMPTS["ne"].answer_cue) for r in spy.requests)


def test_zero_shot_causal_cli_writes_eight_scored_variants(nediom_build, tiny, tmp_path, capsys, one_torch_thread):
    argv = ["eval", "--model", str(tiny["causal"]), "--dataset", str(nediom_build.repo_dir), "--setting",
            "zero-shot", "--results-dir", str(tmp_path), "--bootstrap", "200", "--name", "gpt2", "-q"]  # fmt: skip
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "SAMPLE DATA" in out and out.count("gpt2 (this run)") == 4 and out.count("XLM-R (paper)") == 4
    found = {data["details"]["variant"]["number"]: (path, data) for path, data in read_results(tmp_path)}
    assert sorted(found) == list(range(1, 9))
    for number, (path, _) in found.items():  # one folder per variant and setting, named for both
        assert path.parent.name == variant_folder("gpt2", "zero-shot-en", VARIANTS[number - 1])
    files = {number: data for number, (_, data) in found.items()}
    labels = np.asarray(datasets.load_dataset(str(nediom_build.repo_dir), TASK.name)["test"]["label"])
    for data in files.values():
        m, details = data["metrics"], data["details"]
        assert data["kind"] == "zero-shot" and data["primary_score"] == m["macro_f1"]
        assert m["macro_f1_ci_low"] <= m["macro_f1"] <= m["macro_f1_ci_high"]
        assert m["macro_f1_norm_ci_low"] <= m["macro_f1_norm"] <= m["macro_f1_norm_ci_high"]
        logl = np.asarray(details["loglikelihoods"])
        assert details["predictions"] == logl.argmax(axis=1).tolist()  # summed log-likelihood is the primary
        assert m["macro_f1"] == pytest.approx(f1_score(labels, details["predictions"], average="macro", labels=[0, 1]))
        by_char = (logl / [len(w) for w in details["label_words"]]).argmax(axis=1)
        assert m["macro_f1_norm"] == pytest.approx(f1_score(labels, by_char, average="macro", labels=[0, 1]))
        assert details["floors"] == floors(TASK.name, labels) and data["dataset"]["is_sample"]


def test_masked_lm_scores_label_words_at_mask_slots_left_to_right(items, tiny, one_torch_thread) -> None:
    import torch

    assert model_family(str(tiny["masked"])) == "masked" and model_family(str(tiny["causal"])) == "causal"
    _, test = items
    masked = MaskedLMScorer(str(tiny["masked"]), device="cpu", batch_size=4)
    scorer = LabelScorer(masked)
    variant = VARIANTS[0]
    scores = scorer.scores(test[:2], variant, "ne")  # the tiny tokenizer cuts the Nepali label words into pieces
    tok, model = masked.tokenizer, masked.model
    prompt = tok(render_prompt(test[0], variant, "ne"), add_special_tokens=False)["input_ids"]
    for j, word in enumerate(NEDIOM_PROMPTS["ne"].label_words):
        pieces = tok(" " + word, add_special_tokens=False)["input_ids"]
        assert len(pieces) > 2  # so that left to right differs from scoring every piece at once
        room = masked.max_length - 2 - len(pieces)
        expected = 0.0
        for i, piece in enumerate(pieces):  # piece i given the pieces before it, the later ones masked
            slots = pieces[:i] + [tok.mask_token_id] * (len(pieces) - i)
            ids = [tok.cls_token_id, *prompt[-room:], *slots, tok.sep_token_id]
            with torch.inference_mode():
                logits = model(input_ids=torch.tensor([ids])).logits[0, 1 + len(prompt[-room:]) + i]
            expected += float(torch.log_softmax(logits, -1)[piece])
        assert scores.loglikelihoods[0, j] == pytest.approx(expected, abs=1e-4)


def test_few_shot_fine_tunes_each_seed_on_the_same_items(nediom_build, tiny, items, tmp_path, one_torch_thread):
    pool, test = items
    request = EvalRequest(
        model=str(tiny["masked"]), task=TASK, settings=["5-shot"], variants=select_variants(["S2"], "both"),
        results_dir=tmp_path, name="bert", dataset=str(nediom_build.repo_dir), seeds=[0, 1], limit=20,
        few_shot=FewShotSettings(epochs=1, batch_size=4, max_seq_length=64), bootstrap_resamples=200,
    )  # fmt: skip
    report = run_eval(request)
    assert [(c.setting, c.variant.number, c.runs) for c in report.cells] == [("5-shot", 1, 2), ("5-shot", 2, 2)]
    labels = [item["label"] for item in test[:20]]
    five = [item["id"] for item in shots(pool, 5)]
    for path in report.paths:
        data = json.loads(path.read_text(encoding="utf-8"))
        m, details = data["metrics"], data["details"]
        assert data["kind"] == "fine-tune" and details["training_item_ids"] == five and len(five) == 10
        per_seed = [f1_score(labels, p, average="macro", labels=[0, 1]) for p in details["predictions"]]
        assert details["macro_f1_per_seed"] == pytest.approx(per_seed) and details["seeds"] == [0, 1]
        assert m["macro_f1"] == pytest.approx(np.mean(per_seed)) and data["primary_score"] == m["macro_f1"]
        assert m["macro_f1_sd"] == pytest.approx(np.std(per_seed, ddof=1))
        assert m["macro_f1_ci_low"] <= m["macro_f1_ci_high"] and "same k-shot items" in data["notes"]
        assert data["hyperparameters"]["num_train_epochs"] == 1


def test_floors_on_a_hand_made_label_list() -> None:
    assert floors(TASK.name, [0, 0, 0, 1]) == pytest.approx({"always idiomatic": 3 / 7, "always literal": 0.2})
    paper = floors(TASK.name, [0] * 398 + [1] * 108)  # the paper's test set as the facts file derives it
    assert round(paper["always idiomatic"], 2) == 0.44 and round(paper["always literal"], 2) == 0.18


def test_the_table_has_eight_variant_rows_by_setting_and_the_papers_rows() -> None:
    cells = [
        Cell(s, v, 0.3 + 0.01 * v.number, 0.2, 0.5, None if s == "zero-shot" else 0.05, 1 if s == "zero-shot" else 5)
        for s in TABLE3_SETTINGS
        for v in VARIANTS
    ]
    rows = variant_rows(cells)
    assert [v.number for v, _ in rows] == list(range(1, 9))
    assert all(list(by_setting) == list(TABLE3_SETTINGS) for _, by_setting in rows)
    text = variant_text(cells, {"always idiomatic": 0.42, "always literal": 0.22}).splitlines()
    assert len(text) == 2 + 8 and "0.31 [0.20, 0.50]" in text[2] and "0.31±0.05 [0.20, 0.50]" in text[2]
    table = table3_text(cells, {"always idiomatic": 0.42, "always literal": 0.22}, "mine").splitlines()
    assert len(table) == 2 + 4 * (1 + 2 + len(TABLE3_MODELS))
    s1s2 = next(i for i, line in enumerate(table) if line.startswith("S1+S2 "))
    assert "0.33 [0.20, 0.50]" in table[s1s2] and "0.34±0.05 [0.20, 0.50]" in table[s1s2]  # variants 3 and 4
    gpt = next(line for line in table[s1s2:] if line.strip().startswith("GPT-3.5"))
    assert gpt.split()[-6:] == [f"{v:.2f}" for v in TABLE3["S1+S2"]["GPT-3.5"]]
    llama = [line for line in table if line.strip().startswith("Llama2-7b")][-1]
    assert llama.split()[-6:] == ["-"] * 6  # not run in the paper: shown as such, never as a number


def test_a_source_folder_reads_like_the_build_and_names_a_bad_row(nediom_build, items, tmp_path) -> None:
    folder = tmp_path / "split"
    shutil.copytree(sample_data_dir() / TASK.name, folder)
    pool, test, description = load_items(str(folder), TASK, None)
    assert [i["id"] for i in pool] == [i["id"] for i in items[0]] and len(test) == len(items[1])
    assert [i["label"] for i in test] == [i["label"] for i in items[1]] and not description["is_sample"]
    lines = (folder / "test.jsonl").read_text(encoding="utf-8").splitlines()
    lines[2] = json.dumps({**json.loads(lines[2]), "label": "maybe"}, ensure_ascii=False)
    (folder / "test.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(Exception, match=r"test\.jsonl: row 3: field 'label'"):
        load_items(str(folder), TASK, None)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--setting", "20-shot"], "--setting: '20-shot' (did you mean '10-shot'?) is not a setting"),
        (["--setting", "zero-shot", "--context", "S1"], "'S1' is not a context this command takes; valid: S2"),
        (["--setting", "zero-shot", "--limit", "0"], "--limit must be at least 1"),
        (["--setting", "5-shot", "--seeds", "0"], "--seeds"),
        (["--setting", "zero-shot", "--dataset", "{missing}"], "no such folder"),
        (["--setting", "zero-shot", "--model", "{missing}"], "cannot load a causal LM"),
        (["--setting", "5-shot", "--model", "{missing}"], "cannot load it as a sequence classifier"),
    ],
)
def test_bad_input_exits_2_with_a_clear_message(nediom_build, tiny, tmp_path, capsys, extra, message) -> None:
    missing = str(tmp_path / "no-such-thing")
    argv = ["eval", "--model", str(tiny["causal"]), "--dataset", str(nediom_build.repo_dir),
            "--results-dir", str(tmp_path), "--limit", "3", "-q"]  # fmt: skip
    argv += [a.replace("{missing}", missing) for a in extra]  # a repeated option: argparse keeps the last
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_without_a_dataset_the_embedded_sample_is_built_and_marked(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("NLUE_CACHE", str(tmp_path))
    pool, test, description = load_items(None, TASK, 5)
    assert len(pool) == 20 and len(test) == 5 and description["is_sample"] and description["items"] == 5
    assert any(tmp_path.rglob("README.md"))  # built into the cache folder, not into the user's home
