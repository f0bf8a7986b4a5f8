"""The local backend: a transformers causal LM, loaded once, asked in sorted batches, answers cached.

* Placement: on CUDA the weights load in bfloat16 (float16 where the GPU has no bf16) with
  ``device_map="auto"``, so a model larger than one GPU is spread over the GPUs (and CPU)
  by accelerate; elsewhere float32 on the chosen device. ``dtype``/``device_map`` override.
* Log-likelihood: :mod:`nlue.lm.local_scoring` (lm-eval's definition, shared contexts run once).
* Generation: greedy (``do_sample=False``), batched by stop list and token cap, prompts
  sorted by length and left-padded; a stop sequence in a row's generated text ends the row
  (:mod:`nlue.lm.stops`, not transformers' ``stop_strings``, which cannot read some
  vocabularies) and the text is cut before the first stop sequence. Chat requests go through
  the tokenizer's chat template (``add_generation_prompt=True``); a tokenizer without one is
  an error, not a silent guess.
* Resume: every batch's answers are stored in the answer cache before the next batch starts, keyed by
  ``hf:<model>``, the request and what changes the numbers (dtype, window, BOS rule; for
  chat requests a hash of the chat template).
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Sequence
from typing import Any

from nlue.errors import NlueError
from nlue.lm.answer_cache import AnswerCache
from nlue.lm.base import Generation, GenerationRequest, Loglikelihood, LoglikelihoodRequest, cut_at_stop
from nlue.lm.description import Capabilities, ModelDescription
from nlue.lm.journal import JournalledCall, open_journal
from nlue.lm.local_scoring import PairEncoder, PrefixSharingScorer, resolve_max_length
from nlue.lm.progress import WarningTally, progress_bar
from nlue.lm.weight_files import readable_weights

logger = logging.getLogger(__name__)


def _pick_device(device: str | None) -> str:
    import torch

    if device:
        return device
    if torch.cuda.is_available():
        return "cuda"
    return "mps" if getattr(torch.backends, "mps", None) and torch.backends.mps.is_available() else "cpu"


def _pick_dtype(dtype: str, device: str) -> Any:
    import torch

    if dtype != "auto":
        try:
            return getattr(torch, dtype) if isinstance(dtype, str) else dtype
        except AttributeError:
            raise NlueError(f"unknown dtype {dtype!r}; use auto, float32, bfloat16 or float16") from None
    if device.startswith("cuda"):
        return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    return torch.float32


class LocalCausalLM:
    """A transformers causal LM behind the :class:`~nlue.lm.base.LanguageModel` interface."""

    def __init__(
        self,
        model: str | os.PathLike[str],
        *,
        device: str | None = None,
        dtype: str = "auto",
        device_map: str | dict[str, Any] | None = None,
        batch_size: int = 16,
        max_length: int | None = None,
        add_bos_token: bool | None = None,
        share_prefixes: bool = True,
        journal: AnswerCache | str | os.PathLike[str] | None = None,  # the answer cache (or a path to one)
        show_progress: bool = True,
        revision: str | None = None,
        trust_remote_code: bool = False,
    ) -> None:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        if batch_size < 1:
            raise NlueError(f"batch_size must be at least 1, got {batch_size}")
        self.model_id = os.fspath(model)
        self.device = _pick_device(device)
        self.torch_dtype = _pick_dtype(dtype, self.device)
        if device_map is None and self.device == "cuda":
            device_map = "auto"  # one GPU when it fits, spread over GPUs (and CPU) when it does not
        self.device_map = device_map
        common: dict[str, Any] = {
            "trust_remote_code": trust_remote_code,
            **({"revision": revision} if revision else {}),
        }
        placement = {"dtype": self.torch_dtype, **({"device_map": device_map} if device_map else {})}
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(self.model_id, **common)
            with readable_weights(self.model_id):
                self.model = AutoModelForCausalLM.from_pretrained(self.model_id, **common, **placement)
        except (OSError, ValueError) as exc:
            raise NlueError(
                f"cannot load a causal LM from {self.model_id!r}: {exc}. Give a local folder holding config.json, "
                "the weights and a tokenizer, or a Hub id while online"
            ) from exc
        if not device_map:
            self.model.to(self.device)
        self.model.eval()
        if self.tokenizer.pad_token_id is None:  # lm-eval's choice: unk, else eos
            self.tokenizer.pad_token = self.tokenizer.unk_token or self.tokenizer.eos_token
        self.batch_size = batch_size
        self.max_length = max_length or resolve_max_length(self.model.config, self.tokenizer)
        self.add_bos_token = add_bos_token
        prefix = self.tokenizer.bos_token_id if self.tokenizer.bos_token_id is not None else self.tokenizer.eos_token_id
        if prefix is None:
            raise NlueError(
                f"{self.model_id}: the tokenizer has neither a BOS nor an EOS token to stand for an empty context"
            )
        self.encoder = PairEncoder(self.tokenizer, prefix, self.max_length, add_bos_token)
        self.scorer = PrefixSharingScorer(self.model, self.tokenizer.pad_token_id, batch_size, share_prefixes)
        self.journal = journal
        self.show_progress = show_progress
        self._torch_version = torch.__version__
        self._window: Any = None  # how far back stop checks decode; worked out at the first stop sequence

    @property
    def name(self) -> str:
        return f"hf:{self.model_id}"

    def _numeric_params(self) -> dict[str, Any]:
        return {
            "dtype": str(self.torch_dtype).removeprefix("torch."),
            "max_length": self.max_length,
            "add_bos_token": self.add_bos_token,
        }

    def describe(self) -> ModelDescription:
        import transformers

        chat = self.tokenizer.chat_template is not None
        return ModelDescription(
            backend="transformers",
            name=self.name,
            model=self.model_id,
            capabilities=Capabilities(generate=True, loglikelihood=True, chat=chat),
            max_length=self.max_length,
            settings={
                "device": self.device,
                "device_map": self.device_map if isinstance(self.device_map, str | type(None)) else "custom",
                "batch_size": self.batch_size,
                "prefix_sharing": self.scorer.share_prefixes,
                "chat_template": chat,
                "dtype": str(self.torch_dtype).removeprefix("torch."),
                "add_bos_token": self.add_bos_token,
                "transformers_version": transformers.__version__,
                "torch_version": self._torch_version,
            },
        )

    def render_chat(self, messages: Sequence[Any]) -> str:
        """The prompt text the chat template makes of ``messages``, ready for the assistant's turn."""
        if not self.tokenizer.chat_template:
            raise NlueError(
                f"{self.model_id} has no chat template, so chat messages cannot be formatted; "
                "send plain prompts, or use an instruct model whose tokenizer has one"
            )
        as_dicts = [m.to_dict() if hasattr(m, "to_dict") else dict(m) for m in messages]
        return self.tokenizer.apply_chat_template(as_dicts, add_generation_prompt=True, tokenize=False)

    # -- log-likelihood ---------------------------------------------------------------------------------

    def loglikelihood(self, requests: Sequence[LoglikelihoodRequest]) -> list[Loglikelihood]:
        journal, owned = open_journal(self.journal)
        try:
            call = JournalledCall(
                journal, self, "loglikelihood", self._numeric_params(), [r.to_dict() for r in requests]
            )
            if call.pending:
                with WarningTally(logger, "contexts cut to fit the model's window") as cuts:
                    pairs = [self.encoder.encode(i, requests[i], cuts) for i in call.pending]
                with progress_bar(self.show_progress, len(pairs), "log-likelihood", call.from_journal) as bar:

                    def done(batch: list[tuple[int, Loglikelihood]]) -> None:
                        call.record((i, r.to_dict()) for i, r in batch)
                        bar.update(len(batch))

                    self.scorer.score(pairs, done)
            return [Loglikelihood.from_dict(r) for r in call.results()]
        finally:
            if owned and journal is not None:
                journal.close()

    # -- generation -------------------------------------------------------------------------------------

    def _prompt_ids(self, request: GenerationRequest, cuts: WarningTally) -> list[int]:
        if request.messages is not None:
            ids = self.tokenizer.encode(self.render_chat(request.messages), add_special_tokens=False)
        else:
            ids = self.tokenizer.encode(request.prompt or "")
        room = self.max_length - request.max_new_tokens
        if room < 1:
            raise NlueError(
                f"max_new_tokens={request.max_new_tokens} leaves no room for a prompt in the model's "
                f"window of {self.max_length} tokens; ask for fewer new tokens"
            )
        if len(ids) > room:
            cuts.warn(
                "prompt of %d tokens cut by %d from the left to fit the model's window", len(ids), len(ids) - room
            )
            ids = ids[-room:]
        return ids

    def _generation_params(self, requests: Sequence[GenerationRequest]) -> dict[str, Any]:
        params = {**self._numeric_params(), "decoding": "greedy"}
        if any(r.is_chat for r in requests) and self.tokenizer.chat_template:
            template = self.tokenizer.chat_template
            params["chat_template_sha256"] = hashlib.sha256(str(template).encode("utf-8")).hexdigest()[:16]
        return params

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Generation]:
        journal, owned = open_journal(self.journal)
        try:
            call = JournalledCall(
                journal, self, "generate", self._generation_params(requests), [r.to_dict() for r in requests]
            )
            if call.pending:
                with WarningTally(logger, "prompts cut to fit the model's window") as cuts:
                    encoded = [(i, self._prompt_ids(requests[i], cuts)) for i in call.pending]
                buckets: dict[tuple[tuple[str, ...], int], list[tuple[int, list[int]]]] = {}
                for i, ids in encoded:
                    buckets.setdefault((requests[i].stop, requests[i].max_new_tokens), []).append((i, ids))
                plan = self.scorer.prefixes.plan([ids for _, ids in encoded]) if self.scorer.share_prefixes else {}
                with progress_bar(self.show_progress, len(encoded), "generation", call.from_journal) as bar:
                    made = 0
                    for (stop, cap), items in buckets.items():
                        items.sort(key=lambda item: -len(item[1]))
                        for start in range(0, len(items), self.batch_size):
                            batch = items[start : start + self.batch_size]
                            results = self._generate_batch([ids for _, ids in batch], stop, cap, plan)
                            call.record((i, r.to_dict()) for (i, _), r in zip(batch, results, strict=True))
                            made += sum(r.completion_tokens or 0 for r in results)
                            bar.update(len(batch))
                            bar.set_postfix_str(f"{made} tokens generated", refresh=False)
            return [Generation.from_dict(r) for r in call.results()]
        finally:
            if owned and journal is not None:
                journal.close()

    def _stop_window(self) -> Any:
        """How far back stop checks decode: worked out once per tokenizer, its per-token figures cached."""
        if self._window is None:
            from nlue.lm.stops import DecodeWindow

            self._window = DecodeWindow(self.tokenizer)
        return self._window

    def _generate_batch(
        self, prompts: list[list[int]], stop: tuple[str, ...], cap: int, plan: dict[tuple[int, ...], int] | None = None
    ) -> list[Generation]:
        import torch
        from transformers import GenerationConfig, StoppingCriteriaList

        pad = self.tokenizer.pad_token_id
        # [shared prefix][pads][own tokens]: the prefix's kept cache (an instruction every prompt opens with) is
        # reused, the pads are masked and generate's positions, counted from the mask, go on from the prefix
        shared, cache = 0, None
        if self.scorer.share_prefixes:
            shared = self.scorer.prefixes.choose(prompts, plan)
            with torch.inference_mode():
                cache = self.scorer.prefixes.expanded(prompts[0][:shared], len(prompts)) if shared else None
            shared = shared if cache is not None else 0
        own = [prompt[shared:] for prompt in prompts]
        width = shared + max(map(len, own))
        ids = torch.full((len(prompts), width), pad, dtype=torch.long)
        mask = torch.zeros((len(prompts), width), dtype=torch.long)
        for row, (prompt, tokens) in enumerate(zip(prompts, own, strict=True)):
            ids[row, :shared] = torch.tensor(prompt[:shared], dtype=torch.long)
            mask[row, :shared] = 1
            ids[row, width - len(tokens) :] = torch.tensor(tokens)
            mask[row, width - len(tokens) :] = 1
        base = self.model.generation_config
        eos = base.eos_token_id if base.eos_token_id is not None else self.tokenizer.eos_token_id
        eos_ids = set(eos if isinstance(eos, list) else [eos] if eos is not None else [])
        config = GenerationConfig(
            max_new_tokens=cap,
            do_sample=False,
            num_beams=1,
            pad_token_id=pad,
            eos_token_id=eos,
            bos_token_id=base.bos_token_id,
        )
        stops = None
        if stop:  # our own criterion: transformers' stop_strings probe the vocabulary and fail on some
            from nlue.lm.stops import StopSequenceCriteria

            stops = StopSequenceCriteria(self._stop_window(), stop, width, eos_ids)
        device = self.scorer.device
        with torch.inference_mode():
            out = self.model.generate(
                input_ids=ids.to(device),
                attention_mask=mask.to(device),
                generation_config=config,
                stopping_criteria=StoppingCriteriaList([stops] if stops else []),
                **({self.scorer.prefixes.cache_argument: cache} if cache is not None else {}),
            )
        results = []
        for row, (prompt, generated) in enumerate(zip(prompts, out[:, width:].tolist(), strict=True)):
            # a row that met a stop is cut at the token count the criterion saw, not at the first pad id:
            # pad may equal EOS or UNK, and without an EOS transformers does not pad finished rows at all
            hit = stops.stopped_at[row] if stops else None
            end = hit if hit is not None else next((i + 1 for i, t in enumerate(generated) if t in eos_ids), None)
            tokens = generated[:end] if end is not None else generated  # the model's EOS counts as generated
            ended = hit is None and end is not None
            text, stopped = cut_at_stop(self.tokenizer.decode(tokens, skip_special_tokens=True), stop)
            reason = "stop" if stopped or ended or len(tokens) < cap else "length"
            results.append(Generation(text, len(prompt), len(tokens), reason))
        return results


DEFAULT_BATCH_SIZE = 10  # the UrduMMLU paper's batch size for local models


def from_spec(spec: Any, **context: Any) -> LocalCausalLM:
    """The ``transformers`` backend (:mod:`nlue.lm.backends`): a local causal LM from a :class:`ModelSpec`."""
    return LocalCausalLM(
        spec.model, device=spec.device, dtype=spec.dtype, batch_size=spec.batch_size or DEFAULT_BATCH_SIZE,
        journal=spec.journal, show_progress=spec.show_progress, **{**dict(spec.options), **context},
    )  # fmt: skip
