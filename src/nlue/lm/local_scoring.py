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
once per request: a four-option question runs its question four times, and every question of
a task runs the task's instruction again. Here:

* requests are grouped by their (token-identical) context, and each batch is **one forward
  pass** in which a row holds ``[pads][own context][continuation 1][continuation 2]...``: a
  4D attention mask lets each continuation see its context and its own earlier tokens, never
  its siblings, and positions go on from the context's end, so every continuation is scored
  on exactly the sequence ``context + continuation``;
* the tokens every context of a batch starts with (the task's instruction block) are run once
  and kept (:mod:`nlue.lm.prefix_cache`): a batch starts from a copy of that cache and
  computes only its items' own tokens. ``tokens_run`` counts what was computed.

Groups whose contexts open alike are batched together, longest first, so batches share their
prefix and carry little padding. Before the first result is kept, one request is scored both
ways on the model at hand; a model that does not reproduce the whole run under the custom
mask (an attention kernel that ignores it), or whose forward takes no ``position_ids``, is run
lm-eval's way, one full sequence per request, and says so in the log.
"""

from __future__ import annotations

import inspect
import logging
import math
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from nlue.errors import NlueError
from nlue.lm.base import Loglikelihood, LoglikelihoodRequest
from nlue.lm.prefix_cache import MIN_SHARED_TOKENS, SharedPrefixes
from nlue.lm.progress import WarningTally

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
        self._last_context: tuple[str | None, list[int]] = (None, [])

    def _encode(self, text: str) -> list[int]:
        kwargs = {} if self.add_bos_token is None else {"add_special_tokens": self.add_bos_token}
        if self._prefix_text and text.startswith(self._prefix_text):
            kwargs["add_special_tokens"] = False  # the text carries its BOS already
        return list(self.tokenizer.encode(text, **kwargs))

    def encode(self, position: int, request: LoglikelihoodRequest, cuts: WarningTally | None = None) -> EncodedPair:
        """The pair's tokens; a context cut to fit the window is told to ``cuts`` (one line for many), else logged."""
        context, continuation = request.context, request.continuation
        if context == "":
            cont = list(self.tokenizer.encode(continuation, add_special_tokens=False))
            ctx, cont = ([self.prefix_token_id], cont) if cont[0] != self.prefix_token_id else (cont[:1], cont[1:])
        else:
            spaces = len(context) - len(context.rstrip())
            if spaces:
                context, continuation = context[:-spaces], context[-spaces:] + continuation
            whole = self._encode(context + continuation)
            last = self._last_context  # read once: another thread (the Space's) may replace it meanwhile
            if last[0] != context:  # an item's options follow one another: its context is encoded once
                last = self._last_context = (context, self._encode(context))
            ctx = list(last[1])
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
            message = "context of %d tokens cut by %d from the left to fit the model's window"
            (cuts.warn if cuts is not None else logger.warning)(message, len(ctx), overflow)
            ctx = ctx[overflow:]
        return EncodedPair(position, tuple(ctx), tuple(cont))


def _batches(
    pairs: Sequence[EncodedPair],
    batch_size: int,
    group_per_row: bool = False,
    shared_openings: Collection[tuple[int, ...]] = (),
) -> Iterator[list[list[EncodedPair]]]:
    """Groups of pairs with one context, longest first, packed into batches of about ``batch_size`` rows.

    A row is a request in lm-eval's layout, and a whole group (a context with all its continuations)
    in the shared layout: ``batch_size`` rows are then about as many tokens as lm-eval's batch.
    """
    groups: dict[tuple[int, ...], list[EncodedPair]] = {}
    for pair in pairs:
        groups.setdefault(pair.context, []).append(pair)
    # contexts that open alike (a task's instruction) stay together, so a batch can share their prefix's cache;
    # within them, longest first
    ordered = sorted(
        groups.values(),
        key=lambda g: (
            g[0].context[:MIN_SHARED_TOKENS],
            -(len(g[0].context) + max(len(p.continuation) for p in g)),
            g[0].context,
        ),
    )
    batch: list[list[EncodedPair]] = []
    rows = 0
    for group in ordered:
        width = 1 if group_per_row else len(group)
        opening = group[0].context[:MIN_SHARED_TOKENS]
        # a batch takes one shared prefix: a planned opening starts a batch of its own
        current = batch[0][0].context[:MIN_SHARED_TOKENS] if batch else opening
        new_opening = opening != current and (opening in shared_openings or current in shared_openings)
        if batch and (rows + width > batch_size or new_opening):
            yield batch
            batch, rows = [], 0
        batch.append(group)
        rows += width
    if batch:
        yield batch


class PrefixSharingScorer:
    """Scores encoded pairs with one model; see the module docstring for the layout of a batch."""

    def __init__(self, model: Any, pad_token_id: int, batch_size: int = 16, share_prefixes: bool = True) -> None:
        self.model = model
        self.pad_token_id = pad_token_id
        self.batch_size = max(1, batch_size)
        accepted = inspect.signature(model.forward).parameters
        self._keep_last = "logits_to_keep" in accepted
        self.share_prefixes = share_prefixes and "position_ids" in accepted
        if share_prefixes and not self.share_prefixes:
            logger.info("%s takes no position_ids: each request runs its whole text", type(model).__name__)
        self.prefixes = SharedPrefixes(model)
        self.tokens_run = 0  # tokens the model computed here (shared prefixes: see self.prefixes.tokens_run)
        self._checked = False  # the shared layout has reproduced a whole run on this model

    @property
    def device(self) -> Any:
        return self.model.get_input_embeddings().weight.device

    def score(self, pairs: Sequence[EncodedPair], on_batch: Callable[[list[tuple[int, Loglikelihood]]], None]) -> None:
        """Score every pair; ``on_batch`` receives each batch's ``(position, result)`` as soon as it is done."""
        import torch

        plan = self.prefixes.plan(sorted({p.context for p in pairs})) if self.share_prefixes else {}
        with torch.inference_mode():
            for batch in _batches(pairs, self.batch_size, self.share_prefixes, plan.keys()):
                if self.share_prefixes and not self._checked:
                    results = self._check(batch, plan)
                elif self.share_prefixes:
                    results = self._score_shared(batch, plan)
                else:
                    results = self._score_whole([p for g in batch for p in g])
                _refuse_non_finite(self.model, results)
                on_batch(results)

    def _check(self, groups: list[list[EncodedPair]], plan: dict[tuple[int, ...], int]) -> list:
        """The first batch, both ways: the shared layout must give what whole runs give, else whole runs from now.

        A model that ignores a custom 4D attention mask (some attention kernels do) would score every
        continuation against its siblings' tokens and the pads; this catches it before any result is kept.
        """
        import torch

        self._checked = True
        shared = self._score_shared(groups, plan)
        counted = self.tokens_run
        # a batch of groups holds several requests each: the whole runs go batch_size requests at a time
        pairs = [p for g in groups for p in g]
        whole = [
            r for k in range(0, len(pairs), self.batch_size) for r in self._score_whole(pairs[k : k + self.batch_size])
        ]
        self.tokens_run = counted  # the check's second run is not the scoring's work
        # float32 paths agree to ~1e-5 (lm-eval parity is checked at 1e-4); half precision to a few 1e-2
        tolerance = 1e-3 if self.model.dtype == torch.float32 else 5e-2
        for (_, mine), (_, theirs) in zip(shared, whole, strict=True):
            # NaN differs from everything; a whole run that is not finite is the model's (refused after the check)
            if math.isfinite(theirs.logprob) and not abs(mine.logprob - theirs.logprob) <= tolerance:
                logger.warning(
                    "%s does not reproduce a whole run with a shared layout (%.6g vs %.6g): each request runs "
                    "its whole text",
                    type(self.model).__name__,
                    mine.logprob,
                    theirs.logprob,
                )
                self.share_prefixes = False
                return whole
        return shared

    def _score_shared(
        self, groups: list[list[EncodedPair]], plan: dict[tuple[int, ...], int] | None = None
    ) -> list[tuple[int, Loglikelihood]]:
        """One forward pass per batch: ``[shared prefix][pads][own context][each continuation]`` per group.

        The shared prefix comes from a kept cache; every continuation attends to the prefix, its
        group's context and its own earlier tokens, never to its siblings (a 4D mask), and its
        positions go on from the context's end, so each continuation sees exactly the sequence
        ``context + continuation``.
        """
        import torch

        device = self.device
        contexts = [g[0].context for g in groups]
        shared = self.prefixes.choose(contexts, plan)
        cache = self.prefixes.expanded(contexts[0][:shared], len(groups)) if shared else None
        if cache is None:
            shared = 0
        own = [ctx[shared:] for ctx in contexts]
        width = max(map(len, own))
        tails = [[p.continuation[:-1] for p in group] for group in groups]  # the last token is never an input
        tail_width = max(sum(map(len, t)) for t in tails)
        columns = width + tail_width
        ids = torch.full((len(groups), columns), self.pad_token_id, dtype=torch.long)
        positions = torch.zeros((len(groups), columns), dtype=torch.long)
        segment = torch.full((len(groups), columns), -1, dtype=torch.long)  # -1 pad, 0 context, j + 1 continuation j
        starts: list[list[int]] = []
        for row, (tokens, rows_tails) in enumerate(zip(own, tails, strict=True)):
            ids[row, width - len(tokens) : width] = torch.tensor(tokens)  # every context ends at column width - 1
            positions[row, width - len(tokens) : width] = torch.arange(shared, shared + len(tokens))
            segment[row, width - len(tokens) : width] = 0
            column, row_starts = width, []
            for j, tail in enumerate(rows_tails):
                row_starts.append(column)
                if tail:
                    ids[row, column : column + len(tail)] = torch.tensor(tail)
                    positions[row, column : column + len(tail)] = torch.arange(
                        len(contexts[row]), len(contexts[row]) + len(tail)
                    )
                    segment[row, column : column + len(tail)] = j + 1
                    column += len(tail)
            starts.append(row_starts)
        self.tokens_run += int((segment >= 0).sum())
        mask = _layout_mask(segment, shared, self.model.dtype).to(device)
        kwargs: dict[str, Any] = {"logits_to_keep": tail_width + 1} if self._keep_last else {}
        if cache is not None:
            kwargs[self.prefixes.cache_argument] = cache
        out = self.model(
            input_ids=ids.to(device), attention_mask=mask, position_ids=positions.to(device), use_cache=shared > 0,
            **kwargs,
        )  # fmt: skip
        logits = out.logits[:, -(tail_width + 1) :]  # column 0 here is each context's last token
        results = []
        for row, group in enumerate(groups):
            for pair, start in zip(group, starts[row], strict=True):
                picks = [0, *range(start - width + 1, start - width + len(pair.continuation))]
                logprobs = logits[row, picks].float().log_softmax(-1)
                results.append((pair.position, _result(logprobs, pair.continuation)))
        return results

    def _score_whole(self, pairs: list[EncodedPair]) -> list[tuple[int, Loglikelihood]]:
        """lm-eval's way: ``(context + continuation)[:-1]`` per row, right-padded, no attention mask needed."""
        import torch

        inputs = [(p.context + p.continuation)[:-1] for p in pairs]
        width = max(map(len, inputs))
        self.tokens_run += sum(map(len, inputs))
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


def _refuse_non_finite(model: Any, results: list[tuple[int, Loglikelihood]]) -> None:
    """A NaN or infinite log-probability is never scored: the batch is refused before anything of it is kept."""
    bad = [position for position, result in results if not math.isfinite(result.logprob)]
    if bad:
        raise NlueError(
            f"{type(model).__name__} gave a NaN or infinite log-probability for {len(bad)} of {len(results)} requests "
            f"of a batch (the first: request {bad[0] + 1}); nothing of it is kept. A float16 model can overflow: run "
            f"it with --dtype float32 or bfloat16. A checkpoint whose weights hold NaN cannot be scored"
        )


def _result(logprobs: Any, continuation: tuple[int, ...]) -> Loglikelihood:
    """Sum and greedy check over the continuation's positions (``logprobs``: [len(continuation), vocab])."""
    import torch

    targets = torch.tensor(continuation, device=logprobs.device)
    picked = logprobs.gather(1, targets[:, None]).squeeze(1)
    greedy = bool((logprobs.argmax(-1) == targets).all())
    return Loglikelihood(logprob=float(picked.sum()), is_greedy=greedy)


def _layout_mask(segment: Any, shared: int, dtype: Any) -> Any:
    """The additive 4D mask ``[rows, 1, columns, shared + columns]`` of :meth:`PrefixSharingScorer._score_shared`.

    A token sees the shared prefix, its group's context up to itself and, in a continuation, that
    continuation's earlier tokens; a pad sees only itself (a row that sees nothing would give NaN).
    """
    import torch

    rows, columns = segment.shape
    query, key = segment[:, :, None], segment[:, None, :]
    causal = torch.ones((columns, columns), dtype=torch.bool).tril()[None]
    allowed = causal & (key >= 0) & (query >= 0) & ((key == 0) | (key == query))
    allowed |= torch.eye(columns, dtype=torch.bool)[None]
    prefix = (segment >= 0)[:, :, None].expand(rows, columns, shared)
    allowed = torch.cat([prefix, allowed], dim=2)
    mask = torch.zeros(allowed.shape, dtype=dtype)
    mask.masked_fill_(~allowed, torch.finfo(dtype).min)
    return mask[:, None]
