"""The masked-LM scorer's forward passes: every request de-duplicated, length-sorted and batched.

Only the masked positions go through the vocabulary projection (a forward pre-hook on the
output embeddings selects them), so large vocabularies cost little. Results land in the
predictor's caches: ``_logp`` (log-probability of a token at a position of a sequence),
``_top`` (the best allowed tokens there) and ``_rows`` (the whole log-probability row of
every position a pass computed). The rows are what keeps a sequence from running twice:
a word's pieces are only known after the proposal and greedy rounds, and its PLL factors
often sit in a sequence an earlier round already ran, at a token that round did not ask
about. The predictor clears ``_rows`` between chunks of items to bound their memory.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from contextlib import nullcontext
from typing import Any

from nlue.errors import NlueError
from nlue.lm.masked.pieces import Ask, Key
from nlue.lm.masked.trim import reading_only

PAD_SLACK = 1.02  # CPU batches: at most 2% padding...
MIN_BATCH_TOKENS = 256  # ...once a batch is large enough to keep the matrix products efficient


class ForwardPasses:
    """Mixin of :class:`nlue.lm.masked.predictor.MaskedLMPredictor`: it provides model, device, batch size, pad id,
    the token classes' biases and the caches."""

    model: Any
    device: str
    name: str
    batch_size: int
    pad_id: int
    _bias: dict[str, Any]
    _logp: dict[tuple[Key, int, int], float]
    _top: dict[tuple[Key, int, str, int], list[tuple[int, float]]]
    _rows: dict[tuple[Key, int], Any]
    _ran: set[Key]
    forward_sequences: int
    repeated_sequences: int
    last_pass_sliced: bool
    last_pass_trimmed: bool
    trim_last_layer: bool

    def answered(self, ask: Ask) -> bool:
        """Whether the caches hold what ``ask`` wants; fills ``_logp``/``_top`` from a cached row when they can."""
        has_targets = all((ask.key, ask.pos, t) in self._logp for t in ask.targets)
        has_top = not ask.top or (ask.key, ask.pos, ask.allowed, ask.top) in self._top
        if has_targets and has_top:
            return True
        row = self._rows.get((ask.key, ask.pos))
        if row is None:
            return False
        for target in ask.targets:
            self._logp[(ask.key, ask.pos, target)] = float(row[target])
        if not has_top:
            [found] = self._tops(row.unsqueeze(0), ask.allowed, ask.top)
            self._store_top(ask.key, ask.pos, ask.allowed, ask.top, found)
        return True

    def run(self, asks: Iterable[Ask], progress: Any = None) -> None:
        """Answer ``asks`` with as few, as full batches as possible (results go to the caches)."""
        import torch

        by_key: dict[Key, list[Ask]] = defaultdict(list)
        for ask in asks:
            if not self.answered(ask):
                by_key[ask.key].append(ask)
        keys = sorted(by_key, key=len)
        if progress is not None:
            progress.total = (progress.total or 0) + len(keys)
            progress.refresh()
        for batch in self._batches(keys):
            positions = [sorted({ask.pos for ask in by_key[key]}) for key in batch]
            rows = [r for r, pos in enumerate(positions) for _ in pos]
            cols = [p for pos in positions for p in pos]
            width = max(len(key) for key in batch)
            ids = torch.full((len(batch), width), self.pad_id, dtype=torch.long)
            attention = torch.zeros((len(batch), width), dtype=torch.long)
            for r, key in enumerate(batch):
                ids[r, : len(key)] = torch.tensor(key)
                attention[r, : len(key)] = 1
            logp = self._log_probs(ids, attention, rows, cols)
            self.forward_sequences += len(batch)
            self.repeated_sequences += sum(1 for key in batch if key in self._ran)
            self._ran.update(batch)
            self._collect(batch, by_key, positions, logp)
            if progress is not None:
                progress.update(len(batch))

    def _batches(self, keys: list[Key]) -> Iterable[list[Key]]:
        """Length-sorted ``keys`` cut into batches of at most ``batch_size`` sequences.

        On a CPU a padding token costs as much as a real one, and a few hundred tokens
        already make an efficient matrix product; so once a batch holds ``MIN_BATCH_TOKENS``
        real tokens it is also cut where the next, longer sequence would pad it beyond
        ``PAD_SLACK`` times its real tokens (about 10% less work on the sample at BERT-base
        size). On an accelerator full batches matter more than padding.
        """
        slack = PAD_SLACK if self.device == "cpu" else float("inf")
        batch: list[Key] = []
        tokens = 0
        for key in keys:
            padded = len(key) * (len(batch) + 1) > slack * (tokens + len(key))
            if batch and (len(batch) >= self.batch_size or (tokens >= MIN_BATCH_TOKENS and padded)):
                yield batch
                batch, tokens = [], 0
            batch.append(key)
            tokens += len(key)
        if batch:
            yield batch

    def _log_probs(self, ids: Any, attention: Any, rows: list[int], cols: list[int]) -> Any:
        """Log-softmax over the vocabulary at (row, col) positions only: an (N, V) float tensor on the CPU."""
        import torch

        rows_t = torch.tensor(rows, device=self.device)
        cols_t = torch.tensor(cols, device=self.device)
        state = {"sliced": False}

        def select(_module: Any, args: tuple[Any, ...]) -> tuple[Any, ...] | None:
            hidden = args[0] if args else None
            if isinstance(hidden, torch.Tensor) and hidden.dim() == 3 and tuple(hidden.shape[:2]) == tuple(ids.shape):
                state["sliced"] = True
                return (hidden[rows_t, cols_t], *args[1:])
            return None

        head = self.model.get_output_embeddings() if hasattr(self.model, "get_output_embeddings") else None
        handle = head.register_forward_pre_hook(select) if isinstance(head, torch.nn.Module) else None
        try:
            with (
                torch.inference_mode(),
                reading_only(rows_t, cols_t) if self.trim_last_layer else nullcontext() as trim,
            ):
                out = self.model(input_ids=ids.to(self.device), attention_mask=attention.to(self.device))
        finally:
            if handle is not None:
                handle.remove()
        self.last_pass_trimmed = bool(trim and trim["trimmed"])
        logits = out.logits if hasattr(out, "logits") else out[0]
        self.last_pass_sliced = bool(state["sliced"] and logits.dim() == 2 and logits.shape[0] == len(rows))
        if self.last_pass_sliced:
            picked = logits
        elif logits.dim() == 3:
            picked = logits[rows_t, cols_t]
        else:
            raise NlueError(f"{self.name}: unexpected logits of shape {tuple(logits.shape)} from the model")
        return torch.log_softmax(picked.float(), dim=-1).cpu()

    def _collect(self, batch: list[Key], by_key: dict[Key, list[Ask]], positions: list[list[int]], logp: Any) -> None:
        import torch

        row_of = {}
        j = 0
        for key, pos in zip(batch, positions, strict=True):
            for p in pos:
                row_of[(key, p)] = j
                self._rows[(key, p)] = logp[j]
                j += 1
        gather_rows, gather_tokens, gather_keys = [], [], []
        tops: dict[tuple[str, int], list[tuple[Key, int]]] = defaultdict(list)
        for key in batch:
            for ask in by_key[key]:
                for target in ask.targets:
                    gather_rows.append(row_of[(key, ask.pos)])
                    gather_tokens.append(target)
                    gather_keys.append((key, ask.pos, target))
                if ask.top:
                    tops[(ask.allowed, ask.top)].append((key, ask.pos))
        if gather_rows:
            values = logp[torch.tensor(gather_rows), torch.tensor(gather_tokens)].tolist()
            self._logp.update(zip(gather_keys, values, strict=True))
        for (allowed, top), places in tops.items():
            picked = logp[torch.tensor([row_of[place] for place in places])]
            for (key, pos), found in zip(places, self._tops(picked, allowed, top), strict=True):
                self._store_top(key, pos, allowed, top, found)

    def _tops(self, logp: Any, allowed: str, top: int) -> list[list[tuple[int, float]]]:
        """The ``top`` best ``allowed`` tokens of each row of ``logp``, as (token, log-probability) pairs."""
        import torch

        vocab = logp.shape[-1]
        bias = self._bias[allowed]
        if bias.shape[0] != vocab:  # model and config disagree on the vocabulary size
            bias = torch.nn.functional.pad(bias[:vocab], (0, max(0, vocab - bias.shape[0])), value=float("-inf"))
        values, indices = (logp + bias).topk(min(top, vocab), dim=-1)
        return [
            [(t, v) for t, v in zip(idx, vals, strict=True) if v != float("-inf")]
            for vals, idx in zip(values.tolist(), indices.tolist(), strict=True)
        ]

    def _store_top(self, key: Key, pos: int, allowed: str, top: int, found: list[tuple[int, float]]) -> None:
        self._top[(key, pos, allowed, top)] = found
        for t, v in found:
            self._logp[(key, pos, t)] = v
