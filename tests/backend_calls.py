"""What reaches a tiny local model itself, below the answer cache: the tests that hold a rerun to "asks nothing"."""

from __future__ import annotations

import pytest


class BackendCalls:
    """Counts what reaches the tiny model itself (below the answer cache): generated prompts, scored pairs."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        import nlue.lm.local as local
        import nlue.lm.local_scoring as scoring

        self.count = 0
        generate, score = local.LocalCausalLM._generate_batch, scoring.PrefixSharingScorer.score

        def counted_generate(model, prompts, *args, **kwargs):
            self.count += len(prompts)
            return generate(model, prompts, *args, **kwargs)

        def counted_score(scorer, pairs, *args, **kwargs):
            self.count += len(pairs)
            return score(scorer, pairs, *args, **kwargs)

        monkeypatch.setattr(local.LocalCausalLM, "_generate_batch", counted_generate)
        monkeypatch.setattr(scoring.PrefixSharingScorer, "score", counted_score)

    def since(self, before: int) -> int:
        return self.count - before
