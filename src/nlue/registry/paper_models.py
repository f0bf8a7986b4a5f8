"""The models each paper evaluated, with the Hub id (or API model id) to run them by, as data.

* NLUE's 10 encoders: from :data:`nlue.registry.paper.PAPER_MODELS` (its Hub ids and which are ours);
* neDIOM's 7 models (:data:`nlue.registry.nediom.TABLE3_MODELS`): the paper links model families and
  docs, not checkpoints, so every id but XLM-R's is our reading of its names and sizes;
* UrduMMLU's 30 models (:data:`nlue.registry.mcq.URDUMMLU_TABLE4`): the Hub ids of the paper's
  Table 14 and the API ids its text gives for the six proprietary models, which run only behind
  their vendors' APIs.

The shipped rosters (``src/nlue/rosters/*-paper.yaml``) list the same models; a test keeps them in step.
"""

from __future__ import annotations

from dataclasses import dataclass

from nlue.registry.mcq import URDUMMLU_TABLE4
from nlue.registry.nediom import TABLE3_MODELS
from nlue.registry.paper import PAPER_MODELS


@dataclass(frozen=True)
class ListedModel:
    """One model of a paper's results, and how to run it."""

    name: str  # as the paper prints it
    id: str  # a Hub id, or an API's model id when ``api_only``
    architecture: str  # masked-lm or causal-lm
    params: str  # as the paper gives it ("" when undisclosed)
    id_is_guess: bool  # True: the paper does not name this checkpoint; the id is ours
    note: str = ""
    api_only: bool = False  # weights not released: reached only through the vendor's API


NLUE_MODELS: tuple[ListedModel, ...] = tuple(
    ListedModel(m.name, m.hub_id, "masked-lm", f"{m.params_millions}M", not m.hub_id_confirmed, m.hub_id_note)
    for m in PAPER_MODELS
)

_BLOOM = "the paper links the transformers BLOOM docs, not a checkpoint: the BigScience release of this size"
NEDIOM_MODELS: tuple[ListedModel, ...] = (
    ListedModel("XLM-R", "FacebookAI/xlm-roberta-base", "masked-lm", "279M", False,
                "the paper links huggingface.co/xlm-roberta-base, now FacebookAI/xlm-roberta-base"),
    ListedModel("BLOOM-560m", "bigscience/bloom-560m", "causal-lm", "560M", True, _BLOOM),
    ListedModel("BLOOM-1b1", "bigscience/bloom-1b1", "causal-lm", "1.1B", True, _BLOOM),
    ListedModel("BLOOM-3b", "bigscience/bloom-3b", "causal-lm", "3B", True, _BLOOM),
    ListedModel("BLOOM-7b", "bigscience/bloom-7b1", "causal-lm", "7.1B", True, _BLOOM),
    ListedModel("Llama2-7b", "meta-llama/Llama-2-7b-hf", "causal-lm", "7B", True,
                "the paper links the transformers Llama 2 docs; base or chat is not stated: the base model"),
    ListedModel("GPT-3.5", "gpt-3.5-turbo", "causal-lm", "", True,
                "OpenAI's API; the paper does not give the snapshot", api_only=True),
)  # fmt: skip

_TABLE14 = """
DeepSeek-V4-Flash|deepseek-ai/DeepSeek-V4-Flash|158B
Gemma-4-26B-A4B-IT|google/gemma-4-26B-A4B-it|27B
Gemma-4-31B-IT|google/gemma-4-31B-it|31B
LLaMA-3.3-70B|meta-llama/Llama-3.3-70B-Instruct|70B
Qwen3.6-27B|Qwen/Qwen3.6-27B|27B
Qwen3.6-35B-A3B|Qwen/Qwen3.6-35B-A3B|36B
LLaMA-4-Scout-17B-16E|meta-llama/Llama-4-Scout-17B-16E-Instruct|109B
LLaMA-4-Maverick-17B-128E|meta-llama/Llama-4-Maverick-17B-128E-Instruct|402B
BLOOMZ-1.1B|bigscience/bloomz-1b1|1.1B
BLOOMZ-1.7B|bigscience/bloomz-1b7|1.7B
BLOOMZ-3B|bigscience/bloomz-3b|3B
BLOOMZ-7B|bigscience/bloomz-7b1-mt|7B
Gemma-2-9B-IT|google/gemma-2-9b-it|9B
Gemma-3-4B-IT|google/gemma-3-4b-it|4B
LLaMA-3.2-3B|meta-llama/Llama-3.2-3B-Instruct|3B
LLaMA-3.1-8B|meta-llama/Llama-3.1-8B-Instruct|8B
Ministral-3-3B|mistralai/Ministral-3-3B-Instruct-2512|3B
Ministral-3-8B|mistralai/Ministral-3-8B-Instruct-2512|8B
Phi-4-mini|microsoft/Phi-4-mini-instruct|3B
Phi-3.5-mini|microsoft/Phi-3.5-mini-instruct|4B
Qwen3-4B-Instruct-2507|Qwen/Qwen3-4B-Instruct-2507|4B
Qwen3-8B|Qwen/Qwen3-8B|8B
Claude-Haiku-4.5|claude-haiku-4-5|
Claude-Sonnet-4.6|claude-sonnet-4-6|
Gemini-3.1-Flash-Lite|gemini-3.1-flash-lite|
Gemini-3.5-Flash|gemini-3.5-flash|
GPT-5.4-mini|gpt-5.4-mini|
GPT-5.4|gpt-5.4|
Qalb-1.0-8B|enstazao/Qalb-1.0-8B-Instruct|8B
Alif-1.0-8B|large-traversaal/Alif-1.0-8B-Instruct|8B
"""


def _urdummlu() -> tuple[ListedModel, ...]:
    groups = {row.model: row.group for row in URDUMMLU_TABLE4}
    models = []
    for line in _TABLE14.strip().splitlines():
        name, model_id, params = line.split("|")
        api_only = "/" not in model_id  # the proprietary six: an API id, no weights on the Hub
        note = f"Table 4 group: {groups[name]}" + ("; the paper's API id" if api_only else "; Hub id from Table 14")
        models.append(ListedModel(name, model_id, "causal-lm", params, False, note, api_only))
    return tuple(models)


URDUMMLU_MODELS: tuple[ListedModel, ...] = _urdummlu()
# The four models of the paper's few-shot runs (1, 3 and 5 shots, both prompt languages).
URDUMMLU_FEW_SHOT: tuple[str, ...] = ("LLaMA-3.1-8B", "Gemma-3-4B-IT", "Qwen3-8B", "Qwen3-4B-Instruct-2507")
# neDIOM's few-shot fine-tuning ran on these; BLOOM-7b and Llama2-7b were not fine-tuned, and GPT-3.5's
# "fine-tuning" happened behind OpenAI's API, which nlue does not drive.
NEDIOM_FEW_SHOT: tuple[str, ...] = ("XLM-R", "BLOOM-560m", "BLOOM-1b1", "BLOOM-3b")

PAPER_MODEL_LISTS: dict[str, tuple[ListedModel, ...]] = {
    "nlue": NLUE_MODELS,
    "nediom": NEDIOM_MODELS,
    "mcq": URDUMMLU_MODELS,
}
PAPER_TABLE_NAMES: dict[str, tuple[str, ...]] = {
    "nlue": tuple(m.name for m in PAPER_MODELS),
    "nediom": TABLE3_MODELS,
    "mcq": tuple(row.model for row in URDUMMLU_TABLE4),
}
