"""Baselines that need no download: what GMET scores look like without a pretrained Nepali model.

All are trained on the embedded SAMPLE data of the other eleven tasks; no GMET
sentence or answer is seen in training. They exist so that the offline main job
reports GMET beside the other tasks, and to give a floor: a real masked LM should
beat them by far. Their results are written with ``kind="baseline"``.

* ``baseline:unigram`` - the most frequent words of the corpus, whatever the context.
* ``baseline:bigram`` - words ranked by ``log P(w | left word) + log P(right word | w)``,
  bigram probabilities with Witten-Bell smoothing towards an add-one unigram model.
* ``baseline:tiny-mlm`` - a tiny BERT-style masked LM (4 layers, hidden size 32)
  trained for a few seconds on the corpus, then scored like any checkpoint.

The n-gram baselines rank the corpus vocabulary. With ``answer_candidates=True`` (the
answer-ranked diagnostic, never a GMET score) the item's listed answers are ranked too;
an answer never seen in the corpus then gets only smoothed mass.
"""

from __future__ import annotations

import itertools
import logging
import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import numpy as np

from nlue.data.sample import sample_records
from nlue.errors import NlueError
from nlue.lm.masked.pieces import BlankItem, ItemPrediction
from nlue.text.normalize import normalize_answer

logger = logging.getLogger(__name__)

BOS, EOS = "<s>", "</s>"
CORPUS_NOTE = (
    "baseline trained on the embedded sample data of the other 11 NLUE tasks (no GMET sentence seen); "
    "not a pretrained model"
)


def corpus_texts() -> Iterator[str]:
    """Every text field of the embedded sample data except GMET (its test sentences stay unseen)."""
    for task, record in sample_records(include_test_only=False):
        for name in task.text_fields:
            text = str(record.get(name) or "").replace("_", " ").strip()
            if text:
                yield text


def words_of(text: str) -> list[str]:
    """Whitespace words with surrounding punctuation stripped (normalize_answer), empties dropped."""
    return [w for w in (normalize_answer(token) for token in text.split()) if w]


class NgramBaseline:
    """The unigram and bigram baselines (see the module docstring)."""

    kind = "baseline"

    def __init__(self, name: str, texts: Sequence[str], *, top_k: int = 10, answer_candidates: bool = False) -> None:
        if name not in ("baseline:unigram", "baseline:bigram"):
            raise NlueError(f"NgramBaseline serves baseline:unigram and baseline:bigram, not {name!r}")
        self.name = name
        self.top_k = top_k
        self.answer_candidates = answer_candidates
        unigrams: Counter[str] = Counter()
        bigrams: Counter[tuple[str, str]] = Counter()
        for text in texts:
            words = words_of(text)
            unigrams.update(words)
            sequence = [BOS, *words, EOS]
            bigrams.update(itertools.pairwise(sequence))
        if not unigrams:
            raise NlueError("the baseline corpus holds no words")
        # Vocabulary order: most frequent first, ties alphabetical; ties in score keep this order.
        self.vocabulary = sorted(unigrams, key=lambda w: (-unigrams[w], w))
        self.unigrams = unigrams
        self.total = sum(unigrams.values())
        self.following: dict[str, Counter[str]] = defaultdict(Counter)
        for (first, second), count in bigrams.items():
            self.following[first][second] += count
        self.history_total = {h: sum(c.values()) for h, c in self.following.items()}
        self.preceding: dict[str, dict[str, int]] = defaultdict(dict)
        for (first, second), count in bigrams.items():
            self.preceding[second][first] = count

    def settings(self) -> dict[str, object]:
        return {
            "scoring": "unigram log-probability" if self.name.endswith("unigram") else "log P(w|left) + log P(right|w)",
            "smoothing": "add-one unigram" + ("" if self.name.endswith("unigram") else ", Witten-Bell bigram"),
            "top_k": self.top_k,
            "answer_candidates": self.answer_candidates,
            "corpus_words": self.total,
            "vocabulary": len(self.vocabulary),
        }

    def p_unigram(self, word: str) -> float:
        return (self.unigrams.get(word, 0) + 1) / (self.total + len(self.vocabulary) + 1)

    def p_bigram(self, word: str, history: str) -> float:
        """Witten-Bell: (c(h, w) + T(h) P(w)) / (c(h) + T(h)), P(w) the add-one unigram."""
        followers = self.following.get(history)
        if not followers:
            return self.p_unigram(word)
        types = len(followers)
        return (followers.get(word, 0) + types * self.p_unigram(word)) / (self.history_total[history] + types)

    def score(self, word: str, left: str, right: str) -> float:
        if self.name.endswith("unigram"):
            return math.log(self.p_unigram(word))
        return math.log(self.p_bigram(word, left)) + math.log(self.p_bigram(right, word))

    def score_vector(self, words: Sequence[str], left: str, right: str) -> np.ndarray:
        """:meth:`score` of every word at once (vectorised over the words)."""
        index = {w: i for i, w in enumerate(words)}
        p_uni = (np.array([self.unigrams.get(w, 0) for w in words], dtype=np.float64) + 1) / (
            self.total + len(self.vocabulary) + 1
        )
        if self.name.endswith("unigram"):
            return np.log(p_uni)
        p_word = p_uni
        followers = self.following.get(left)
        if followers:  # (c(l, w) + T(l) P(w)) / (c(l) + T(l)), counts only where (l, w) was seen
            counts = np.zeros(len(words))
            for word, count in followers.items():
                if word in index:
                    counts[index[word]] = count
            p_word = (counts + len(followers) * p_uni) / (self.history_total[left] + len(followers))
        types = np.array([len(self.following.get(w, ())) for w in words], dtype=np.float64)
        totals = np.array([self.history_total.get(w, 0) for w in words], dtype=np.float64)
        pairs = np.zeros(len(words))
        for word, count in self.preceding.get(right, {}).items():
            if word in index:
                pairs[index[word]] = count
        p_right = self.p_unigram(right)
        seen = totals > 0
        p_next = np.where(seen, (pairs + types * p_right) / np.where(seen, totals + types, 1.0), p_right)
        return np.log(p_word) + np.log(p_next)

    def predict(self, items: Sequence[BlankItem]) -> list[ItemPrediction]:
        out = []
        for item in items:
            left_words, right_words = words_of(item.left), words_of(item.right)
            left = left_words[-1] if left_words else BOS
            right = right_words[0] if right_words else EOS
            candidates = list(self.vocabulary)
            if self.answer_candidates:
                known = set(candidates)
                candidates += [a for a in _distinct(normalize_answer(x) for x in item.answers) if a and a not in known]
            scores = self.score_vector(candidates, left, right)
            order = np.argsort(-scores, kind="stable")[: self.top_k]
            top = [candidates[i] for i in order]
            values = [round(float(scores[i]), 6) for i in order]
            out.append(ItemPrediction(item.id, top, values, [1] * len(top), list(values)))
        return out


def _distinct(words: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(words))


def from_spec(spec: Any, **context: Any) -> NgramBaseline:
    """The ``ngram`` backend (:mod:`nlue.lm.backends`): ``baseline:unigram`` or ``baseline:bigram``."""
    options = {**dict(spec.options), **context}
    keep = {k: options[k] for k in ("top_k", "answer_candidates") if k in options}
    return NgramBaseline(spec.model, list(corpus_texts()), **keep)
