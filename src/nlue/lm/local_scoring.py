"""Log-likelihood of continuations with a transformers causal LM, each shared context run once.

**Definition** (lm-evaluation-harness's, which the tests check against its ``HFLM`` within
1e-4): trailing whitespace of the context moves to the continuation; the context and the
whole text are tokenized (the tokenizer's own special tokens, BOS for Llama-style ones);
the continuation's tokens are the whole text's tokens after the context's; an empty
context is replaced by the prefix token (BOS, else EOS); when context + continuation is
longer than the model's window, the context is cut from the left. The score is the sum of
the continuation tokens' log-probabilities, and ``is_greedy`` says whether each of them is
the arg-max at its position.

**Why it is faster than lm-eval's ``hf`` backend.** lm-eval runs ``context + continuation``
once per request: a four-option question runs its question four times. Here requests are
grouped by their (token-identical) context; a batch runs its distinct contexts once
(left-padded, ``use_cache=True``, only the last position's logits kept), which already gives
every continuation's first-token log-probability; the key/value cache is then gathered
per continuation row (``batch_select_indices``) and only the continuations' tokens are run
on top of it. Single-token continuations (" A", " B", ...) need the first pass only.
Groups are sorted longest first so batches carry little padding. A model whose forward
takes no ``position_ids`` or whose cache cannot be gathered by rows is run lm-eval's way,
one full sequence per request.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from nlue.errors import NlueError
from nlue.lm.base import Loglikelihood, LoglikelihoodRequest

logger = logging.getLogger(__name__)

TOKENIZER_INFINITY = 1000000000000000019884624838656
DEFAULT_MAX_LENGTH = 2048


@dataclass(frozen=True)
class EncodedPair:
    position: int  # index into the caller's list
    context: tuple[int, ...]
    continuation: tuple[int, ...]


def resolve_max_length(config: Any, tokenizer: Any, default: int = DEFAULT_MAX_LENGTH) -> int:
    """The model's window: the config's ``n_positions``/``max_position_embeddings``/``n_ctx``, else the tokenizer's."""
    cfg = getattr(config, "text_config", None) or config
    for attr in ("n_positions", "max_position_embeddings", "n_ctx"):
        value = getattr(cfg, attr, None)
        if value is not None:
            return int(value)
    limit = getattr(tokenizer, "model_max_length", None)
    return int(limit) if limit is not None and limit != TOKENIZER_INFINITY else default


class PairEncoder:
    """Tokenizes ``(context, continuation)`` pairs exactly as lm-eval's ``HFLM`` does."""

    def __init__(
        self, tokenizer: Any, prefix_token_id: int, max_length: int, add_bos_token: bool | None = None
    ) -> None:
        self.tokenizer = tokenizer
        self.prefix_token_id = prefix_token_id
        self.max_length = max_length
        self.add_bos_token = add_bos_token
        self._prefix_text = tokenizer.decode(prefix_token_id)

    def _encode(self, text: str) -> list[int]:
        kwargs = {} if self.add_bos_token is None else {"add_special_tokens": self.add_bos_token}
        if self._prefix_text and text.startswith(self._prefix_text):
            kwargs["add_special_tokens"] = False  # the text carries its BOS already
        return list(self.tokenizer.encode(text, **kwargs))

    def encode(self, position: int, request: LoglikelihoodRequest) -> EncodedPair:
        context, continuation = request.context, request.continuation
        if context == "":
            cont = list(self.tokenizer.encode(continuation, add_special_tokens=False))
            ctx, cont = ([self.prefix_token_id], cont) if cont[0] != self.prefix_token_id else (cont[:1], cont[1:])
        else:
            spaces = len(context) - len(context.rstrip())
            if spaces:
                context, continuation = context[:-spaces], context[-spaces:] + continuation
            whole = self._encode(context + continuation)
            ctx = self._encode(context)
            cont = whole[len(ctx) :]
        if not cont:
            raise NlueError(
                f"the continuation {request.continuation!r} after context ending {request.context[-40:]!r} "
                "tokenizes to nothing; give a continuation with at least one token"
            )
        if len(cont) > self.max_length:
            raise NlueError(
                f"a continuation of {len(cont)} tokens does not fit the model's window of {self.max_length} tokens "
                f"(continuation starts {request.continuation[:40]!r})"
            )
        overflow = len(ctx) + len(cont) - (self.max_length + 1)
        if overflow > 0:
            logger.warning("context of %d tokens cut by %d from the left to fit the model's window", len(ctx), overflow)
            ctx = ctx[overflow:]
        return EncodedPair(position, tuple(ctx), tuple(cont))


def _batches(pairs: Sequence[EncodedPair], batch_size: int) -> Iterator[list[list[EncodedPair]]]:
    """Groups of pairs with one context, longest first, packed into batches of about ``batch_size`` rows."""
    groups: dict[tuple[int, ...], list[EncodedPair]] = {}
    for pair in pairs:
        groups.setdefault(pair.context, []).append(pair)
    ordered = sorted(
        groups.values(), key=lambda g: (-(len(g[0].context) + max(len(p.continuation) for p in g)), g[0].context)
    )
    batch: list[list[EncodedPair]] = []
    rows = 0
    for group in ordered:
        if batch and rows + len(group) > batch_size:
            yield batch
            batch, rows = [], 0
        batch.append(group)
        rows += len(group)
    if batch:
        yield batch


class PrefixSharingScorer:
    """Scores encoded pairs with one model; see the module docstring for the two passes."""

    def __init__(self, model: Any, pad_token_id: int, batch_size: int = 16, share_prefixes: bool = True) -> None:
        self.model = model
        self.pad_token_id = pad_token_id
        self.batch_size = max(1, batch_size)
        accepted = inspect.signature(model.forward).parameters
        self._keep_last = "logits_to_keep" in accepted
        self.share_prefixes = share_prefixes and "position_ids" in accepted
        if share_prefixes and not self.share_prefixes:
            logger.info("%s takes no position_ids: each request runs its whole text", type(model).__name__)

    @property
    def device(self) -> Any:
        return self.model.get_input_embeddings().weight.device

    def score(self, pairs: Sequence[EncodedPair], on_batch: Callable[[list[tuple[int, Loglikelihood]]], None]) -> None:
        """Score every pair; ``on_batch`` receives each batch's ``(position, result)`` as soon as it is done."""
        import torch

        with torch.inference_mode():
            for batch in _batches(pairs, self.batch_size):
                if self.share_prefixes:
                    results = self._score_shared(batch)
                    if results is None:  # the cache cannot be gathered by rows: lm-eval's way from now on
                        logger.info("%s's cache cannot be split by rows: no prefix sharing", type(self.model).__name__)
                        self.share_prefixes = False
                        results = self._score_whole([p for g in batch for p in g])
                else:
                    results = self._score_whole([p for g in batch for p in g])
                on_batch(results)

    def _score_shared(self, groups: list[list[EncodedPair]]) -> list[tuple[int, Loglikelihood]] | None:
        import torch

        device = self.device
        contexts = [g[0].context for g in groups]
        width = max(map(len, contexts))
        ids = torch.full((len(groups), width), self.pad_token_id, dtype=torch.long)
        mask = torch.zeros((len(groups), width), dtype=torch.long)
        for row, ctx in enumerate(contexts):  # left padding: every context ends at the last column
            ids[row, width - len(ctx) :] = torch.tensor(ctx)
            mask[row, width - len(ctx) :] = 1
        ids, mask = ids.to(device), mask.to(device)
        positions = (mask.cumsum(-1) - 1).clamp(min=0)
        longer = [(g, p) for g, group in enumerate(groups) for p in group if len(p.continuation) > 1]
        kwargs: dict[str, Any] = {"logits_to_keep": 1} if self._keep_last else {}
        out = self.model(input_ids=ids, attention_mask=mask, position_ids=positions, use_cache=bool(longer), **kwargs)
        first = out.logits[:, -1, :].float().log_softmax(-1)  # [groups, vocab]: each continuation's first token
        tails: dict[int, Any] = {}
        if longer:
            cache = out.past_key_values
            if not hasattr(cache, "batch_select_indices"):
                return None
            rows = torch.tensor([g for g, _ in longer], device=device)
            cache.batch_select_indices(rows)
            tail_width = max(len(p.continuation) - 1 for _, p in longer)
            tail_ids = torch.full((len(longer), tail_width), self.pad_token_id, dtype=torch.long)
            tail_mask = torch.zeros((len(longer), tail_width), dtype=torch.long)
            for row, (_, pair) in enumerate(longer):
                tail = pair.continuation[:-1]  # the last token is predicted, never an input
                tail_ids[row, : len(tail)] = torch.tensor(tail)
                tail_mask[row, : len(tail)] = 1
            # positions go on from each context's end; padding repeats the row's last one (never past the window)
            steps = torch.arange(tail_width, device=device)[None, :]
            last_step = tail_mask.to(device).sum(-1, keepdim=True) - 1
            tail_positions = mask.sum(-1)[rows][:, None] + torch.minimum(steps, last_step)
            out = self.model(
                input_ids=tail_ids.to(device),
                attention_mask=torch.cat([mask[rows], tail_mask.to(device)], dim=1),
                position_ids=tail_positions,
                past_key_values=cache,
                use_cache=True,
            )
            for row, (_, pair) in enumerate(longer):
                tails[id(pair)] = out.logits[row, : len(pair.continuation) - 1].float().log_softmax(-1)
        results = []
        for g, group in enumerate(groups):
            for pair in group:
                tail = tails.get(id(pair))
                logprobs = first[g : g + 1] if tail is None else torch.cat([first[g : g + 1], tail], dim=0)
                results.append((pair.position, _result(logprobs, pair.continuation)))
        return results

    def _score_whole(self, pairs: list[EncodedPair]) -> list[tuple[int, Loglikelihood]]:
        """lm-eval's way: ``(context + continuation)[:-1]`` per row, right-padded, no attention mask needed."""
        import torch

        inputs = [(p.context + p.continuation)[:-1] for p in pairs]
        width = max(map(len, inputs))
        ids = torch.full((len(pairs), width), self.pad_token_id, dtype=torch.long)
        for row, tokens in enumerate(inputs):
            ids[row, : len(tokens)] = torch.tensor(tokens)
        logits = self.model(input_ids=ids.to(self.device)).logits
        results = []
        for row, (pair, tokens) in enumerate(zip(pairs, inputs, strict=True)):
            n = len(pair.continuation)
            logprobs = logits[row, len(tokens) - n : len(tokens)].float().log_softmax(-1)
            results.append((pair.position, _result(logprobs, pair.continuation)))
        return results


def _result(logprobs: Any, continuation: tuple[int, ...]) -> Loglikelihood:
    """Sum and greedy check over the continuation's positions (``logprobs``: [len(continuation), vocab])."""
    import torch

    targets = torch.tensor(continuation, device=logprobs.device)
    picked = logprobs.gather(1, targets[:, None]).squeeze(1)
    greedy = bool((logprobs.argmax(-1) == targets).all())
    return Loglikelihood(logprob=float(picked.sum()), is_greedy=greedy)
