"""Train a tiny masked LM in seconds, locally: for the ``baseline:tiny-mlm`` baseline and the tests.

The tokenizer and model size come from :mod:`nlue.lm.tiny` (4 layers, hidden size
32). Masking follows the GMET scorer: a chosen word has a suffix of its pieces masked
(pieces ``i .. n``), the very patterns the PLL-word-l2r score asks the model about;
other single pieces are masked at random as in BERT. Nothing is downloaded.
"""

from __future__ import annotations

import hashlib
import logging
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from nlue.errors import NlueError
from nlue.lm.baselines.ngram import corpus_texts
from nlue.lm.tiny import Family, tiny_config, train_tokenizer

logger = logging.getLogger(__name__)


def train_tiny_mlm(
    out: Path,
    texts: Sequence[str],
    family: Family = "bert",
    *,
    steps: int = 300,
    batch_size: int = 32,
    learning_rate: float = 3e-3,
    word_mask_rate: float = 0.3,
    seed: int = 0,
    vocab_size: int = 2000,
    tokenizer_texts: Sequence[str] | None = None,
) -> Path:
    """Train a tiny masked LM of ``family`` on ``texts`` and save it (with its tokenizer) to ``out``."""
    import torch
    from transformers import AutoModelForMaskedLM

    if not texts:
        raise NlueError("train_tiny_mlm needs at least one text")
    random.seed(seed)
    torch.manual_seed(seed)
    tokenizer = train_tokenizer(family, list(tokenizer_texts or texts), vocab_size=vocab_size)
    model = AutoModelForMaskedLM.from_config(tiny_config(family, len(tokenizer), tokenizer))
    encoded = tokenizer(list(texts), truncation=True, max_length=64)
    examples = [(ids, encoded.word_ids(i)) for i, ids in enumerate(encoded["input_ids"])]
    mask_id, pad_id = tokenizer.mask_token_id, tokenizer.pad_token_id or 0
    optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate)
    rng = random.Random(seed)
    model.train()
    for _ in range(steps):
        batch = [examples[rng.randrange(len(examples))] for _ in range(batch_size)]
        width = max(len(ids) for ids, _ in batch)
        input_ids = torch.full((batch_size, width), pad_id, dtype=torch.long)
        labels = torch.full((batch_size, width), -100, dtype=torch.long)
        attention = torch.zeros((batch_size, width), dtype=torch.long)
        for row, (ids, word_ids) in enumerate(batch):
            masked = _mask_positions(word_ids, word_mask_rate, rng)
            input_ids[row, : len(ids)] = torch.tensor(ids)
            attention[row, : len(ids)] = 1
            for position in masked:
                labels[row, position] = ids[position]
                input_ids[row, position] = mask_id
        if (labels != -100).sum() == 0:
            continue
        loss = model(input_ids=input_ids, attention_mask=attention, labels=labels).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    model.eval()
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


def _mask_positions(word_ids: list[int | None], rate: float, rng: random.Random) -> list[int]:
    """Masked positions of one example: for each chosen word, a suffix of its pieces."""
    pieces: dict[int, list[int]] = {}
    for position, word in enumerate(word_ids):
        if word is not None:
            pieces.setdefault(word, []).append(position)
    masked: list[int] = []
    for positions in pieces.values():
        if rng.random() < rate:
            start = rng.randrange(len(positions))
            masked.extend(positions[start:])
    if not masked and pieces:  # every example teaches something
        positions = rng.choice(list(pieces.values()))
        masked.extend(positions[rng.randrange(len(positions)) :])
    return masked


def tiny_mlm_baseline_path(cache: Path | None = None, seed: int = 0) -> Path:
    """Train (once, then reuse from the cache) the ``baseline:tiny-mlm`` checkpoint and return its folder."""
    from nlue.data.access import cache_dir

    texts = list(corpus_texts())
    digest = hashlib.sha256("\n".join(texts).encode("utf-8") + f"|seed={seed}|v1".encode()).hexdigest()[:16]
    out = (cache or cache_dir()) / f"gmet-baseline-tiny-mlm-{digest}"
    if not (out / "config.json").is_file():
        logger.info("training the tiny masked-LM baseline on the sample corpus into %s", out)
        tmp = out.with_name(out.name + ".partial")
        train_tiny_mlm(tmp, texts, "bert", seed=seed)
        if out.exists():  # trained meanwhile by another process
            return out
        tmp.rename(out)
    return out


def from_spec(spec: Any, **context: Any) -> Any:
    """The ``tiny-mlm`` backend (:mod:`nlue.lm.backends`): the cached tiny masked LM, ranked like any checkpoint."""
    from dataclasses import replace

    from nlue.lm.masked import predictor

    model = predictor.from_spec(replace(spec, model=str(tiny_mlm_baseline_path())), **context)
    model.name, model.kind = spec.model, "baseline"
    return model
