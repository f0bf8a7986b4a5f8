"""The embedded sample data meets the bar the issue sets for it."""

from __future__ import annotations

import itertools
import json
from collections import Counter

import pytest

from nlue.data.sample import sample_data_dir, sample_records
from nlue.lm.baselines.ngram import corpus_texts, words_of
from nlue.registry.tasks import GMET_CATEGORY_THEME, TASK_NAMES, TASKS
from nlue.text.normalize import normalize_answer

NLUE_TASKS = [TASKS[name] for name in TASK_NAMES]  # the exams have their own tests (test_mcq_kind.py)

CLASSIFICATION = [t for t in NLUE_TASKS if t.problem_type != "mask_fill"]


def _load(config: str, split: str) -> list[dict]:
    path = sample_data_dir() / config / f"{split}.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.mark.parametrize("task", CLASSIFICATION, ids=lambda t: t.name)
def test_sizes_labels_and_balance(task) -> None:
    sizes = {split: len(_load(task.name, split)) for split in task.splits}
    assert sum(sizes.values()) >= 40
    assert sizes["train"] >= 24 and sizes["validation"] >= 8 and sizes["test"] >= 8
    if task.problem_type == "regression":
        for split in task.splits:
            scores = [r["label"] for r in _load(task.name, split)]
            assert all(0 <= s <= 5 for s in scores)
            assert len({int(min(s, 4.99)) for s in scores}) == 5, split  # every band 0-1 ... 4-5
        return
    field = task.label_field
    for split in task.splits:
        counts = Counter(r[field] for r in _load(task.name, split))
        ids = {(i + 1 if task.name == "wg" else i) for i in range(task.num_labels)}
        assert set(counts) == ids, (split, counts)  # every label in every split
        total = sum(counts.values())
        for i, name in enumerate(task.label_names):
            value = i + 1 if task.name == "wg" else i
            assert abs(counts[value] / total - task.class_balance[name]) <= 0.1, (split, name)


def test_gmet_covers_every_category() -> None:
    items = _load("gmet", "test")
    per_category = Counter(item["category"] for item in items)
    assert set(per_category) == set(GMET_CATEGORY_THEME)
    assert min(per_category.values()) >= 2
    for item in items:
        assert item["sentence"].count("[MASK]") == 1
        assert item["theme"] == GMET_CATEGORY_THEME[item["category"]]
        assert item["answers"] and all(a.strip() and " " not in a for a in item["answers"])


@pytest.mark.parametrize("task", NLUE_TASKS, ids=lambda t: t.name)
def test_no_item_shared_between_splits(task) -> None:
    keys = {}
    for split in task.splits:
        keys[split] = {tuple(r[f] for f in task.text_fields) for r in _load(task.name, split)}
    splits = list(keys)
    for i, a in enumerate(splits):
        for b in splits[i + 1 :]:
            assert keys[a].isdisjoint(keys[b]), (a, b)


def test_text_is_devanagari_nepali() -> None:
    for task in NLUE_TASKS:
        for split in task.splits:
            for record in _load(task.name, split):
                for field in task.text_fields:
                    text = record[field].replace("[MASK]", "")
                    letters = [c for c in text if c.isalpha()]
                    devanagari = [c for c in letters if "\u0900" <= c <= "\u097f"]
                    assert len(devanagari) >= 0.8 * len(letters), (task.name, text)


# --- Spelling, near-duplicates and GMET unseen by the baseline corpus (issue 9, item 6) ---

# Misspellings once found in the sample (as whole words), with the standard spelling.
MISSPELT_WORDS = {
    "गित": "गीत",
    "तलप": "तलब",
    "डक्टर": "डाक्टर",
    "सुर्य": "सूर्य",
    "पुर्व": "पूर्व",
    "दिपावली": "दीपावली",
    "मोबाईल": "मोबाइल",
    "मोटरसाईकल": "मोटरसाइकल",
    "कैची": "कैँची",
    "गैडा": "गैँडा",
    "डाफे": "डाँफे",
    "शब्दकोष": "शब्दकोश",
    "अक्सिजेन": "अक्सिजन",
    "रूपैयाँ": "रुपैयाँ",
    "नून": "नुन",
    "स्कूल": "स्कुल",
    "तस्वीर": "तस्बिर",
    "कीबोर्ड": "किबोर्ड",
    "टिकेट": "टिकट",
    "बाच्छो": "बाछो",
    "मिठो": "मीठो",
    "निलो": "नीलो",
    "दुखी": "दुःखी",
    "हतौडा": "हथौडा",
    "बर्फ": "बरफ",
    "वास्ना": "बास्ना",
    "पिपल": "पीपल",
    "सुइटर": "स्वेटर",
    "औषधी": "औषधि",
    "दबाई": "औषधि",
    "बैशाख": "वैशाख",
    "वैसाख": "वैशाख",
    "जून": "जुन",  # the moon (जून is the month June)
    "चौबीस": "चौबिस",
    "छुवाछुत": "छुवाछूत",
    "वर्षातमा": "वर्षायाममा",
    "गह्रुंगो": "भारी",
    "पुर्याइदिएँ": "पुर्\u200dयाइदिएँ",
}
# Misspelt stems, caught in any inflected form (a word starting with them).
MISSPELT_STEMS = {
    "रूख": "रुख",
    "गितार": "गिटार",
    "खच्चड": "खच्चर",
    "शहर": "सहर",
    "रंगीन": "रङ्गिन",
    "रङ्गीन": "रङ्गिन",
    "लागू": "लागु",
    "बिकास": "विकास",
}
# Misspelt word pairs: the classifier वटा is written joined to its number.
MISSPELT_PHRASES = {"कति वटा": "कतिवटा", "छ वटा": "छवटा", "सय वटा": "सयवटा", "एक सिङ्गे": "एकसिङ्गे"}
# GMET answers that name the banyan with वर (a groom, a boon) instead of बर.
NOT_ANSWERS = {"वर": "बर"}


def _strings(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _sample_words(text: str) -> list[str]:
    return words_of(text.replace("_", " "))


def _misspellings(text: str) -> list[tuple[str, str]]:
    """(misspelt form, standard form) for each known misspelling in ``text``."""
    words = _sample_words(text)
    joined = f" {' '.join(words)} "
    found = [(w, MISSPELT_WORDS[w]) for w in words if w in MISSPELT_WORDS]
    found += [(w, right) for w in words for stem, right in MISSPELT_STEMS.items() if w.startswith(stem)]
    found += [(p, right) for p, right in MISSPELT_PHRASES.items() if f" {p} " in joined]
    # A past-tense verb ends in र्‍यो/र्‍यौं (eyelash ra, with ZWJ), not in the reph form र्यो.
    found += [(w, "र्\u200dयो") for w in words if w.endswith(("र्यो", "र्यौं", "र्यौँ"))]
    return found


def test_no_known_misspelling() -> None:
    found = []
    for task in NLUE_TASKS:
        for split in task.splits:
            for i, record in enumerate(_load(task.name, split), 1):
                texts = [
                    t for key, value in record.items() if key not in ("category", "theme") for t in _strings(value)
                ]
                found += [(f"{task.name}/{split}:{i}", *hit) for text in texts for hit in _misspellings(text)]
                if task.name == "gmet":
                    found += [(f"gmet/test:{i}", a, NOT_ANSWERS[a]) for a in record["answers"] if a in NOT_ANSWERS]
    assert not found, "misspellings (where, found, standard):\n" + "\n".join(map(str, found))


def _levenshtein(a: list[str], b: list[str]) -> int:
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        current = [i]
        for j, y in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x != y)))
        previous = current
    return previous[-1]


def near_duplicate(a: list[str], b: list[str]) -> str | None:
    """Why two items' input words count as near-duplicates, or None.

    Word-level Jaccard >= 0.8 over the concatenated input fields, or one being the other
    with at most two words added, dropped or replaced (word edit distance <= 2).
    """
    sa, sb = set(a), set(b)
    jaccard = len(sa & sb) / len(sa | sb) if sa | sb else 1.0
    if jaccard >= 0.8:
        return f"Jaccard {jaccard:.2f}"
    distance = _levenshtein(a, b)
    return f"{distance} word edit(s) apart" if distance <= 2 else None


def _winograd_twins(task, a: dict, b: dict) -> bool:
    """CR states each schema sentence twice, once per candidate substituted for the pronoun (one right, one wrong)."""
    return task.name == "cr" and a["sentence1"] == b["sentence1"] and a["label"] != b["label"]


@pytest.mark.parametrize("task", NLUE_TASKS, ids=lambda t: t.name)
def test_no_near_duplicates_within_a_task(task) -> None:
    items = [
        (f"{split}:{i}", record, [w for f in task.text_fields for w in _sample_words(record[f])])
        for split in task.splits
        for i, record in enumerate(_load(task.name, split), 1)
    ]
    pairs = []
    for (where_a, a, words_a), (where_b, b, words_b) in itertools.combinations(items, 2):
        why = near_duplicate(words_a, words_b)
        if why and not _winograd_twins(task, a, b):
            pairs.append(f"{task.name} {where_a} / {where_b} ({why}):\n  {a}\n  {b}")
    assert not pairs, "near-duplicate items:\n" + "\n".join(pairs)


def test_no_two_gmet_items_share_a_blank_context_and_answer() -> None:
    """Two items with the same word on each side of [MASK] and a common answer test the same bigram twice."""
    seen: dict[tuple[str, str, str], tuple[int, str]] = {}
    clashes = []
    for i, item in enumerate(_load("gmet", "test"), 1):
        left, right = item["sentence"].split("[MASK]")
        context = ((words_of(left) or ["<s>"])[-1], (words_of(right) or ["</s>"])[0])
        for answer in item["answers"]:
            key = (*context, normalize_answer(answer))
            if key in seen:
                clashes.append(f"gmet:{seen[key][0]} / gmet:{i} {key}:\n  {seen[key][1]}\n  {item['sentence']}")
            seen.setdefault(key, (i, item["sentence"]))
    assert not clashes, "\n".join(clashes)


def _contains(big: list[str], small: list[str]) -> bool:
    return any(big[i : i + len(small)] == small for i in range(len(big) - len(small) + 1))


def test_gmet_sentences_are_unseen_by_the_baseline_corpus() -> None:
    """The n-gram baselines claim no GMET sentence was seen: no filled GMET sentence is in (or holds) a corpus
    text, and none shares a word 5-gram with the corpus (words as the baseline reads them, ``words_of``)."""
    n = 5
    corpus = [(text, words_of(text)) for text in corpus_texts()]
    grams = {tuple(words[i : i + n]): text for text, words in corpus for i in range(len(words) - n + 1)}
    gmet = [record for task, record in sample_records() if task.name == "gmet"]
    assert len(gmet) == len(_load("gmet", "test")) and corpus
    overlaps = []
    for i, record in enumerate(gmet, 1):
        for answer in record["answers"]:
            filled = words_of(record["sentence"].replace("[MASK]", answer))
            for text, words in corpus:
                # Texts of one or two words are wg options and ad queries or titles: words, not sentences.
                if _contains(words, filled) or (len(words) >= 3 and _contains(filled, words)):
                    overlaps.append(f"gmet:{i} [{answer}] and corpus text {text!r}")
            for j in range(len(filled) - n + 1):
                gram = tuple(filled[j : j + n])
                if gram in grams:
                    overlaps.append(f"gmet:{i} [{answer}] shares {' '.join(gram)!r} with {grams[gram]!r}")
    assert not overlaps, "GMET text seen by the baseline corpus:\n" + "\n".join(overlaps)
