"""The masked-LM scorer's last stage: PLL passes for the candidates that can still matter, then the ranking.

A candidate whose PLL factors are all in the caches already has its exact score. One that
still needs passes is skipped when it provably cannot reach the top ``top_k``: its first
factor (the probability of its first piece under ``n`` masks, from a pass that proposals
or greedy steps usually ran already) bounds its whole score, because every further factor
is a log-probability, at most 0, and the score is the sum divided by ``n ** length_alpha``
(a positive number). Floating-point addition of a value <= 0 never raises a sum, so the
bound holds for the computed score too. When at least ``top_k`` candidates with exact
scores rank ahead of the bound (higher, or equal and earlier in the candidate order that
breaks ties), the candidate's own passes cannot change the item's ranked list, and are
not run. Candidates are distinct words, so a skipped one frees no place for another.
"""

from __future__ import annotations

from typing import Any

from nlue.lm.masked.passes import ForwardPasses
from nlue.lm.masked.pieces import Ask, BlankItem, Encoded, ItemPrediction
from nlue.text.normalize import normalize_answer


class Ranking(ForwardPasses):
    """Base of :class:`nlue.lm.masked.predictor.MaskedLMPredictor`: the PLL-word-l2r score of a word, pruning and ranking."""

    top_k: int
    mask_id: int
    length_alpha: float
    pruned_candidates: int

    def l2r_asks(self, encoded: Encoded) -> list[Ask]:
        """The n forward passes of the PLL-word-l2r score of one encoded word."""
        n = len(encoded.pieces)
        asks = []
        for i in range(n):
            key = encoded.left + encoded.pieces[:i] + (self.mask_id,) * (n - i) + encoded.right
            asks.append(Ask(key, len(encoded.left) + i, targets=(encoded.pieces[i],)))
        return asks

    def log_likelihood(self, encoded: Encoded) -> float:
        """The PLL-word-l2r log-likelihood of an encoded word (its passes must have run)."""
        total = 0.0
        for ask in self.l2r_asks(encoded):
            total += self._logp[(ask.key, ask.pos, ask.targets[0])]
        return total

    def normalised(self, log_likelihood: float, pieces: int) -> float:
        return log_likelihood / (pieces**self.length_alpha)

    def score_entries(self, entries: list[list[tuple[str, Encoded | None]]], progress: Any = None) -> list[set[int]]:
        """Run the PLL passes each item's ranking needs; per item, the candidates proven unable to reach the top k."""
        firsts = [self.l2r_asks(enc)[0] for row in entries for _, enc in row if enc is not None]
        self.run(firsts, progress)  # mostly answered by the rows of earlier rounds
        pruned: list[set[int]] = [set() for _ in entries]
        asks: list[Ask] = []
        for gone, row in zip(pruned, entries, strict=True):
            exact: list[tuple[float, int]] = []
            pending: list[tuple[int, list[Ask], float]] = []
            for order, (_, enc) in enumerate(row):
                if enc is None:
                    continue
                needed = self.l2r_asks(enc)
                if all(self.answered(ask) for ask in needed):
                    exact.append((self.normalised(self.log_likelihood(enc), len(enc.pieces)), order))
                    continue
                first = needed[0]
                bound = float("inf")
                if self.answered(first):
                    bound = self.normalised(self._logp[(first.key, first.pos, first.targets[0])], len(enc.pieces))
                pending.append((order, needed, bound))
            for order, needed, bound in pending:
                ahead = sum(1 for score, other in exact if score > bound or (score == bound and other < order))
                if ahead >= self.top_k:
                    gone.add(order)
                    self.pruned_candidates += 1
                else:
                    asks.extend(needed)
        self.run(asks, progress)
        return pruned

    def rank(self, item: BlankItem, entries: list[tuple[str, Encoded | None]]) -> ItemPrediction:
        """The item's top ``top_k`` distinct words by normalised PLL (entries without an encoding are left out)."""
        scored = []
        for order, (word, enc) in enumerate(entries):
            if enc is None:
                continue
            ll = self.log_likelihood(enc)
            scored.append((-self.normalised(ll, len(enc.pieces)), order, word, ll, len(enc.pieces)))
        scored.sort()
        out = ItemPrediction(id=item.id, top_k=[], scores=[])
        seen: set[str] = set()
        for negative, _, word, ll, pieces in scored:
            key = normalize_answer(word)
            if key in seen:
                continue
            seen.add(key)
            out.top_k.append(word)
            out.scores.append(round(-negative, 6))
            out.pieces.append(pieces)
            out.log_likelihoods.append(round(ll, 6))
            if len(out.top_k) == self.top_k:
                break
        return out
