"""The batched, cached and pruned GMET scorer ranks exactly as the plain algorithm does.

``reference_predict`` below is the scorer as it stood before the forward-pass work of
issue 14: one sequence per forward pass, full logits, no cache shared between
candidates, no pruning. It reuses only the predictor's tokenisation helpers
(``encode_context``, ``encode``, ``word_of``), which the speed work did not touch, so
any change in which passes run, how they are batched, cached or skipped shows up here
as a different ranking or score.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from nlue.gmet.items import GmetItem, ItemPrediction, load_items  # noqa: E402
from nlue.lm.baselines.ngram import corpus_texts  # noqa: E402
from nlue.lm.baselines.tiny_mlm import train_tiny_mlm  # noqa: E402
from nlue.lm.masked.predictor import MaskedLMPredictor  # noqa: E402
from nlue.lm.tiny import save_tiny_encoder  # noqa: E402
from nlue.text.normalize import normalize_answer  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _distinct(words: list[str] | tuple[str, ...]) -> list[str]:
    seen: set[str] = set()
    out = []
    for word in words:
        key = normalize_answer(word)
        if key and key not in seen:
            seen.add(key)
            out.append(word)
    return out


def reference_predict(p: MaskedLMPredictor, items: list[GmetItem]) -> tuple[list[ItemPrediction], int]:
    """The pre-issue-14 algorithm, one item and one sequence at a time; also the distinct sequences it needed."""
    rows: dict[tuple[tuple[int, ...], int], Any] = {}
    vocab_bias: dict[str, Any] = {}

    def row(key: tuple[int, ...], pos: int) -> Any:
        if (key, pos) not in rows:
            with torch.inference_mode():
                logits = p.model(input_ids=torch.tensor([key]), attention_mask=torch.ones(1, len(key))).logits
            rows[(key, pos)] = torch.log_softmax(logits[0, pos].float(), dim=-1)
        return rows[(key, pos)]

    def best(key: tuple[int, ...], pos: int, allowed: str, k: int) -> list[int]:
        values = row(key, pos)
        if allowed not in vocab_bias:
            bias = p._bias[allowed]
            size = values.shape[0]
            vocab_bias[allowed] = torch.nn.functional.pad(bias[:size], (0, max(0, size - bias.shape[0])), value=-1e9)
        picked = values + vocab_bias[allowed]
        top_values, top_ids = picked.topk(min(k, picked.shape[0]))
        return [t for t, v in zip(top_ids.tolist(), top_values.tolist(), strict=True) if v > -1e8]

    out = []
    mask = p.mask_id
    fetch = p.top_k * 3 + 5
    for item in items:
        ctx = p.encode_context([item])[0]
        assert ctx is not None

        def masked(filled: list[int], n: int, ctx: Any = ctx) -> tuple[int, ...]:
            return ctx.left + tuple(filled) + (mask,) * (n - len(filled)) + ctx.right

        proposals: list[str] = []
        for token in best(masked([], 1), len(ctx.left), "start", fetch):
            if word := p.word_of([token]):
                proposals.append(word)
            if len(proposals) >= p.top_k:
                break
        for n in range(2, p.max_pieces + 1):
            chosen = best(masked([], n), len(ctx.left), "start", 1)
            while chosen and len(chosen) < n:
                following = best(masked(chosen, n), len(ctx.left) + len(chosen), "continue", 1)
                if not following:
                    break
                chosen.append(following[0])
            if len(chosen) == n and (word := p.word_of(chosen)):
                proposals.append(word)
        words = _distinct(proposals)
        entries = list(zip(words, p.encode([item] * len(words), words), strict=True))
        if p.answer_candidates:
            known = {normalize_answer(w) for w in words}
            answers = [a for a in _distinct(item.answers) if normalize_answer(a) not in known]
            entries += list(zip(answers, p.encode([item] * len(answers), answers), strict=True))
        scored = []
        for order, (word, enc) in enumerate(entries):
            if enc is None:
                continue
            n = len(enc.pieces)
            ll = 0.0
            for i in range(n):
                key = enc.left + enc.pieces[:i] + (mask,) * (n - i) + enc.right
                ll += row(key, len(enc.left) + i)[enc.pieces[i]].item()
            scored.append((-(ll / n**p.length_alpha), order, word, ll, n))
        scored.sort()
        prediction = ItemPrediction(id=item.id, top_k=[], scores=[])
        for negative, _, word, ll, n in scored[: p.top_k]:
            prediction.top_k.append(word)
            prediction.scores.append(round(-negative, 6))
            prediction.pieces.append(n)
            prediction.log_likelihoods.append(round(ll, 6))
        out.append(prediction)
    return out, len({key for key, _ in rows})


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Briefly trained tiny BERT and RoBERTa (peaked enough that pruning happens) and a random-weight BERT."""
    root = tmp_path_factory.mktemp("parity-models")
    texts = list(corpus_texts())
    built = {f"trained-{f}": train_tiny_mlm(root / f, texts, f, steps=60) for f in ("bert", "roberta")}
    built["random-bert"] = save_tiny_encoder(root / "random-bert", "bert")
    return built


def _same(new: list[ItemPrediction], old: list[ItemPrediction]) -> None:
    assert len(new) == len(old)
    for a, b in zip(new, old, strict=True):
        assert a.id == b.id
        assert a.top_k == b.top_k, f"item {a.id}"
        assert a.pieces == b.pieces, f"item {a.id}"
        assert a.scores == pytest.approx(b.scores, abs=2e-5), f"item {a.id}"
        assert a.log_likelihoods == pytest.approx(b.log_likelihoods, abs=5e-5), f"item {a.id}"


CASES = [  # (model, listed answers ranked too, length_alpha)
    ("trained-bert", False, 1.0),  # the default settings
    ("trained-bert", False, 0.0),  # raw joint log-likelihood: many candidates are provably out of the top k
    ("trained-bert", True, 0.0),  # the diagnostic, with pruning among the answers
    ("trained-roberta", False, 1.0),  # byte-level BPE, <mask> that keeps the space before it as a token
    ("trained-roberta", True, 1.0),
    ("random-bert", False, 1.0),
]


@pytest.mark.parametrize(("name", "answers", "alpha"), CASES, ids=["-".join(map(str, case)) for case in CASES])
def test_rankings_and_scores_equal_the_plain_algorithm(models: dict[str, Path], name: str, answers: bool, alpha: float):
    items = load_items(None)[::2]  # 75 items over all themes: the plain algorithm is slow
    predictor = MaskedLMPredictor.from_pretrained(
        str(models[name]), answer_candidates=answers, length_alpha=alpha, batch_size=16, show_progress=False
    )
    expected, needed = reference_predict(predictor, items)
    got = predictor.predict(items)
    assert predictor.trim_last_layer and predictor.last_pass_trimmed  # the last layer ran at the read positions only
    _same(got, expected)
    # Never more passes than the distinct sequences the plain algorithm needs, and never one sequence twice.
    assert predictor.forward_sequences <= needed
    assert predictor.repeated_sequences == 0
    if name == "trained-bert" and alpha == 0.0:
        assert predictor.pruned_candidates > 0
        assert predictor.forward_sequences < needed


def test_chunked_row_cache_changes_nothing(models: dict[str, Path]):
    """A tiny row-cache budget cuts the items into many chunks; the results stay those of the plain algorithm."""
    items = load_items(None)[:40]
    predictor = MaskedLMPredictor.from_pretrained(
        str(models["trained-bert"]), batch_size=8, length_alpha=0.0, show_progress=False
    )
    expected, _ = reference_predict(predictor, items)
    predictor.row_cache_bytes = 1  # one item per chunk
    got = predictor.predict(items)
    assert predictor.last_chunks == len(items)
    _same(got, expected)
    predictor.row_cache_bytes = 1 << 30  # one chunk: other batches, so equal up to float rounding
    _same(predictor.predict(items), expected)
    assert predictor.last_chunks == 1


def test_pruning_never_drops_an_answer_the_listed_answers_would_add(models: dict[str, Path]):
    """Diagnostic mode: an answer equal to a pruned candidate must not sneak in as a new entry."""
    items = load_items(None)[:40]
    predictor = MaskedLMPredictor.from_pretrained(str(models["trained-bert"]), length_alpha=0.0, show_progress=False)
    plain = predictor.predict(items)
    # Each item's own proposals, also listed as its answers: the diagnostic may add nothing new.
    echoed = [dataclasses.replace(item, answers=tuple(p.top_k)) for item, p in zip(items, plain, strict=True)]
    predictor.answer_candidates = True
    expected, _ = reference_predict(predictor, echoed)
    _same(predictor.predict(echoed), expected)


def test_cpu_batches_are_full_or_barely_padded(models: dict[str, Path]):
    predictor = MaskedLMPredictor.from_pretrained(str(models["random-bert"]), batch_size=32, show_progress=False)
    lengths = [10] * 20 + [11] * 40 + [12] + [13] * 3 + [30] * 9 + [31] * 2
    keys = [tuple(range(n)) for n in lengths]
    batches = list(predictor._batches(keys))
    assert [key for batch in batches for key in batch] == keys  # order kept, nothing lost
    for batch in batches:
        assert 1 <= len(batch) <= 32
        padded, real = len(batch) * max(map(len, batch)), sum(map(len, batch))
        # Padding beyond 2% only where the batch had fewer than MIN_BATCH_TOKENS (256) real tokens before.
        assert padded <= 1.02 * real or real - max(map(len, batch)) < 256
    # 20 tens (200 tokens) take six 11s to pass 256 tokens; a seventh would pad the batch 7% (297 for 277): cut.
    assert [len(key) for key in batches[0]] == [10] * 20 + [11] * 6
    assert [len(key) for key in batches[1]] == [11] * 32
    predictor.device = "cuda"  # on an accelerator only the batch size cuts
    assert [len(b) for b in predictor._batches(keys)] == [32, 32, 11]


@pytest.mark.parametrize(
    ("first_factor", "pending_first", "pruned"),
    [
        (-6.2, False, True),  # bound -3.1: all three exact words rank ahead
        (-6.0, False, True),  # bound -3.0 ties the third, which comes first in the candidate order
        (-6.0, True, False),  # ...but not when the pending word comes first: a tie would put it third
        (-5.0, False, False),  # bound -2.5: only two rank ahead, it could still be third
        (-1.0, False, False),
    ],
)
def test_pruning_bound_at_the_edge(models: dict[str, Path], first_factor: float, pending_first: bool, pruned: bool):
    """Three words with exact scores -1, -2, -3 (top_k 3) and a two-piece word whose first factor bounds its score."""
    from nlue.lm.masked.pieces import Encoded

    predictor = MaskedLMPredictor.from_pretrained(
        str(models["random-bert"]), top_k=3, length_alpha=1.0, show_progress=False
    )
    tok, mask = predictor.tokenizer, predictor.mask_id
    cls, sep = tok.cls_token_id, tok.sep_token_id
    exact = [(f"w{t}", Encoded((cls,), (t,), (sep,))) for t in (10, 11, 12)]
    for (_, enc), value in zip(exact, (-1.0, -2.0, -3.0), strict=True):
        predictor._logp[((cls, mask, sep), 1, enc.pieces[0])] = value
    pending = ("two", Encoded((cls,), (20, 21), (sep,)))
    predictor._logp[((cls, mask, mask, sep), 1, 20)] = first_factor
    entries = [pending, *exact] if pending_first else [*exact, pending]
    before = predictor.forward_sequences
    [gone] = predictor.score_entries([entries])
    order = entries.index(pending)
    assert (order in gone) is pruned
    assert predictor.forward_sequences - before == (0 if pruned else 1)  # its second factor's pass, or none
    assert (((cls, 20, mask, sep), 2, 21) in predictor._logp) is not pruned  # its exact score can be ranked
