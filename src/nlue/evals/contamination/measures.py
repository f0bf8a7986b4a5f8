"""The three measures, their settings, and one batch of corpus documents checked against the test set.

* ``word``: word n-grams of the item's texts (:func:`~nlue.evals.contamination.grams.word_text`: casefolded,
  punctuation removed, whitespace words), n = 13 as lm-evaluation-harness;
* ``char``: character n-grams of the item's texts after the task's language profile normalised them and the
  near-duplicate fold (:func:`nlue.text.normalize.loose_texts`: case, digits, punctuation, spaces, joiners)
  folded them, one index per profile;
* ``source``: word n-grams of the English text an item was translated from, where it is known.

Each field of an item (premise, hypothesis, ...) is cut into n-grams on its own, since a corpus holds
them as separate sentences as often as together. :func:`scan_batch` is what a worker process runs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from nlue.evals.contamination.grams import char_grams, word_grams, word_text
from nlue.evals.contamination.index import GramIndex, Matches
from nlue.text.normalize import loose_texts
from nlue.text.profiles import get_profile

WORD, CHAR, SOURCE = "word", "char", "source"


@dataclass(frozen=True)
class Settings:
    """How n-grams are cut and when an item counts as found (docs/guides/contamination.md says why)."""

    word_n: int = field(default=13, metadata={"help": "words per n-gram (13, as lm-evaluation-harness)"})
    min_words: int = field(default=8, metadata={"help": "a field shorter than --word-n is one n-gram of its whole "
                                                "length if it has at least this many words, else not checked"})  # fmt: skip
    char_n: int = field(default=8, metadata={"help": "characters per n-gram, after normalising and folding"})
    char_threshold: float = field(default=0.5, metadata={"help": "share of an item's character n-grams one corpus "
                                                         "document must hold for the item to count as found"})  # fmt: skip
    max_documents: int = field(default=5, metadata={"help": "matching corpus documents kept per item and measure"})

    def threshold(self, measure: str) -> float:
        """The share of an item's n-grams one document must hold: any word n-gram (lm-eval's rule), or
        :attr:`char_threshold` of the character n-grams."""
        return self.char_threshold if measure.startswith(CHAR) else 0.0


@dataclass(frozen=True)
class Item:
    """One test item as the check sees it: where it is from, its texts, and its English source texts if known."""

    task: str
    id: object
    input_sha256: str
    texts: tuple[str, ...]
    profile: str
    sources: tuple[str, ...] | None = None


def char_measure(profile: str) -> str:
    return f"{CHAR}:{profile}"


def fold(texts: Sequence[str], profile: str) -> list[str]:
    """Texts as the character measure compares them: the profile's normalisation, then the near-duplicate fold."""
    normalize = get_profile(profile).normalizer()
    return loose_texts([normalize(text) for text in texts])


def _index(fields: list[tuple[int, str]], count: int, grams, lengths: set[int]) -> GramIndex:
    hashes, owners = grams([text for _, text in fields])
    items = np.asarray([item for item, _ in fields], dtype=np.int64)[owners] if len(owners) else owners
    return GramIndex(hashes, items, count, sorted(lengths))


def build_indexes(items: Sequence[Item], settings: Settings) -> dict[str, GramIndex]:
    """One index per measure over every item (items are numbered by their place in ``items``)."""
    count = len(items)
    words = [(i, word_text(t)) for i, item in enumerate(items) for t in item.texts]
    sources = [(i, word_text(t)) for i, item in enumerate(items) for t in item.sources or ()]

    def word_index(fields: list[tuple[int, str]]) -> GramIndex:
        sizes = {len(text.split()) for _, text in fields}
        lengths = {settings.word_n} | {s for s in sizes if settings.min_words <= s < settings.word_n}
        return _index(fields, count, lambda t: word_grams(t, settings.word_n, min_words=settings.min_words), lengths)

    indexes = {WORD: word_index(words)}
    for profile in sorted({item.profile for item in items}):
        own = [(i, item) for i, item in enumerate(items) if item.profile == profile]
        folded = fold([t for _, item in own for t in item.texts], profile)
        owners = [i for i, item in own for _ in item.texts]
        indexes[char_measure(profile)] = _index(
            list(zip(owners, folded, strict=True)), count, lambda t: char_grams(t, settings.char_n), {settings.char_n}
        )
    if sources:
        indexes[SOURCE] = word_index(sources)
    return indexes


def scan_batch(texts: Sequence[str], indexes: Mapping[str, GramIndex]) -> dict[str, Matches]:
    """Which documents of ``texts`` share n-grams with which items, per measure (documents numbered from 0)."""
    found: dict[str, Matches] = {}
    word_indexes = {name: index for name, index in indexes.items() if name in (WORD, SOURCE)}
    if word_indexes:
        lengths = sorted({length for index in word_indexes.values() for length in index.lengths})
        hashes, documents = word_grams([word_text(t) for t in texts], 0, lengths=lengths)
        found.update({name: index.match(hashes, documents) for name, index in word_indexes.items()})
    for name, index in indexes.items():
        if name.startswith(CHAR):
            hashes, documents = char_grams(fold(texts, name.partition(":")[2]), 0, lengths=index.lengths)
            found[name] = index.match(hashes, documents)
    return found
