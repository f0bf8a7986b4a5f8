"""`nlue contamination` on a generated corpus: sentences/s and the process tree's peak memory.

    python benchmarks/contamination_corpus.py                      1M sentences, one process
    python benchmarks/contamination_corpus.py --sentences 200000 --num-proc 2

The corpus is made from the embedded sample's test items (issue 32's Measure): 5% of the items planted
verbatim inside unrelated text, 5% planted with small edits (a letter doubled in a word every 12 words
of each field long enough for a word n-gram, so that none survives), 5% as the English text they were "translated" from (we
generate it, and a translated-rows file joins it to the items), and the rest of the lines unrelated text
we generate: the items' own Nepali words in random order, and random English words. The same generator
feeds the test of the check (tests/test_contamination.py), which asserts that every planted item is
found and nothing else.

Printed beside the figures: a reference, a plain-Python word 13-gram check of the same corpus (lines
lowercased and split, every 13-gram looked up in a set of the items' 13-grams), the loop most
decontamination scripts are; it checks one measure where nlue checks three.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from readme_llm_commands import PeakMemory  # the same sampler of a process tree's memory

# English words of our own choosing, for generated English sources and unrelated English lines.
_ENGLISH_WORDS = (
    "the a river village market teacher school road bridge rain season farmer price rice water hill city bus "
    "station doctor hospital child mother father friend morning evening quickly slowly always never very new old "
    "small large bright green quiet loud went came saw made found gave took built opened closed said told asked "
    "because although while after before during under over near far with without into from every some many few"
)
ENGLISH = tuple(_ENGLISH_WORDS.split())
PLANT_SHARE = 0.05
EDIT_EVERY = 12  # one edited word in every 12: each 13-word window, and each shorter field, holds an edit
MIN_WORDS = 8  # nlue contamination's --min-words: a shorter field has no word n-gram


@dataclass
class Plan:
    """Which items are planted how, and each item's generated English source (one sentence per field)."""

    verbatim: set[tuple[str, object]] = field(default_factory=set)
    edited: set[tuple[str, object]] = field(default_factory=set)
    sourced: set[tuple[str, object]] = field(default_factory=set)
    english: dict[tuple[str, object], tuple[str, ...]] = field(default_factory=dict)


def english_sentence(rng: random.Random) -> str:
    words = [rng.choice(ENGLISH) for _ in range(rng.randint(14, 22))]
    return " ".join(words).capitalize() + "."


def edit_text(text: str, rng: random.Random) -> str:
    """A letter doubled inside a word every :data:`EDIT_EVERY` words (from the middle of a short text); a word with
    no letter (WinoGrande's blank ``_``, a number) passes the edit to the next one."""
    words = text.split(" ")
    position = min(len(words) // 2, EDIT_EVERY // 2)
    while position < len(words):
        letters = [i for i, c in enumerate(words[position]) if c.isalpha()]
        if not letters:
            position += 1
            continue
        word, cut = words[position], rng.choice(letters) + 1
        words[position] = word[:cut] + word[cut - 1] + word[cut:]
        position += EDIT_EVERY
    return " ".join(words)


def edit_item(texts: Sequence[str], rng: random.Random) -> list[str]:
    """The fields a word n-gram can see (:data:`MIN_WORDS` words or more) edited so that it sees them no more; an
    item with no such field gets one edit in its longest field. Every edited item holds an edit."""
    seen = [len(text.split()) >= MIN_WORDS for text in texts]
    if not any(seen):
        seen[max(range(len(texts)), key=lambda i: len(texts[i]))] = True
    return [edit_text(text, rng) if edit else text for text, edit in zip(texts, seen, strict=True)]


def make_plan(items: Sequence, rng: random.Random) -> Plan:
    """5% of ``items`` for each way of planting (at least one each), chosen apart; English for every item."""
    plan = Plan()
    keys = [(item.task, item.id) for item in items if item.texts]
    for item in items:
        plan.english[(item.task, item.id)] = tuple(english_sentence(rng) for _ in item.texts)
    chosen = rng.sample(keys, 3 * max(1, round(PLANT_SHARE * len(keys))))
    third = len(chosen) // 3
    plan.verbatim, plan.edited, plan.sourced = (
        set(chosen[:third]),
        set(chosen[third : 2 * third]),
        set(chosen[2 * third :]),
    )
    return plan


def unrelated(rng: random.Random, vocabulary: Sequence[str]) -> str:
    if rng.random() < 0.2:
        return english_sentence(rng)
    return " ".join(rng.choice(vocabulary) for _ in range(rng.randint(8, 20))) + "।"


def documents(items: Sequence, plan: Plan, total: int, rng: random.Random) -> Iterator[str]:
    """``total`` lines: the planted ones spread among unrelated text made of the items' own words."""
    vocabulary = sorted({word for item in items for text in item.texts for word in text.split()})
    planted = []
    for item in items:
        key = (item.task, item.id)
        if key in plan.verbatim:
            planted.append(" ".join(item.texts))
        elif key in plan.edited:
            planted.append(" ".join(edit_item(item.texts, rng)))
        elif key in plan.sourced:
            planted.append(" ".join(plan.english[key]))
    places = dict(zip(rng.sample(range(total), len(planted)), planted, strict=True))
    for line in range(total):
        inside = places.get(line)
        yield (
            unrelated(rng, vocabulary)
            if inside is None
            else f"{unrelated(rng, vocabulary)} {inside} {unrelated(rng, vocabulary)}"
        )


def write_sources(folder: Path, repo: Path, plan: Plan) -> Path:
    """``<folder>/<task>/test.translated.jsonl`` as nlue translate writes them: each built test row with its
    generated English source in ``provenance.source_text``."""
    from nlue.data.access import load_task
    from nlue.predictions import item_id
    from nlue.registry.tasks import TASKS

    for task_name in sorted({task for task, _ in plan.english}):
        task = TASKS[task_name]
        lines = []
        for position, row in enumerate(load_task(str(repo), task)["test"]):
            english = plan.english.get((task.name, item_id(row, position)))
            if english is None or len(english) != len(task.text_fields):
                continue
            fields = {name: row[name] for name in task.text_fields}
            lines.append(json.dumps({**fields, "provenance": {"source_text": dict(zip(task.text_fields, english, strict=True))}},
                                    ensure_ascii=False))  # fmt: skip
        (folder / task.name).mkdir(parents=True, exist_ok=True)
        (folder / task.name / "test.translated.jsonl").write_text(
            "".join(f"{line}\n" for line in lines), encoding="utf-8"
        )
    return folder


def reference_seconds(items: Sequence, corpus: Path, n: int = 13) -> float:
    """The plain-Python word n-gram check of the module docstring: seconds for the whole corpus."""
    grams = {tuple(words[i:i + n]) for item in items for text in item.texts
             for words in [text.lower().split()] for i in range(max(1, len(words) - n + 1))}  # fmt: skip
    started = time.perf_counter()
    found = 0
    with corpus.open(encoding="utf-8") as handle:
        for line in handle:
            words = line.lower().split()
            found += any(tuple(words[i : i + n]) in grams for i in range(len(words) - n + 1))
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sentences", type=int, default=1_000_000)
    parser.add_argument("--num-proc", type=int, default=1)
    parser.add_argument("--seed", type=int, default=32)
    args = parser.parse_args()
    from nlue.data.access import sample_repo
    from nlue.evals.contamination.items import dataset_tasks, task_items

    repo = sample_repo()
    items = [item for task in dataset_tasks(str(repo), None, "test") for item in task_items(str(repo), task, "test")]
    rng = random.Random(args.seed)
    plan = make_plan(items, rng)
    with tempfile.TemporaryDirectory() as work:
        corpus = Path(work) / "corpus.txt"
        with corpus.open("w", encoding="utf-8") as handle:
            handle.writelines(f"{line}\n" for line in documents(items, plan, args.sentences, rng))
        sources = write_sources(Path(work) / "sources", repo, plan)
        command = [sys.executable, "-m", "nlue.cli", "contamination", "--dataset", str(repo), "--corpus", str(corpus),
                   "--sources", str(sources), "--num-proc", str(args.num_proc), "--out", f"{work}/found.json", "-q"]  # fmt: skip
        with PeakMemory() as memory:
            started = time.perf_counter()
            process = subprocess.Popen(
                command, stdout=subprocess.PIPE, text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"}
            )
            memory.pids.append(process.pid)
            output, _ = process.communicate()
            seconds = time.perf_counter() - started
        if process.returncode:
            print(output)
            return process.returncode
        found = json.loads(Path(f"{work}/found.json").read_text(encoding="utf-8"))
        reference = reference_seconds(items, corpus)
    flagged = sum(entry["counts"]["contaminated"] for entry in found["tasks"].values())
    sources_found = sum(entry["counts"]["source_in_corpus"] for entry in found["tasks"].values())
    size = found["corpus"]["characters"] / 2**20
    print(f"nlue contamination: {args.sentences:,} sentences ({size:.0f} Mi characters), {len(items)} test items, "
          f"--num-proc {args.num_proc}: {seconds:.1f} s, {args.sentences / seconds:,.0f} sentences/s (start-up and "
          f"loading the dataset included), peak memory {memory.peak / 2**20:,.0f} MiB (process tree)")  # fmt: skip
    print(
        f"  found: {flagged} items contaminated (planted: {len(plan.verbatim) + len(plan.edited)}), "
        f"{sources_found} sources (planted: {len(plan.sourced)}); an item sharing a whole field with a planted one "
        "is found too"
    )
    print(
        f"reference, plain-Python word 13-gram set lookup, one measure, one process: {reference:.1f} s, "
        f"{args.sentences / reference:,.0f} sentences/s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
