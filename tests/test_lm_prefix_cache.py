"""Prompts that share an instruction block: its cache is computed once and every number stays lm-eval's.

The tiny GPT-2- and Llama-style models are built here (no download). Each test compares with
lm-evaluation-harness's ``HFLM`` or with whole runs, so a wrong mask, a wrong position or a
stale cache would move a log-likelihood.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from nlue.lm.base import GenerationRequest, LoglikelihoodRequest
from nlue.lm.local import LocalCausalLM
from nlue.lm.prefix_cache import MIN_SHARED_TOKENS, SharedPrefixes, common_prefix_length
from nlue.lm.tiny import save_tiny_causal_lm

INSTRUCTION = (
    "तलको प्रश्न पढ्नुहोस् र दिइएका विकल्पमध्ये एउटा मात्र सही उत्तर छान्नुहोस्। उत्तर छोटो राख्नुहोस् र कुनै व्याख्या नगर्नुहोस्।\n\n"
)
OTHER_INSTRUCTION = "Read the sentence and say whether its meaning is literal or idiomatic. Answer in one word.\n\n"
QUESTIONS = [
    "प्रश्न: नेपालको सबैभन्दा अग्लो हिमाल कुन हो?\nउत्तर:",
    "प्रश्न: पानी कति डिग्रीमा उम्लन्छ?\nउत्तर:",
    "प्रश्न: एक हप्तामा कति दिन हुन्छन्?\nउत्तर:",
    "प्रश्न: हाम्रो राष्ट्रिय फूल कुन हो?\nउत्तर:",
    "प्रश्न: सगरमाथा कुन देशमा छ?\nउत्तर:",
]
OPTIONS = [" सगरमाथा", " सय डिग्री सेल्सियस", " सात", " लालीगुराँस", " A"]


def _requests(instruction: str) -> list[LoglikelihoodRequest]:
    return [LoglikelihoodRequest(instruction + q, o) for q in QUESTIONS for o in OPTIONS]


def _lm_eval(path: Path, requests: list[LoglikelihoodRequest]) -> list[tuple[float, bool]]:
    from lm_eval.api.instance import Instance
    from lm_eval.models.huggingface import HFLM

    reference = HFLM(pretrained=str(path), device="cpu", batch_size=4)
    return reference.loglikelihood(
        [Instance("loglikelihood", {}, (r.context, r.continuation), i) for i, r in enumerate(requests)],
        disable_tqdm=True,
    )


def test_common_prefix_leaves_each_sequence_a_token_of_its_own() -> None:
    assert common_prefix_length([(1, 2, 3, 4), (1, 2, 3, 5), (1, 2, 9)]) == 2
    assert common_prefix_length([(1, 2, 3), (1, 2, 3, 4)]) == 2  # the shorter one keeps its last token
    assert common_prefix_length([(7, 8), (7, 8)], own=1) == 1
    assert common_prefix_length([(1,), (2,)]) == 0
    assert common_prefix_length([]) == 0


@pytest.mark.parametrize("family", ["gpt2", "llama"])
def test_shared_instruction_runs_once_across_batches_and_equals_lm_eval(tiny_lms: dict[str, Path], family: str) -> None:
    lm = LocalCausalLM(tiny_lms[family], batch_size=5, show_progress=False)  # one question per batch
    requests = _requests(INSTRUCTION)
    ours = lm.loglikelihood(requests)
    for request, mine, (logprob, greedy) in zip(requests, ours, _lm_eval(tiny_lms[family], requests), strict=True):
        assert mine.logprob == pytest.approx(logprob, abs=1e-4), request
        assert mine.is_greedy == greedy, request
    pairs = [lm.encoder.encode(i, r) for i, r in enumerate(requests)]
    contexts = sorted({p.context for p in pairs})
    shared = common_prefix_length(contexts)
    assert shared >= MIN_SHARED_TOKENS
    # the instruction once, then each question's own tokens and each option's inputs; nothing else
    own = sum(len(c) - shared for c in contexts) + sum(len(p.continuation) - 1 for p in pairs)
    assert lm.scorer.prefixes.tokens_run == shared
    assert lm.scorer.tokens_run == own  # the once-per-model layout check is not counted
    whole = sum(len(p.context) + len(p.continuation) - 1 for p in pairs)
    assert whole > 3 * (own + shared)  # what lm-eval computes, against ours


def test_a_later_call_reuses_the_kept_instruction(tiny_lms: dict[str, Path]) -> None:
    lm = LocalCausalLM(tiny_lms["gpt2"], batch_size=10, show_progress=False)
    requests = _requests(INSTRUCTION)
    first = lm.loglikelihood(requests[:10])
    computed = lm.scorer.prefixes.tokens_run
    again = lm.loglikelihood(requests[10:])
    assert lm.scorer.prefixes.tokens_run == computed  # nothing recomputed for the second call
    lm.scorer.share_prefixes = False
    assert [r.logprob for r in first + again] == pytest.approx(
        [r.logprob for r in lm.loglikelihood(requests)], abs=1e-5
    )


def test_two_tasks_in_one_call_each_keep_their_own_prefix(tiny_lms: dict[str, Path]) -> None:
    lm = LocalCausalLM(tiny_lms["llama"], batch_size=10, show_progress=False)
    requests = _requests(INSTRUCTION) + _requests(OTHER_INSTRUCTION)
    ours = lm.loglikelihood(requests)
    assert len(lm.scorer.prefixes._kept) == 2
    for mine, (logprob, greedy) in zip(ours, _lm_eval(tiny_lms["llama"], requests), strict=True):
        assert mine.logprob == pytest.approx(logprob, abs=1e-4)
        assert mine.is_greedy == greedy


def test_a_model_that_ignores_the_mask_is_caught_and_run_whole(tmp_path: Path, caplog) -> None:
    # larger random weights than the default: attention that is not near-uniform, so what a token sees matters
    path = save_tiny_causal_lm(tmp_path / "sharp", "gpt2", initializer_range=0.3)
    lm = LocalCausalLM(path, batch_size=10, show_progress=False)
    forward = lm.model.forward

    def ignoring_4d_masks(*args, **kwargs):  # as an attention kernel that drops custom masks would
        mask = kwargs.get("attention_mask")
        if mask is not None and mask.dim() == 4:
            kwargs["attention_mask"] = None
        return forward(*args, **kwargs)

    lm.model.forward = ignoring_4d_masks
    requests = _requests(INSTRUCTION)
    ours = lm.loglikelihood(requests)
    assert lm.scorer.share_prefixes is False
    assert "does not reproduce a whole run" in caplog.text
    for mine, (logprob, _) in zip(ours, _lm_eval(path, requests), strict=True):
        assert mine.logprob == pytest.approx(logprob, abs=1e-4)


def test_a_short_common_opening_is_not_worth_a_prefix(tiny_lms: dict[str, Path]) -> None:
    lm = LocalCausalLM(tiny_lms["gpt2"], show_progress=False)
    prefixes = SharedPrefixes(lm.model)
    assert prefixes.choose([(1, 2, 3, 4, 5), (1, 2, 3, 4, 6)]) == 0  # shorter than MIN_SHARED_TOKENS
    long = tuple(range(40))
    assert prefixes.choose([(*long, 1), (*long, 2)]) == 40
    assert prefixes.choose([(*long, 1)]) == 0  # a lone context with nothing kept: no separate pass


@pytest.mark.parametrize("family", ["gpt2", "llama"])
def test_generation_with_a_shared_instruction_equals_one_prompt_at_a_time(
    tiny_lms: dict[str, Path], family: str
) -> None:
    lm = LocalCausalLM(tiny_lms[family], batch_size=5, show_progress=False)
    requests = [GenerationRequest(prompt=INSTRUCTION + q, max_new_tokens=8) for q in QUESTIONS]
    batched = lm.generate(requests)
    assert lm.scorer.prefixes.tokens_run > MIN_SHARED_TOKENS  # the instruction was run on its own, once
    lm.scorer.share_prefixes = False
    alone = [lm.generate([r])[0] for r in requests]
    assert batched == alone


def test_threads_sharing_one_model_get_the_numbers_each_would_get_alone(tiny_lms: dict[str, Path]) -> None:
    """The Space asks one loaded model from several threads: kept prefixes and the context memo must not mix."""
    from concurrent.futures import ThreadPoolExecutor

    lm = LocalCausalLM(tiny_lms["gpt2"], batch_size=4, show_progress=False)
    calls = [_requests(INSTRUCTION)[k::3] for k in range(3)] + [_requests(OTHER_INSTRUCTION)[k::3] for k in range(3)]
    alone = [LocalCausalLM(tiny_lms["gpt2"], batch_size=4, show_progress=False).loglikelihood(c) for c in calls]
    with ThreadPoolExecutor(6) as pool:
        together = list(pool.map(lm.loglikelihood, calls * 3))
    for got, expected in zip(together, alone * 3, strict=True):
        assert [r.logprob for r in got] == pytest.approx([r.logprob for r in expected], abs=1e-5)
