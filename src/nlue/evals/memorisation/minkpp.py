"""Per-text membership scores from a causal LM's next-token distributions: Min-K%++, Min-K% and mean log p.

For a text of tokens ``x_1 .. x_n`` (scored after a prefix token, so that the first one has a context too),
position ``t`` gives the model's distribution ``p(. | x_<t)`` over the whole vocabulary, and:

* ``log p(x_t | x_<t)``: the token's log-probability;
* ``mu_t = E_{z~p}[log p(z | x_<t)]`` and ``sigma_t = sqrt(E_{z~p}[(log p(z | x_<t) - mu_t)^2])``: the mean and
  spread of the log-probabilities of the vocabulary, each token weighted by its own probability;
* the Min-K%++ token score ``(log p(x_t | x_<t) - mu_t) / sigma_t``: how far the actual token stands above
  what the model expected there, in units of its spread.

A text's **Min-K%++** is the mean of the lowest ``k`` percent of its token scores (at least one token):
J. Zhang et al., "Min-K%++: Improved Baseline for Detecting Pre-Training Data from Large Language Models",
ICLR 2025, arXiv:2404.02936. **Min-K%** is the same mean over the raw log-probabilities (W. Shi et al.,
"Detecting Pretraining Data from Large Language Models", ICLR 2024, arXiv:2310.16789), and
``loglik`` the mean log-probability of all tokens. Higher is "more likely seen" for all three; all come from
one forward pass.

Where the model is certain (``sigma_t`` about 0) the score would divide by nothing: ``sigma_t`` is floored at
:data:`MIN_SIGMA`, so a token the certain model expected scores about 0 and any other a large negative number.
The logits are read in float32 whatever the model's dtype.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

DEFAULT_K = 20.0  # percent; the papers' usual choice
MIN_SIGMA = 1e-6
MEASURES = ("minkpp", "mink", "loglik")
CHUNK_POSITIONS = 256


@dataclass(frozen=True)
class TokenStatistics:
    """Per scored token: its log-probability, and the mean and spread of log p over the vocabulary there."""

    logprob: np.ndarray
    mu: np.ndarray
    sigma: np.ndarray

    @property
    def minkpp_tokens(self) -> np.ndarray:
        return (self.logprob - self.mu) / self.sigma


def token_statistics(logits, targets, chunk: int = CHUNK_POSITIONS) -> TokenStatistics:
    """Statistics of ``targets`` (``(n,)`` token ids) under ``logits`` (``(n, vocab)``, row ``i`` predicting
    ``targets[i]``); torch tensors in, numpy out. ``chunk`` positions at a time, so that the float32 copies of a
    long text over a large vocabulary stay a few hundred MB."""
    import torch

    parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    for start in range(0, len(targets), chunk):
        logp = torch.log_softmax(logits[start : start + chunk].float(), dim=-1)
        p = logp.exp()
        mu = (p * logp).sum(-1)
        variance = (p * (logp - mu.unsqueeze(-1)) ** 2).sum(-1)  # centred: no cancellation of two large sums
        sigma = variance.clamp_min(0).sqrt().clamp_min(MIN_SIGMA)
        chosen = logp.gather(-1, targets[start : start + chunk].unsqueeze(-1)).squeeze(-1)
        parts.append(tuple(t.double().cpu().numpy() for t in (chosen, mu, sigma)))  # type: ignore[arg-type]
    return TokenStatistics(*(np.concatenate(column) for column in zip(*parts, strict=True)))


def lowest_share_mean(values: np.ndarray, k: float) -> float:
    """The mean of the lowest ``k`` percent of ``values`` (``floor(n * k / 100)`` of them, at least one)."""
    count = max(1, int(len(values) * k / 100.0))
    return float(np.sort(values)[:count].mean())


def text_scores(stats: TokenStatistics, k: float = DEFAULT_K) -> dict[str, float]:
    """A text's Min-K%++, Min-K% and mean log-probability (module docstring)."""
    return {
        "minkpp": lowest_share_mean(stats.minkpp_tokens, k),
        "mink": lowest_share_mean(stats.logprob, k),
        "loglik": float(stats.logprob.mean()),
    }
