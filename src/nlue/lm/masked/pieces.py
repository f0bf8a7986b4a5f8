"""The pieces the masked-LM scorer works with: encoded words, forward-pass requests, mask and vocabulary.

See :mod:`nlue.lm.masked.predictor` for how a whole word is scored.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from nlue.errors import NlueError

Key = tuple[int, ...]


class BlankItem(Protocol):
    """What a word predictor reads of an item: a sentence with one blank (GMET's items are such).

    ``answers`` are read only by the answer-ranked diagnostic, never for a prediction.
    """

    @property
    def id(self) -> int: ...

    @property
    def left(self) -> str: ...

    @property
    def right(self) -> str: ...

    @property
    def answers(self) -> tuple[str, ...]: ...

    def filled(self, word: str) -> str: ...


@dataclass
class ItemPrediction:
    """What a predictor says about one item: its ranked whole-word candidates.

    ``top_k`` is best first; ``scores`` are the ranking scores (length-normalised
    log-likelihoods for masked LMs, log-probabilities for the n-gram baselines) and
    ``pieces`` how many tokens each candidate took (1 for the n-gram baselines).
    """

    id: int
    top_k: list[str]
    scores: list[float]
    pieces: list[int] = field(default_factory=list)
    log_likelihoods: list[float] = field(default_factory=list)  # unnormalised sums, same order as top_k

    @property
    def prediction(self) -> str:
        """The top-1 word (empty when the predictor proposed nothing)."""
        return self.top_k[0] if self.top_k else ""


@dataclass(frozen=True)
class Encoded:
    """A sentence with one word in place, split into context and the word's pieces."""

    left: Key
    pieces: Key
    right: Key


@dataclass(frozen=True)
class Ask:
    """What one forward pass must tell at one position: target log-probs and/or a top-k."""

    key: Key
    pos: int
    targets: tuple[int, ...] = ()
    top: int = 0
    allowed: str = ""  # "start" or "continue": which tokens a top-k may return


def mask_token_of(tokenizer: Any, name: str) -> tuple[str, int]:
    """The tokenizer's mask token and id; a clear error when it has none."""
    token = getattr(tokenizer, "mask_token", None)
    token_id = getattr(tokenizer, "mask_token_id", None)
    if token is None or token_id is None:
        raise NlueError(
            f"{name}: its tokenizer has no mask token, so it is not a masked language model; "
            "GMET needs a fill-mask checkpoint (BERT [MASK], RoBERTa/XLM-R <mask>, DeBERTa, ...)"
        )
    return str(token), int(token_id)


def masked_text(sentence: str, tokenizer: Any, placeholder: str = "[MASK]") -> str:
    """``sentence`` with the dataset's placeholder replaced by the tokenizer's own mask string."""
    token, _ = mask_token_of(tokenizer, getattr(tokenizer, "name_or_path", "model"))
    return sentence.replace(placeholder, token)


def pick_device(device: str = "auto") -> str:
    import torch

    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    return device


def vocabulary_classes(tokenizer: Any, vocab_size: int) -> tuple[list[bool], list[bool]]:
    """Which token ids may start a word and which may continue one.

    The tokenizer's piece convention decides: SentencePiece marks word starts with ``▁``,
    byte-level BPE with ``Ġ``, WordPiece marks continuations with ``##``. Special tokens
    and ids the tokenizer does not know are neither. With no recognisable convention
    every ordinary token is both.
    """
    tokens = [None] * vocab_size
    known = tokenizer.convert_ids_to_tokens(list(range(min(vocab_size, len(tokenizer)))))
    tokens[: len(known)] = known
    special = set(tokenizer.all_special_ids)
    ordinary = [t is not None and i not in special for i, t in enumerate(tokens)]
    texts = [t or "" for t in tokens]
    if any(t.startswith("▁") for t in texts):
        start = [t.startswith("▁") for t in texts]
    elif any(t.startswith("Ġ") for t in texts):
        start = [t.startswith("Ġ") for t in texts]
    elif any(t.startswith("##") for t in texts):
        start = [not t.startswith("##") for t in texts]
    else:
        return ordinary, ordinary
    starts = [o and s for o, s in zip(ordinary, start, strict=True)]
    continues = [o and not s for o, s in zip(ordinary, start, strict=True)]
    return starts, continues
