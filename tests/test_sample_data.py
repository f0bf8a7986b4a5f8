"""The embedded sample data meets the bar the issue sets for it."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from nlue.sample import sample_data_dir
from nlue.tasks import GMET_CATEGORY_THEME, TASKS

CLASSIFICATION = [t for t in TASKS.values() if t.problem_type != "mask_fill"]


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


@pytest.mark.parametrize("task", list(TASKS.values()), ids=lambda t: t.name)
def test_no_item_shared_between_splits(task) -> None:
    keys = {}
    for split in task.splits:
        keys[split] = {tuple(r[f] for f in task.text_fields) for r in _load(task.name, split)}
    splits = list(keys)
    for i, a in enumerate(splits):
        for b in splits[i + 1 :]:
            assert keys[a].isdisjoint(keys[b]), (a, b)


def test_text_is_devanagari_nepali() -> None:
    for task in TASKS.values():
        for split in task.splits:
            for record in _load(task.name, split):
                for field in task.text_fields:
                    text = record[field].replace("[MASK]", "")
                    letters = [c for c in text if c.isalpha()]
                    devanagari = [c for c in letters if "\u0900" <= c <= "\u097f"]
                    assert len(devanagari) >= 0.8 * len(letters), (task.name, text)
