"""A local transformers sequence-to-sequence translation model (Marian, M2M-100, NLLB style).

It reads one text and writes one (:meth:`Seq2SeqLM.translate_texts`); ``nlue translate``
(:mod:`nlue.translate.mt`) puts each text field of each row through it. Texts run in batches of ``batch_size``, greedy, in bf16 on CUDA and float32 on CPU.
Multilingual checkpoints are steered with ``src_lang`` (set on the tokenizer) and
``tgt_lang``, the target language's token forced as the first generated one
(``npi_Deva`` for NLLB, ``__ne__`` for M2M-100).

Every translation is kept in the answer cache (:mod:`nlue.lm.answer_cache`, model ``mt:<checkpoint>``),
so a resumed run translates only what it had not; tokens are counted in a
:class:`~nlue.lm.cost.UsageMeter` (input and output tokens; there is no price).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from nlue.errors import NlueError
from nlue.lm.answer_cache import AnswerCache
from nlue.lm.cost import UsageMeter
from nlue.lm.description import Capabilities, ModelDescription
from nlue.lm.journal import JournalledCall
from nlue.lm.progress import progress_bar
from nlue.lm.weight_files import readable_weights

logger = logging.getLogger(__name__)


class Seq2SeqLM:
    """A local translation checkpoint (folder or Hub id), batched."""

    def __init__(
        self,
        model: str | Path,
        journal: AnswerCache | None = None,  # the answer cache
        batch_size: int = 16,
        max_new_tokens: int = 256,
        src_lang: str | None = None,
        tgt_lang: str | None = None,
        device: str | None = None,
        show_progress: bool = True,
    ) -> None:
        import torch
        from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

        if batch_size < 1 or max_new_tokens < 1:
            raise NlueError(f"batch size and max new tokens must be positive, got {batch_size} and {max_new_tokens}")
        self.model_id = str(model)
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        dtype = torch.bfloat16 if self.device.startswith("cuda") else torch.float32
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(self.model_id)
            with readable_weights(self.model_id):
                model = AutoModelForSeq2SeqLM.from_pretrained(self.model_id, dtype=dtype)
            self.model = model.to(self.device).eval()
        except (OSError, ValueError) as exc:
            raise NlueError(f"{self.model_id}: not a sequence-to-sequence checkpoint ({exc})") from exc
        if src_lang is not None:
            if not hasattr(self.tokenizer, "src_lang"):
                raise NlueError(f"{self.model_id}: its tokenizer takes no source language; leave out --src-lang")
            self.tokenizer.src_lang = src_lang
        self.forced_bos: int | None = None
        if tgt_lang is not None:
            token_id = self.tokenizer.convert_tokens_to_ids(tgt_lang)
            if token_id is None or token_id == self.tokenizer.unk_token_id:
                raise NlueError(f"{self.model_id}: the tokenizer has no token {tgt_lang!r} for the target language")
            self.forced_bos = int(token_id)
        self.src_lang, self.tgt_lang = src_lang, tgt_lang
        self.journal = journal
        self.batch_size = batch_size
        positions = getattr(self.model.config, "max_target_positions", None) or getattr(
            self.model.config, "max_position_embeddings", None
        )
        if positions and max_new_tokens >= positions:
            # Generating past the decoder's positions fails inside the model (an index error in the embedding).
            logger.info("%s: max new tokens lowered to %d, its decoder's length", self.model_id, positions - 1)
            max_new_tokens = positions - 1
        self.max_new_tokens = max_new_tokens
        self.show_progress = show_progress
        self.usage = UsageMeter()

    @property
    def name(self) -> str:
        return f"mt:{self.model_id}"

    def describe(self) -> ModelDescription:
        return ModelDescription(
            backend="seq2seq",
            name=self.name,
            model=self.model_id,
            capabilities=Capabilities(),  # a translator: none of the evaluation modes
            decoding="greedy",
            settings={
                "device": self.device,
                "num_beams": 1,
                "max_new_tokens": self.max_new_tokens,
                "src_lang": self.src_lang,
                "tgt_lang": self.tgt_lang,
                "batch_size": self.batch_size,
                "usage": self.usage.summary(),
            },
        )

    def _params(self) -> dict[str, Any]:
        return {"max_new_tokens": self.max_new_tokens, "src_lang": self.src_lang, "tgt_lang": self.tgt_lang}

    def _generate(self, texts: Sequence[str]) -> list[str]:
        import torch

        encoded = self.tokenizer(list(texts), return_tensors="pt", padding=True, truncation=True)
        encoded = {k: v.to(self.device) for k, v in encoded.items() if k in ("input_ids", "attention_mask")}
        options: dict[str, Any] = {"max_new_tokens": self.max_new_tokens, "num_beams": 1, "do_sample": False}
        if self.forced_bos is not None:
            options["forced_bos_token_id"] = self.forced_bos
        with torch.inference_mode():
            output = self.model.generate(**encoded, **options)
        pad = self.tokenizer.pad_token_id
        generated = int((output != pad).sum()) if pad is not None else output.numel()
        self.usage.add({"prompt_tokens": int(encoded["attention_mask"].sum()), "completion_tokens": generated})
        return [text.strip() for text in self.tokenizer.batch_decode(output, skip_special_tokens=True)]

    def translate_texts(self, texts: Sequence[str]) -> list[str]:
        """Each text translated; answers journalled as each batch completes."""
        call = JournalledCall(self.journal, self, "translate", self._params(), [{"text": t} for t in texts])
        pending = call.pending
        with progress_bar(self.show_progress, len(pending), f"translate ({self.model_id})", call.from_journal) as bar:
            for start in range(0, len(pending), self.batch_size):
                chunk = pending[start : start + self.batch_size]
                outputs = self._generate([texts[i] for i in chunk])
                call.record((i, {"text": out}) for i, out in zip(chunk, outputs, strict=True))
                bar.update(len(chunk))
        return [result["text"] for result in call.results()]


def from_spec(spec: Any, **context: Any) -> Seq2SeqLM:
    """The ``seq2seq`` backend (:mod:`nlue.lm.backends`); ``spec.options``: max_new_tokens, src_lang, tgt_lang."""
    options = {**dict(spec.options), **context}
    return Seq2SeqLM(
        spec.model, spec.journal, batch_size=spec.batch_size or 16, device=spec.device,
        show_progress=spec.show_progress, **options,
    )  # fmt: skip
