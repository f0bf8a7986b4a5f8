"""The local transformers backend on tiny GPT-2- and Llama-style causal LMs built here (no download).

Log-likelihoods must equal lm-evaluation-harness's ``HFLM`` (its ``hf`` backend) within 1e-4,
``is_greedy`` included; generation in batches must equal generation one prompt at a time.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from nlue.errors import NlueError
from nlue.lm.base import ChatMessage, GenerationRequest, LoglikelihoodRequest
from nlue.lm.local import LocalCausalLM
from tests.answer_store import count_answers, stored

QUESTIONS = [
    "प्रश्न: नेपालको राजधानी कहाँ हो?\nउत्तर:",
    "वाक्य: आजको खाना एकदमै मीठो थियो।\nभावना: ",  # trailing space: lm-eval moves it to the continuation
    "क",
    "लामो प्रसङ्ग " * 60 + "अन्त्य:",  # longer than the 256-token window: cut from the left
]
OPTIONS = [" काठमाडौं", " पोखरा र धरान", " A", "सकारात्मक", " नकारात्मक भावना"]


def _requests(lm: LocalCausalLM) -> list[LoglikelihoodRequest]:
    requests = [LoglikelihoodRequest(q, o) for q in QUESTIONS for o in OPTIONS]
    requests += [LoglikelihoodRequest("", " काठमाडौं"), LoglikelihoodRequest(QUESTIONS[0], " काठमाडौं")]  # empty, repeat
    for question in QUESTIONS[:3]:  # the model's own greedy continuation (is_greedy True where it re-tokenizes alike)
        greedy = lm.generate([GenerationRequest(prompt=question, max_new_tokens=3)])[0].text
        requests.append(LoglikelihoodRequest(question, greedy))
    return requests


@pytest.mark.parametrize("family", ["gpt2", "llama"])
def test_loglikelihood_equals_lm_eval_hf_backend(tiny_lms: dict[str, Path], family: str) -> None:
    from lm_eval.api.instance import Instance
    from lm_eval.models.huggingface import HFLM

    lm = LocalCausalLM(tiny_lms[family], batch_size=5, show_progress=False)
    requests = _requests(lm)
    ours = lm.loglikelihood(requests)
    reference = HFLM(pretrained=str(tiny_lms[family]), device="cpu", batch_size=5).loglikelihood(
        [Instance("loglikelihood", {}, (r.context, r.continuation), i) for i, r in enumerate(requests)],
        disable_tqdm=True,
    )
    assert len(ours) == len(requests)
    for request, mine, (logprob, is_greedy) in zip(requests, ours, reference, strict=True):
        assert mine.logprob == pytest.approx(logprob, abs=1e-4), request
        assert mine.is_greedy == is_greedy, request
    assert ours[-3].is_greedy and not all(r.is_greedy for r in ours)  # both answers are exercised


def test_each_shared_context_runs_once_and_sharing_changes_no_number(tiny_lms: dict[str, Path]) -> None:
    lm = LocalCausalLM(tiny_lms["gpt2"], batch_size=8, show_progress=False)
    requests = [LoglikelihoodRequest(q, o) for q in QUESTIONS[:3] for o in OPTIONS]
    lm.loglikelihood(requests[:1])  # the once-per-model layout check runs here, not in the count below
    fed: list[int] = []
    forward = lm.model.forward

    def counting(*args, **kwargs):
        fed.append(kwargs["input_ids"].shape[0])
        return forward(*args, **kwargs)

    lm.model.forward = counting
    lm.scorer.tokens_run = 0
    shared = lm.loglikelihood(requests)
    pairs = [lm.encoder.encode(i, r) for i, r in enumerate(requests)]
    contexts = {p.context for p in pairs}
    expected = sum(map(len, contexts)) + sum(len(p.continuation) - 1 for p in pairs)
    assert lm.scorer.tokens_run == expected
    assert fed == [3]  # one pass: a row per question, its five options in the row
    assert expected < sum(len(p.context) + len(p.continuation) - 1 for p in pairs) / 2  # lm-eval's way
    lm.model.forward = forward
    lm.scorer.share_prefixes = False
    whole = lm.loglikelihood(requests)
    assert [r.logprob for r in shared] == pytest.approx([r.logprob for r in whole], abs=1e-5)
    assert [r.is_greedy for r in shared] == [r.is_greedy for r in whole]


@pytest.mark.parametrize("family", ["gpt2", "llama"])
def test_batched_generation_equals_one_prompt_at_a_time(tiny_lms: dict[str, Path], family: str) -> None:
    lm = LocalCausalLM(tiny_lms[family], batch_size=4, show_progress=False)
    requests = [GenerationRequest(prompt=q, max_new_tokens=10) for q in QUESTIONS]
    batched = lm.generate(requests)
    alone = [lm.generate([r])[0] for r in requests]
    assert batched == alone
    assert all(g.finish_reason == "length" and g.completion_tokens == 10 for g in batched)
    assert [g.prompt_tokens for g in batched][:3] == [len(lm.tokenizer.encode(q)) for q in QUESTIONS[:3]]


def test_stop_sequences_cut_the_text_and_end_the_row(tiny_lms: dict[str, Path]) -> None:
    lm = LocalCausalLM(tiny_lms["llama"], batch_size=4, show_progress=False)
    free = lm.generate([GenerationRequest(prompt=QUESTIONS[0], max_new_tokens=12)])[0]
    stop = free.text[4:6]
    stopped = lm.generate([GenerationRequest(prompt=QUESTIONS[0], max_new_tokens=12, stop=(stop,))])[0]
    assert stopped.text == free.text[: free.text.index(stop)]
    assert stopped.finish_reason == "stop" and stopped.completion_tokens < 12


def test_chat_messages_use_the_chat_template(tiny_lms: dict[str, Path]) -> None:
    chat = (ChatMessage("system", "छोटो उत्तर दिनुहोस्।"), ChatMessage("user", QUESTIONS[0]))
    lm = LocalCausalLM(tiny_lms["llama"], show_progress=False)
    rendered = lm.render_chat(chat)
    assert rendered.startswith("<|system|>\n") and rendered.endswith("<|assistant|>\n")
    by_chat = lm.generate([GenerationRequest(messages=chat, max_new_tokens=6)])[0]
    assert by_chat.prompt_tokens == len(
        lm.tokenizer.encode(rendered, add_special_tokens=False)
    )  # the template's BOS only
    assert by_chat.completion_tokens == 6 and by_chat.text
    base = LocalCausalLM(tiny_lms["gpt2"], show_progress=False)
    with pytest.raises(NlueError, match="has no chat template"):
        base.generate([GenerationRequest(messages=chat)])


def test_a_second_run_is_answered_from_the_cache(tiny_lms: dict[str, Path], tmp_path: Path) -> None:
    journal = tmp_path / "answers.sqlite"
    lm = LocalCausalLM(tiny_lms["gpt2"], journal=journal, show_progress=False)
    requests = [LoglikelihoodRequest(q, o) for q in QUESTIONS[:2] for o in OPTIONS]
    prompts = [GenerationRequest(prompt=q, max_new_tokens=4) for q in QUESTIONS[:2]]
    first, first_text = lm.loglikelihood(requests), lm.generate(prompts)
    lm.model.forward = None  # any model call now fails
    assert lm.loglikelihood(requests) == first
    assert lm.generate(prompts) == first_text
    lines = stored(journal)
    assert len(lines) == len(requests) + len(prompts) == len({line["key"] for line in lines})
    assert {line["model"] for line in lines} == {lm.name}


KILLED_RUN = """
import sys, time
from nlue.lm.base import LoglikelihoodRequest
from nlue.lm.local import LocalCausalLM
lm = LocalCausalLM(sys.argv[1], batch_size=4, journal=sys.argv[2], show_progress=False)
forward = lm.model.forward
def slow(*args, **kwargs):
    time.sleep(0.02)
    return forward(*args, **kwargs)
lm.model.forward = slow
lm.loglikelihood([LoglikelihoodRequest(f"प्रश्न {i}:", f" उत्तर {j}") for i in range(100) for j in range(4)])
"""


def test_a_run_killed_mid_way_resumes_with_nothing_lost_or_asked_twice(
    tiny_lms: dict[str, Path], tmp_path: Path
) -> None:
    journal = tmp_path / "answers.sqlite"
    child = subprocess.Popen([sys.executable, "-c", KILLED_RUN, str(tiny_lms["gpt2"]), str(journal)])
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and child.poll() is None:
        if count_answers(journal) >= 40:
            break
        time.sleep(0.05)
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    done_before = count_answers(journal)
    assert 40 <= done_before < 400, "the run must be killed mid-way"
    requests = [LoglikelihoodRequest(f"प्रश्न {i}:", f" उत्तर {j}") for i in range(100) for j in range(4)]
    lm = LocalCausalLM(tiny_lms["gpt2"], batch_size=4, journal=journal, show_progress=False)
    asked: list[int] = []
    encode = lm.encoder.encode
    lm.encoder.encode = lambda i, r, *rest: asked.append(i) or encode(i, r, *rest)
    resumed = lm.loglikelihood(requests)
    assert len(asked) == 400 - done_before  # exactly the unanswered ones
    keys = [entry["key"] for entry in stored(journal)]
    assert len(keys) == len(set(keys)) == 400
    fresh = LocalCausalLM(tiny_lms["gpt2"], batch_size=7, show_progress=False).loglikelihood(requests)
    assert [r.logprob for r in resumed] == pytest.approx([r.logprob for r in fresh], abs=1e-5)


def test_describe_and_clear_errors(tiny_lms: dict[str, Path], tmp_path: Path) -> None:
    lm = LocalCausalLM(tiny_lms["llama"], show_progress=False)
    described = lm.describe()
    assert described.backend == "transformers" and described.name == f"hf:{tiny_lms['llama']}"
    assert described.settings["dtype"] == "float32" and described.max_length == 256 and described.chat
    assert described.capabilities.modes() == ["generate", "loglik"]
    assert json.loads(json.dumps(described.to_dict()))["capabilities"]["chat"] is True
    with pytest.raises(NlueError, match="cannot load a causal LM"):
        LocalCausalLM(tmp_path / "missing")
    with pytest.raises(NlueError, match="leaves no room"):
        lm.generate([GenerationRequest(prompt="क", max_new_tokens=300)])


def test_contexts_cut_to_the_window_are_told_once_with_a_count(tiny_lms: dict[str, Path], caplog) -> None:
    lm = LocalCausalLM(tiny_lms["gpt2"], batch_size=8, show_progress=False)
    long = QUESTIONS[3]  # longer than the 256-token window
    with caplog.at_level("WARNING", logger="nlue.lm"):
        lm.loglikelihood([LoglikelihoodRequest(f"{k} {long}", option) for k in range(3) for option in OPTIONS])
    cut = [r.getMessage() for r in caplog.records if "cut by" in r.getMessage()]
    assert len(cut) == 1 and "further ones are counted" in cut[0]
    assert any("contexts cut to fit the model's window: 15 in all" in r.getMessage() for r in caplog.records)
