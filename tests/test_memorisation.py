"""`nlue memorisation` (issue 32, item 2): Min-K%++ of test items against shuffled controls, exam completion.

* a tiny Llama-style LM is trained here until it has memorised every other one of 16 sample exam items; the
  command then puts exactly those above their controls (the other sample exam texts, never a probed item) and
  above the controls' 95th percentile, leaves the others among the controls, and completes exactly their
  questions from the first half; controls from a file, or shuffled, name where they came from;
* Min-K%++, Min-K% and mean log p are recomputed with numpy from the model's logits, one text at a time;
* the AUC is sklearn's, its interval widens when the controls come from few texts, the edit distance a plain dynamic programme's, the controls the item's own words;
* the file is checked when read (a changed number is refused) and results readers pass its folder by;
* bad input (an endpoint, a masked LM, an unknown task, a bad --k) exits 2 with a message saying why.
"""

from __future__ import annotations

import csv
import json
import random
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from nlue.cli import main
from nlue.evals.contamination.items import task_items
from nlue.evals.memorisation.completion import control_partners, edit_distance, halves
from nlue.evals.memorisation.control_pools import pool_control
from nlue.evals.memorisation.controls import control_fields, item_rng, item_text
from nlue.evals.memorisation.forward import encode, prefix_token, score_token_lists
from nlue.evals.memorisation.minkpp import token_statistics
from nlue.evals.memorisation.probes_file import BadProbesFile, read_probes
from nlue.evals.memorisation.summary import auc, bootstrap_auc
from nlue.registry.tasks import TASKS
from nlue.results import read_results

LIMIT = 16
TRAIN_STEPS = 120


@pytest.fixture(scope="module")
def planted(exam_build, tmp_path_factory: pytest.TempPathFactory, one_torch_thread):
    """(dataset, model folder, planted ids, all items): a tiny LM trained on items 1, 3, 5, ... of mcq_ne's
    first 16 until it has them by heart (a plain torch loop), as a model that read them while pretraining."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from nlue.lm.tiny import save_tiny_causal_lm

    repo = str(exam_build.repo_dir)
    items = task_items(repo, TASKS["mcq_ne"], "test")[:LIMIT]
    seen = items[::2]
    root = tmp_path_factory.mktemp("memorisation")
    base = save_tiny_causal_lm(root / "base", "llama", seed=3)
    tokenizer = AutoTokenizer.from_pretrained(base)
    model = AutoModelForCausalLM.from_pretrained(base)
    rows = [[prefix_token(tokenizer), *encode(tokenizer, item_text(item.texts))] for item in seen]
    ids = torch.full((len(rows), max(map(len, rows))), tokenizer.pad_token_id)
    labels = torch.full_like(ids, -100)
    for n, row in enumerate(rows):
        ids[n, : len(row)] = labels[n, : len(row)] = torch.tensor(row)
    torch.manual_seed(0)
    optimiser = torch.optim.AdamW(model.parameters(), lr=1e-2)
    model.train()
    for _ in range(TRAIN_STEPS):
        loss = model(input_ids=ids, attention_mask=(labels != -100).long(), labels=labels).loss
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
    assert loss.item() < 0.2, f"the tiny model did not memorise its items (loss {loss.item():.3f})"
    model.eval()
    model.save_pretrained(root / "planted")
    tokenizer.save_pretrained(root / "planted")
    return repo, root / "planted", {item.id for item in seen}, items


def _run(*argv: str) -> int:
    return main(["memorisation", "-q", *argv])


def test_planted_items_stand_above_their_controls_and_the_others_do_not(planted, tmp_path, capsys) -> None:
    """issue 32, item 2: the memorised items, and only they, score above the controls; their questions are
    completed word for word from the first half, the others' are not; the summary is sklearn's AUC."""
    repo, model, seen, items = planted
    results = tmp_path / "results"
    argv = ["--model", str(model), "--dataset", repo, "--tasks", "mcq_ne", "--limit", str(LIMIT)]
    assert _run(*argv, "--results-dir", str(results), "--bootstrap-resamples", "200") == 0
    shown = capsys.readouterr().out
    assert "Min-K%++ AUC" in shown and "mcq_ne" in shown and "does NOT show the items are unseen" in shown
    path = results / "memorisation" / "planted" / f"{Path(repo).name}-tasks-mcq_ne-limit{LIMIT}.json"  # some tasks
    data = read_probes(path)
    entry = data["tasks"]["mcq_ne"]
    records = {r["id"]: r for r in entry["items"]}
    assert list(records) == [item.id for item in items] and data["settings"]["k"] == 20.0

    probed = {f"sample:mcq_ne/test/{item.id}" for item in items}
    used = {source for r in entry["items"] for source in r["control_from"]}
    assert used and all(source.startswith("sample:mcq_ne/") for source in used) and not used & probed

    in_item = np.array([records[i]["minkpp"] for i in records if i in seen])
    out_item = np.array([records[i]["minkpp"] for i in records if i not in seen])
    controls = np.array([r["minkpp_control"] for r in entry["items"]])
    labels = [1] * len(in_item) + [0] * len(out_item)
    assert roc_auc_score(labels, [*in_item, *out_item]) == 1.0  # planted above unplanted: perfectly apart
    assert all(records[i]["minkpp"] > records[i]["minkpp_control"] for i in seen)
    threshold = np.quantile(controls, 0.95)
    assert (in_item > threshold).all()
    assert (out_item > threshold).sum() <= 2  # unseen items are among the controls (5% each above by chance)

    summary = entry["summary"]["minkpp"]
    scores = np.array([r["minkpp"] for r in entry["items"]])
    assert summary["auc"] == pytest.approx(roc_auc_score([1] * LIMIT + [0] * LIMIT, [*scores, *controls]))
    assert summary["above_p95"] == pytest.approx(np.mean(scores > threshold)) and summary["above_p95"] >= 0.5
    assert summary["auc_ci_low"] <= summary["auc"] <= summary["auc_ci_high"]
    assert entry["summary"]["compared"] == LIMIT and entry["summary"]["no_control"] == 0
    assert entry["summary"]["control_texts"] == len(used)

    completions = {r["id"]: r for r in entry["completion"]["items"]}
    assert all(completions[i]["exact"] and completions[i]["overlap"] == 1.0 for i in seen)
    assert not any(completions[i]["exact"] for i in completions if i not in seen)
    completion = entry["completion"]["summary"]
    assert completion["exact"] == pytest.approx(0.5) and completion["control_exact"] == 0.0
    assert completion["overlap"] > completion["control_overlap"]
    assert list(read_results(results)) == []  # results readers pass the memorisation folder by, without a word


def test_the_scores_are_those_numpy_computes_from_the_logits(planted) -> None:
    """issue 32, item 2: Min-K%++ (Zhang et al.), Min-K% (Shi et al.) and mean log p, texts batched with padding,
    equal a direct numpy computation from each text's own logits."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    _, folder, _, items = planted
    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForCausalLM.from_pretrained(folder).eval()
    token_lists = [encode(tokenizer, item_text(item.texts)) for item in items[:4]]
    for k in (20.0, 50.0):
        batched = score_token_lists(model, tokenizer, token_lists, k=k, batch_size=4)
        for tokens, got in zip(token_lists, batched, strict=True):
            ids = [prefix_token(tokenizer), *tokens]
            with torch.no_grad():
                logits = model(input_ids=torch.tensor([ids])).logits[0, :-1].double().numpy()
            logp = logits - logits.max(-1, keepdims=True)
            logp -= np.log(np.exp(logp).sum(-1, keepdims=True))
            chosen = logp[np.arange(len(tokens)), tokens]
            p = np.exp(logp)
            mu = (p * logp).sum(-1)
            sigma = np.sqrt((p * logp**2).sum(-1) - mu**2)
            lowest = max(1, int(len(tokens) * k / 100))
            assert got["minkpp"] == pytest.approx(np.sort((chosen - mu) / sigma)[:lowest].mean(), rel=1e-4, abs=1e-4)
            assert got["mink"] == pytest.approx(np.sort(chosen)[:lowest].mean(), rel=1e-4)
            assert got["loglik"] == pytest.approx(chosen.mean(), rel=1e-4)
    whole = token_statistics(torch.tensor(logits), torch.tensor(tokens))
    in_chunks = token_statistics(torch.tensor(logits), torch.tensor(tokens), chunk=3)  # a long text, a little at once
    assert np.allclose(whole.minkpp_tokens, in_chunks.minkpp_tokens) and len(whole.logprob) == len(tokens)


def test_auc_edit_distance_controls_and_partners() -> None:
    """issue 32, item 2: the AUC is sklearn's (ties half), the edit distance a plain dynamic programme's, a control
    holds the item's own words in fields of the same sizes, and a control partner is never the question itself."""
    rng = np.random.default_rng(1)
    for _ in range(20):
        items, controls = rng.integers(0, 5, 12).astype(float), rng.integers(0, 5, 9).astype(float)
        assert auc(items, controls) == pytest.approx(roc_auc_score([1] * 12 + [0] * 9, [*items, *controls]))
    paired = rng.normal(size=30), rng.normal(size=30)
    low, high = bootstrap_auc(*paired, resamples=200)
    assert low is not None and high is not None and low <= auc(*paired) <= high
    # controls made of two texts (one group high, one low) are two draws, not thirty: the interval widens
    items, controls = rng.normal(size=30), np.concatenate([rng.normal(1, 0.1, 15), rng.normal(-1, 0.1, 15)])
    one_by_one = bootstrap_auc(items, controls, resamples=300)
    by_text = bootstrap_auc(items, controls, np.array(["a"] * 15 + ["b"] * 15, dtype=object), resamples=300)
    assert by_text[1] - by_text[0] > 2 * (one_by_one[1] - one_by_one[0])

    def plain(a: str, b: str) -> int:
        row = list(range(len(b) + 1))
        for i, x in enumerate(a, 1):
            previous, row = row, [i]
            for j, y in enumerate(b, 1):
                row.append(min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + (x != y)))
        return row[-1]

    draw = random.Random(2)
    for _ in range(300):
        a, b = ("".join(draw.choice("कखa ") for _ in range(draw.randint(0, 9))) for _ in range(2))
        assert edit_distance(a, b) == plain(a, b)

    texts = ("नेपालको राजधानी कहाँ हो ?", "काठमाडौं", "पोखरा")
    control = control_fields(texts, item_rng(0, "mcq_ne", "x-1"))
    assert control is not None and control != texts
    assert [len(t.split()) for t in control] == [len(t.split()) for t in texts]
    assert sorted(" ".join(control).split()) == sorted(" ".join(texts).split())
    assert control == control_fields(texts, item_rng(0, "mcq_ne", "x-1"))  # the same seed, the same control
    assert control_fields(("एउटै एउटै", "एउटै"), item_rng(0, "t", 1)) is None  # one word only: no other order
    assert halves("एक दुई तीन") is None and halves("एक दुई तीन चार पाँच") == ("एक दुई", "तीन चार पाँच")
    for count in range(2, 9):
        partners = control_partners(count, seed=count)
        assert partners is not None and sorted(partners) == list(range(count))
        assert all(i != j for i, j in enumerate(partners))


def test_a_pool_control_is_one_text_cut_to_length_where_one_is_long_enough() -> None:
    """issue 32, item 2: a control is a single natural text cut to the item's token count when the pool has one
    that long; only otherwise are texts joined (by the line break's tokens); the same draw for the same item."""
    pool = [[1, 2], [3, 4, 5, 6, 7], [], [8, 9, 10]]
    tokens, used = pool_control(pool, [0], 4, item_rng(0, "sa", 1))
    assert (tokens, used) == ([3, 4, 5, 6], [1])
    tokens, used = pool_control(pool, [0], 9, item_rng(0, "sa", 1))
    joined: list[int] = []
    for index in used:
        before, joined = len(joined), [*joined, *([0] if joined else []), *pool[index]]
    assert 2 not in used and len(set(used)) == len(used) >= 2  # no empty text, none twice
    assert tokens == joined[:9] and before < 9 <= len(joined)  # joined until long enough, then cut
    assert (tokens, used) == pool_control(pool, [0], 9, item_rng(0, "sa", 1))
    assert pool_control([[], []], [0], 3, item_rng(0, "sa", 1)) == ([], [])


def test_the_file_is_checked_when_read(planted, tmp_path) -> None:
    """issue 32, item 2: a summary number its items do not give, or another format, is refused with the field."""
    repo, model, _, _ = planted
    out = tmp_path / "probes.json"
    argv = ["--model", str(model), "--dataset", repo, "--tasks", "mcq_ne", "--limit", "4", "--no-completion"]
    assert _run(*argv, "--out", str(out), "--bootstrap-resamples", "0", "--no-cache") == 0
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["tasks"]["mcq_ne"]["completion"] is None
    data["tasks"]["mcq_ne"]["summary"]["minkpp"]["auc"] = 0.99
    out.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(BadProbesFile, match=r"tasks\.mcq_ne\.summary\.minkpp\.auc: expected"):
        read_probes(out)
    out.write_text(json.dumps({**data, "format": "nlue-contamination"}), encoding="utf-8")
    with pytest.raises(BadProbesFile, match="format"):
        read_probes(out)


def test_controls_from_a_file_or_shuffled_say_where_they_came_from(planted, tmp_path, capsys, caplog) -> None:
    """issue 32, item 2: --controls FILE draws each control from the file's texts, --controls shuffled from the
    item's own words (and says that any fluent model prefers real order); the file records which; a file in
    another script than the task's is warned of."""
    repo, model, _, _ = planted
    texts = tmp_path / "unseen.txt"
    texts.write_text("हाम्रो गाउँको पोखरीमा हिजो बेलुका दुईवटा सेता हाँस आए।\nयो वाक्य कुनै परीक्षामा छैन।\n", encoding="utf-8")
    argv = ["--model", str(model), "--dataset", repo, "--tasks", "mcq_ne", "--limit", "3", "--no-completion",
            "--bootstrap", "0", "--no-cache"]  # fmt: skip
    assert _run(*argv, "--controls", str(texts), "--out", str(tmp_path / "file.json")) == 0
    data = read_probes(tmp_path / "file.json")
    assert data["settings"]["controls"] == "file:unseen.txt"
    for record in data["tasks"]["mcq_ne"]["items"]:
        assert record["control_from"] and set(record["control_from"]) <= {"unseen.txt:1", "unseen.txt:2"}
        assert record["control_tokens"] == record["tokens"]
    assert "floor" not in capsys.readouterr().out
    english = tmp_path / "english.txt"
    english.write_text("A sentence in English that no exam holds.\nAnother one, written for this test.\n")
    assert _run(*argv, "--controls", str(english), "--out", str(tmp_path / "english.json")) == 0
    assert "only 0% of its texts are mostly in mcq_ne's script (nepali)" in caplog.text
    assert _run(*argv, "--controls", "shuffled", "--out", str(tmp_path / "shuffled.json")) == 0
    data = read_probes(tmp_path / "shuffled.json")
    assert all(r["control_from"] == ["shuffled"] for r in data["tasks"]["mcq_ne"]["items"])
    assert "a floor, not a test" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        (["--endpoint", "http://127.0.0.1:9/v1"], "whole next-token distribution"),
        (["--k", "0"], "--k 0: expected a percentage above 0"),
        (["--k", "150"], "--k 150: expected a percentage above 0"),
        (["--tasks", "nosuch"], "'nosuch'"),
        (["--tasks", "sa"], "has no config sa"),
        (["--backend", "masked-lm"], "--backend masked-lm"),
        (["--tasks", "mcq_ne"], "cannot load a causal LM from"),  # no model in that folder
        (["--controls", "no-such-file.txt"], "--controls no-such-file.txt: no such file"),
    ],
)
def test_bad_input_exits_2_with_the_reason(exam_build, tmp_path, capsys, extra, expected) -> None:
    """issue 32, item 2: what cannot be probed is refused before a model loads, with what was wrong."""
    argv = ["--model", str(tmp_path / "nothing-here"), "--dataset", str(exam_build.repo_dir), *extra]
    assert _run(*argv) == 2
    err = capsys.readouterr().err
    assert expected in err and "\nnlue memorisation: error: " in f"\n{err}" and "Traceback" not in err


def test_a_model_that_is_no_causal_lm_exits_2(exam_build, tmp_path, capsys) -> None:
    """issue 32, item 2: a masked LM's checkpoint is refused by its config, before its weights load."""
    from nlue.lm.tiny import tiny_config

    config = tiny_config("bert", 100)
    config.architectures = ["BertForMaskedLM"]
    config.save_pretrained(tmp_path / "mlm")
    assert _run("--model", str(tmp_path / "mlm"), "--dataset", str(exam_build.repo_dir)) == 2
    assert "BertForMaskedLM is no causal LM" in capsys.readouterr().err


HOSTILE = '=HYPERLINK("http://x")<script>alert(1)</script>|*model*'


def test_the_report_and_the_space_show_the_probes_with_a_bad_file_listed(planted, tmp_path, capsys) -> None:
    """issue 32, item 1 (of the trust views): `nlue report` has a memorisation section (ours) read from
    <results>/memorisation/ with the checked reader: per model and task the file's numbers, in the page, the
    Markdown and a CSV, a model name from the file escaped in each; a broken file costs its own row, listed with the
    reason; the Space's leaderboard tab shows the same table. Without such files there is no section."""
    import gradio as gr

    from nlue.boards.memorisation import load_memorisation_board
    from nlue.evals.report.build import ReportOptions, build_report
    from nlue.space.memorisation_section import build_memorisation_board
    from nlue.text.safe import csv_cell_read

    repo, model, _, _ = planted
    results = tmp_path / "results"
    results.mkdir()
    assert "memorisation" not in {s.key for s in build_report(results, ReportOptions(resamples=10)).sections}
    argv = ["--model", str(model), "--dataset", repo, "--tasks", "mcq_ne", "--limit", "6", "--bootstrap", "50"]
    assert _run(*argv, "--results-dir", str(results), "--no-cache") == 0
    (path,) = (results / "memorisation").rglob("*.json")
    data = json.loads(path.read_text(encoding="utf-8"))
    data["model"]["name"] = HOSTILE
    (path.parent / "hostile.json").write_text(json.dumps(data), encoding="utf-8")
    data["tasks"]["mcq_ne"]["summary"]["minkpp"]["above_p95"] = 0.99
    (path.parent / "edited.json").write_text(json.dumps(data), encoding="utf-8")
    out = tmp_path / "report"
    assert main(["report", str(results), "--out", str(out), "--resamples", "10", "-q"]) == 0

    summary = read_probes(path)["tasks"]["mcq_ne"]
    with (out / "memorisation.csv").open(encoding="utf-8", newline="") as handle:
        raw = list(csv.DictReader(handle))
    rows = {csv_cell_read(r["file"]).rsplit("/", 1)[-1]: {k: csv_cell_read(v) for k, v in r.items()} for r in raw}
    assert set(rows) == {path.name, "hostile.json"}  # the edited file is refused, not shown
    row = rows[path.name]
    minkpp, completion = summary["summary"]["minkpp"], summary["completion"]["summary"]
    assert row["numbers"] == "ours" and row["task"] == "mcq_ne" and row["data"] == "⚠ sample data"
    assert (int(float(row["items"])), int(float(row["compared"]))) == (6, summary["summary"]["compared"])
    assert float(row["Min-K%++ AUC"]) == pytest.approx(minkpp["auc"], abs=5e-4)
    assert row["95% CI (AUC)"] == f"{minkpp['auc_ci_low']:.2f}–{minkpp['auc_ci_high']:.2f}"
    assert float(row["above ctrl p95 (%)"]) == pytest.approx(100 * minkpp["above_p95"], abs=0.05)
    assert float(row["exam exact (%)"]) == pytest.approx(100 * completion["exact"], abs=0.05)
    assert float(row["exact by chance (%)"]) == pytest.approx(100 * completion["control_exact"], abs=0.05)
    assert next(r for r in raw if r["file"].endswith("hostile.json"))["model"] == "'" + HOSTILE
    page = (out / "index.html").read_text(encoding="utf-8")
    markdown = (out / "report.md").read_text(encoding="utf-8")
    assert 'id="memorisation"' in page and "<script>alert" not in page and "&lt;script&gt;alert(1)" in page
    assert "<script>" not in markdown and "\\*model\\*" in markdown
    assert "edited.json: tasks.mcq_ne.summary.minkpp.above_p95: expected 0.5" in page  # refused, with the field
    assert str(tmp_path) not in page.split("edited.json")[1][:200]  # by its place in the folder, no machine's path

    board = load_memorisation_board(results)
    with gr.Blocks():
        legend, table, skipped = build_memorisation_board(board)
    assert legend.visible and table.visible and skipped.visible and len(table.value["data"]) == 2
    assert "edited.json" in skipped.value and "tasks.mcq\\_ne" in skipped.value  # Markdown from a file: escaped
    kinds = [table.datatype] if isinstance(table.datatype, str) else table.datatype
    assert not {"html", "markdown"} & set(kinds)  # cells are text: a name is shown as written, never as markup
    names = {row[0] for row in table.value["data"]}
    assert HOSTILE in names and not any("/" in name.removeprefix(HOSTILE) for name in names)  # no machine's path
    with gr.Blocks():
        assert not any(c.visible for c in build_memorisation_board(load_memorisation_board(tmp_path / "none")))
