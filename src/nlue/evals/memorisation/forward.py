"""One forward pass per text of a local causal LM, every position's whole next-token distribution read.

This is why the probe needs the model itself: Min-K%++ weighs every token of the vocabulary at every
position (:mod:`nlue.evals.memorisation.minkpp`), and a server answers with a few top log-probabilities at
most. A text is scored after one prefix token (BOS, else EOS: lm-evaluation-harness's stand-in for an empty
context), so its first token is scored too; a text longer than the model's window is cut at its end, and
how many were cut is said once.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from nlue.errors import NlueError
from nlue.evals.memorisation.minkpp import DEFAULT_K, text_scores, token_statistics
from nlue.lm.progress import WarningTally, progress_bar

logger = logging.getLogger(__name__)


def prefix_token(tokenizer: Any) -> int:
    """The token every scored text follows: BOS, else EOS."""
    token = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id
    if token is None:
        raise NlueError("the tokenizer has neither a BOS nor an EOS token to stand before a scored text")
    return int(token)


def encode(tokenizer: Any, text: str) -> list[int]:
    """The text's own tokens, without the tokenizer's special tokens (the prefix is added when scoring)."""
    return list(tokenizer.encode(text, add_special_tokens=False))


def score_token_lists(
    model: Any,
    tokenizer: Any,
    token_lists: Sequence[Sequence[int]],
    *,
    k: float = DEFAULT_K,
    batch_size: int = 8,
    max_length: int = 2048,
    show_progress: bool = False,
) -> list[dict[str, float] | None]:
    """Each token list's scores (:func:`~nlue.evals.memorisation.minkpp.text_scores`); None for an empty one."""
    import torch

    prefix = prefix_token(tokenizer)
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else prefix
    device = next(model.parameters()).device
    rows = [(i, [prefix, *tokens[: max_length - 1]]) for i, tokens in enumerate(token_lists) if tokens]
    with WarningTally(logger, "texts cut at their end to fit the model's window") as cuts:
        for tokens in token_lists:
            if len(tokens) > max_length - 1:
                cuts.warn("a text of %d tokens cut to %d", len(tokens), max_length - 1)
    rows.sort(key=lambda row: -len(row[1]))  # alike lengths together: little padding
    scores: list[dict[str, float] | None] = [None] * len(token_lists)
    with progress_bar(show_progress, len(rows), "Min-K%++", unit="text") as bar, torch.inference_mode():
        for start in range(0, len(rows), batch_size):
            batch = rows[start : start + batch_size]
            width = len(batch[0][1])
            ids = torch.full((len(batch), width), pad, dtype=torch.long)
            mask = torch.zeros((len(batch), width), dtype=torch.long)
            for row, (_, tokens) in enumerate(batch):  # right padding: positions count from the prefix
                ids[row, : len(tokens)] = torch.tensor(tokens, dtype=torch.long)
                mask[row, : len(tokens)] = 1
            logits = model(input_ids=ids.to(device), attention_mask=mask.to(device)).logits
            for row, (position, tokens) in enumerate(batch):
                n = len(tokens) - 1
                stats = token_statistics(logits[row, :n], ids[row, 1 : n + 1].to(logits.device))
                scores[position] = text_scores(stats, k)
            bar.update(len(batch))
    return scores
