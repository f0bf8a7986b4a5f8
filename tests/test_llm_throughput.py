"""Smoke test of ``benchmarks/llm_throughput.py``: its items, its requests, and a tiny run whose parity must hold.

The benchmark's figures are only meaningful at full size on a quiet machine; what a test can
hold it to is that both backends are asked the same requests and answer them alike (within
1e-4, ``is_greedy`` included), that batched generation makes the pipeline's tokens, and
that its parity check would notice a difference.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from nlue.lm.base import Loglikelihood
from nlue.registry.kinds.mcq_text import KEY_LABEL, TEXT_LABEL
from nlue.registry.kinds.multiple_choice import item_options, key_letter

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "llm_throughput.py"


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("llm_throughput", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_items_past_the_written_ones_rotate_their_options_and_keep_the_keyed_text(bench: ModuleType) -> None:
    items = bench.make_items(200)
    written = sum(1 for item in items if item["id"].endswith("-r0"))  # the sample's own items come first
    assert 0 < written < 100
    assert len({item["id"] for item in items}) == 200
    for base, turned in zip(items[:written], items[written : 2 * written], strict=True):
        assert turned["id"].removesuffix("-r1") == base["id"].removesuffix("-r0")
        before, after = item_options(base), item_options(turned)
        assert after != before and sorted(after.values()) == sorted(before.values())
        assert after[key_letter(turned["correct_key"])] == before[key_letter(base["correct_key"])]


def test_requests_share_one_context_per_item(bench: ModuleType) -> None:
    items = bench.make_items(3)
    by_text = bench.loglikelihood_requests(items, "ne", "options")
    assert len(by_text) == 12 and len({r.context for r in by_text}) == 3
    assert all(r.context.endswith(TEXT_LABEL) for r in by_text)
    assert [r.continuation for r in by_text[:4]] == [f" {text}" for text in item_options(items[0]).values()]
    by_letter = bench.loglikelihood_requests(items, "ne", "letters", instruction=True)
    assert [r.continuation for r in by_letter[:4]] == [" A", " B", " C", " D"]
    assert all(
        r.context.endswith(KEY_LABEL) and len(r.context) > len(t.context)
        for r, t in zip(by_letter, by_text, strict=True)
    )


def test_slices_cover_every_request_once_on_item_bounds(bench: ModuleType) -> None:
    parts = bench.slices(28, 3, 4)
    assert [i for part in parts for i in range(28)[part]] == list(range(28))
    assert all(part.start % 4 == 0 for part in parts) and len(parts) == 3
    assert [p.stop - p.start for p in bench.slices(5, 8)] == [1] * 5  # never an empty slice


def test_parity_reports_the_largest_difference_and_greedy_disagreements(bench: ModuleType) -> None:
    ours = [Loglikelihood(-1.0, True), Loglikelihood(-2.5, False), Loglikelihood(-3.0, False)]
    check = bench.parity(ours, [(-1.0, True), (-2.501, False), (-3.0, True)])
    assert check["max_abs_diff"] == pytest.approx(1e-3) and check["worst_request"] == 1
    assert check["greedy_agree"] == 2 and check["requests"] == 3
    with pytest.raises(ValueError, match="2 answers of ours against 3"):
        bench.parity(ours[:2], [(-1.0, True)] * 3)


def test_quick_run_matches_lm_eval_and_the_pipeline(bench: ModuleType, one_torch_thread, capsys) -> None:
    result = bench.main(["--quick", "--skip-http", "--items", "5", "--gen-prompts", "3", "--max-new-tokens", "4"])
    check = result["loglikelihood"]["parity"]
    assert check["requests"] == 20 and check["greedy_agree"] == 20
    assert check["max_abs_diff"] <= bench.GOALS["parity"]
    assert result["loglikelihood"]["contexts"] == 5 and result["loglikelihood"]["continuation_tokens"] > 1
    per_item = result["loglikelihood"]["tokens_per_item"]  # the instruction once, not once per option
    assert 0 < per_item["ours"] < per_item["lm_eval"] / 4
    assert all(rate > 0 for rate in result["loglikelihood"]["requests_per_second"].values())
    generation = result["generation"]
    assert generation["tokens"] == {"ours": 12, "pipeline": 12} and generation["same_text"] == 3
    assert result["http"] is None
    printed = capsys.readouterr().out
    assert "log-likelihood requests/s" in printed and "lm-eval HFLM, batch 16" in printed
    assert "tokens computed per item" in printed
    assert f"max |log-likelihood diff| {check['max_abs_diff']:.2e} over 20 requests" in printed
