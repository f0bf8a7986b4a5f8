"""Turning scraped or OCR-extracted exam items into an exam, the way UrduMMLU did (facts §4).

Stages, in order; every item that leaves is counted by reason and listed in the report:

1. **Check**: each raw item goes through the task's row rules
   (:func:`nlue.registry.kinds.multiple_choice.check_item`): script-aware normalisation
   (Urdu: directional marks removed, look-alike Arabic code points folded; Nepali: the
   builder's rules), four distinct non-empty options, a key A-D (``numeric_keys=0`` or
   ``1`` converts 0- or 1-based numbers first), ``correct_option`` equal to the keyed option,
   subdomain and level from the task's vocabularies. A failure drops the item as
   ``invalid:<field>``.
2. **Exact duplicates**: the same normalised question with the same four option texts,
   in any order (sources order options differently). When every copy has the same
   correct option text the first is kept and the others merged into it (their sources
   added, their ids listed); when they disagree every copy is dropped
   (``conflicting_duplicate``): which one is right cannot be told.
3. **Near duplicates** (conservative; thresholds in :class:`NearDuplicateRule`): two items
   are near duplicates when their questions share at least ``question_overlap`` of their
   tokens (Jaccard over tokens folded as the builder's near-duplicate key folds text:
   case, punctuation and digit forms ignored) **and** they share at least
   ``shared_options`` of their four options (folded the same way), unless the tokens they
   do not share include a negation or exception word ("not", "except", "होइन", "بغیر", ...),
   which turns a question into its opposite. The later item of a pair is removed
   (``near_duplicate``) when both have the same correct option; a pair whose answers differ
   is kept and listed for a person to decide (``near_duplicate_answer_conflicts``). Every
   pair is reported with both ids, its token overlap and its shared options.

The output items are in the paper's schema (``options`` object, letter key), ready for
:func:`split_pool` and ``nlue build``. Human annotation of exam-derived items is
:mod:`nlue.pipelines.mcq_annotation`; the command line is :mod:`nlue.pipelines.mcq_cli`.
"""

from __future__ import annotations

import logging
import random
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from itertools import combinations
from typing import Any

from nlue.errors import NlueError
from nlue.registry.kinds import RowRejection
from nlue.registry.kinds.mcq_text import LETTERS, exam_of
from nlue.registry.kinds.multiple_choice import check_item, item_options, key_letter, parse_key
from nlue.registry.spec import TaskSpec
from nlue.text.normalize import loose_texts

logger = logging.getLogger(__name__)

DEFAULT_QUESTION_OVERLAP = 0.85
DEFAULT_SHARED_OPTIONS = 3
DEFAULT_POOL_SEED = 42
NEGATIONS: frozenset[str] = frozenset(
    {
        "not", "no", "never", "except", "false", "incorrect", "least", "neither", "nor", "without",
        "होइन", "हैन", "नभएको", "नहुने", "नगर्ने", "नपर्ने", "बाहेक", "गलत", "छैन", "असत्य",
        "نہیں", "نہ", "غلط", "سوائے", "بغیر", "علاوہ", "کم",
    }
)  # fmt: skip


@dataclass(frozen=True)
class NearDuplicateRule:
    """When two items are near duplicates (see the module docstring); the defaults are the documented ones."""

    question_overlap: float = DEFAULT_QUESTION_OVERLAP  # Jaccard of the question's folded tokens
    shared_options: int = DEFAULT_SHARED_OPTIONS  # of the four options, folded

    def __post_init__(self) -> None:
        if not 0.0 < self.question_overlap <= 1.0:
            raise NlueError(f"question overlap must be in (0, 1], got {self.question_overlap}")
        if not 1 <= self.shared_options <= len(LETTERS):
            raise NlueError(f"shared options must be 1-4, got {self.shared_options}")


@dataclass
class CurationReport:
    """What curation did: counts in and out, drops by reason, merges, near-duplicate pairs."""

    task: str
    read: int = 0
    kept: int = 0
    dropped: Counter[str] = field(default_factory=Counter)
    drops: list[dict[str, Any]] = field(default_factory=list)
    merged: list[dict[str, Any]] = field(default_factory=list)
    near_duplicates: list[dict[str, Any]] = field(default_factory=list)
    near_duplicate_answer_conflicts: list[dict[str, Any]] = field(default_factory=list)
    rule: NearDuplicateRule = field(default_factory=NearDuplicateRule)

    def drop(self, reason: str, where: str, item_id: str, detail: str = "") -> None:
        self.dropped[reason] += 1
        self.drops.append({"reason": reason, "where": where, "id": item_id, "detail": detail})

    def to_dict(self) -> dict[str, Any]:
        return {
            "task": self.task, "read": self.read, "kept": self.kept,
            "dropped_by_reason": dict(sorted(self.dropped.items())), "dropped": sum(self.dropped.values()),
            "near_duplicate_rule": asdict(self.rule), "merged_duplicates": self.merged,
            "near_duplicates_removed": self.near_duplicates,
            "near_duplicate_answer_conflicts": self.near_duplicate_answer_conflicts, "drops": self.drops,
        }  # fmt: skip


def _numeric_key(raw: Any, base: int | None) -> Any:
    """A 0- or 1-based number as its letter, when asked; anything else unchanged."""
    if base is None or raw is None or isinstance(raw, bool):
        return raw
    try:
        number = int(str(raw).strip())
    except ValueError:
        return raw
    position = number - base
    return LETTERS[position] if 0 <= position < len(LETTERS) else raw


def check_raw_item(
    task: TaskSpec, record: Mapping[str, Any], numeric_keys: int | None = None
) -> dict[str, Any] | RowRejection:
    """One raw item in the paper's schema, normalised and checked by the task's rules, or why it fails."""

    def raw(name: str) -> Any:
        value = record.get(name)
        return _numeric_key(value, numeric_keys) if name == "correct_key" else value

    row = check_item(exam_of(task), raw, task.name)
    if isinstance(row, RowRejection):
        return row
    key = parse_key(raw("correct_key")) if raw("correct_key") not in (None, "") else "missing correct_key"
    if isinstance(key, str):
        return RowRejection("correct_key", key, str(record.get("correct_key")))
    return paper_item(row, LETTERS[key])


def paper_item(row: Mapping[str, Any], letter: str | None = None) -> dict[str, Any]:
    """An item in the paper's schema (``options`` object, letter key) from a checked or built row."""
    options = item_options(row)
    letter = letter or key_letter(row["correct_key"])
    return {
        "id": row["id"], "question": row["question"], "options": options, "correct_key": letter,
        "correct_option": options[letter], "domain": row["domain"], "subdomain": row["subdomain"],
        "level": row["level"], "source": list(row.get("source") or []), "language": row["language"],
    }  # fmt: skip


def _folded(texts: Sequence[str]) -> list[str]:
    """Texts folded for near-duplicate comparison: the builder's loose key, every digit read as ASCII."""
    return ["".join(str(unicodedata.digit(c, c)) if c.isdigit() else c for c in t) for t in loose_texts(list(texts))]


def _tokens(question: str) -> frozenset[str]:
    return frozenset(token for token in _folded(question.split()) if token)


def _merge_exact(items: list[dict[str, Any]], report: CurationReport) -> list[dict[str, Any]]:
    groups: dict[tuple[str, frozenset[str]], list[dict[str, Any]]] = defaultdict(list)
    for item in items:
        groups[(item["question"], frozenset(item["options"].values()))].append(item)
    kept = []
    for group in groups.values():
        first = group[0]
        if len(group) == 1:
            kept.append(first)
            continue
        answers = {item["correct_option"] for item in group}
        ids = [item["id"] for item in group]
        if len(answers) > 1:
            for item in group:
                report.drop("conflicting_duplicate", "exact duplicates", item["id"],
                            f"copies {', '.join(ids)} give the answers {', '.join(sorted(answers))}")  # fmt: skip
            continue
        for other in group[1:]:
            first["source"] += [s for s in other["source"] if s not in first["source"]]
            report.drop("merged_duplicate", "exact duplicates", other["id"], f"merged into {first['id']}")
        report.merged.append({"kept": first["id"], "merged": ids[1:]})
        kept.append(first)
    return kept


def near_duplicate_pairs(
    items: Sequence[Mapping[str, Any]], rule: NearDuplicateRule
) -> list[tuple[int, int, float, int]]:
    """(earlier, later, question overlap, shared options) for every near-duplicate pair among ``items``.

    Candidates share at least one pair of folded options (two items sharing 2+ options do),
    so long exams are not compared item by item.
    """
    options = [frozenset(_folded(list(item_options(item).values()))) for item in items]
    tokens = [_tokens(str(item["question"])) for item in items]
    by_pair: dict[tuple[str, str], list[int]] = defaultdict(list)
    pairs = []
    for later, opts in enumerate(options):
        candidates = sorted({earlier for pair in combinations(sorted(opts), 2) for earlier in by_pair[pair]})
        for earlier in candidates:
            shared = len(opts & options[earlier])
            union = tokens[later] | tokens[earlier]
            overlap = len(tokens[later] & tokens[earlier]) / len(union) if union else 1.0
            negated = (tokens[later] ^ tokens[earlier]) & NEGATIONS
            if shared >= rule.shared_options and overlap >= rule.question_overlap and not negated:
                pairs.append((earlier, later, round(overlap, 4), shared))
        for pair in combinations(sorted(opts), 2):
            by_pair[pair].append(later)
    return pairs


def _remove_near_duplicates(items: list[dict[str, Any]], report: CurationReport) -> list[dict[str, Any]]:
    removed: set[int] = set()
    for earlier, later, overlap, shared in near_duplicate_pairs(items, report.rule):
        if earlier in removed or later in removed:
            continue  # judged against what stays
        first, second = items[earlier], items[later]
        agree = _folded([first["correct_option"]]) == _folded([second["correct_option"]])
        entry = {"kept": first["id"], "other": second["id"], "question_overlap": overlap, "shared_options": shared}
        if agree:
            removed.add(later)
            report.near_duplicates.append(entry)
            report.drop("near_duplicate", "near duplicates", second["id"], f"near duplicate of {first['id']}")
        else:
            report.near_duplicate_answer_conflicts.append(entry)
    return [item for position, item in enumerate(items) if position not in removed]


def curate(
    records: Iterable[tuple[str, int, Mapping[str, Any]]],
    task: TaskSpec,
    *,
    numeric_keys: int | None = None,
    rule: NearDuplicateRule | None = None,
) -> tuple[list[dict[str, Any]], CurationReport]:
    """Curate ``(file, row, record)`` items for ``task``: the kept items (paper schema) and the report."""
    if numeric_keys not in (None, 0, 1):
        raise NlueError(f"numeric keys are 0- or 1-based; got {numeric_keys!r}")
    report = CurationReport(task.name, rule=rule or NearDuplicateRule())
    checked: list[dict[str, Any]] = []
    seen_ids: set[str] = set()
    for path, row, record in records:
        report.read += 1
        where = f"{path}, row {row}"
        item = check_raw_item(task, record, numeric_keys)
        if isinstance(item, RowRejection):
            shown = f" (got {item.value!r})" if item.value else ""
            report.drop(f"invalid:{item.field}", where, str(record.get("id") or ""), f"{item.reason}{shown}")
            continue
        if item["id"] in seen_ids:  # ids name items in reports and annotation sheets: they must be unique
            item["id"] = f"{item['id']}~{row}"
        seen_ids.add(item["id"])
        checked.append(item)
    kept = _remove_near_duplicates(_merge_exact(checked, report), report)
    report.kept = len(kept)
    logger.info("%s: %d read, %d kept, dropped %s", task.name, report.read, report.kept, dict(report.dropped))
    return kept, report


def identity(item: Mapping[str, Any]) -> tuple[str, frozenset[str]]:
    """What makes two items the same item: the question and the set of option texts."""
    return (str(item["question"]), frozenset(item_options(item).values()))


def split_pool(
    items: Sequence[Mapping[str, Any]], size: int, seed: int = DEFAULT_POOL_SEED
) -> tuple[list[Mapping[str, Any]], list[Mapping[str, Any]]]:
    """(demo pool, test): ``size`` items drawn with ``seed``, balanced over the keys A-D; disjoint by construction.

    Each key gets ``size // 4`` items (the first ``size % 4`` keys one more) where it has them;
    both parts keep the input order. Items that are the same item (:func:`identity`) never
    end up on both sides: a repeat of a pool item goes to the pool too.
    """
    if not 0 < size < len(items):
        raise NlueError(f"the pool must hold between 1 and {len(items) - 1} of the {len(items)} items, got {size}")
    rng = random.Random(seed)
    by_key: dict[str, list[int]] = {letter: [] for letter in LETTERS}
    for position, item in enumerate(items):
        by_key[key_letter(item["correct_key"])].append(position)
    chosen: set[int] = set()
    quotas = {letter: size // 4 + (i < size % 4) for i, letter in enumerate(LETTERS)}
    for letter, positions in by_key.items():
        rng.shuffle(positions)
        chosen.update(positions[: quotas[letter]])
    leftover = [p for positions in by_key.values() for p in positions if p not in chosen]
    rng.shuffle(leftover)
    chosen.update(leftover[: size - len(chosen)])  # a key short of items: fill from the others
    pooled = {identity(items[p]) for p in chosen}
    demo = [item for p, item in enumerate(items) if p in chosen or identity(item) in pooled]
    test = [item for p, item in enumerate(items) if p not in chosen and identity(item) not in pooled]
    return demo, test


def overlapping(demo: Sequence[Mapping[str, Any]], test: Sequence[Mapping[str, Any]]) -> list[str]:
    """Ids of test items that are also in the demonstration pool (same id, or same question and options)."""
    ids = {str(item["id"]) for item in demo}
    same = {identity(item) for item in demo}
    return [str(item["id"]) for item in test if str(item["id"]) in ids or identity(item) in same]
