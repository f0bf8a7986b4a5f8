"""The builder's streaming parts: fingerprint sets, length histograms, the Arrow write path,
the holdout draw and the normaliser's fast path, each checked against a plain reference."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nlue.data import sources, stats
from nlue.data.carve import stratified_holdout
from nlue.data.fingerprints import SEPARATOR, FingerprintSet, as_keys, fingerprint
from nlue.data.parquet_io import ShardedSplitWriter
from nlue.data.source_file import WatchedSource
from nlue.data.stats import LengthHistogram, SplitStats
from nlue.registry.features import task_features
from nlue.registry.tasks import TASKS
from nlue.text import normalize, rules
from nlue.text.normalize import normalize_text
from nlue.text.profiles import NEPALI, get_profile
from nlue.text.rules import LanguageProfile

# --- fingerprints -------------------------------------------------------------------------


def test_fingerprint_set_matches_a_python_set() -> None:
    rng = np.random.default_rng(0)
    fingerprints = FingerprintSet(np.uint8, run_cap=5_000)  # small cap: many runs and merges
    reference: dict[int, int] = {}
    for _ in range(40):
        keys = rng.integers(0, 30_000, size=700, dtype=np.uint64)  # repeats within and across batches
        labels = rng.integers(0, 3, size=700, dtype=np.uint8)
        found, stored = fingerprints.lookup(keys)
        assert stored is not None
        assert found.tolist() == [int(k) in reference for k in keys]
        assert [int(s) for s, f in zip(stored, found, strict=True) if f] == [
            reference[int(k)] for k in keys if int(k) in reference
        ]
        new, first = np.unique(keys[~found], return_index=True)
        fingerprints.add(new, labels[~found][first])
        for key, label in zip(new.tolist(), labels[~found][first].tolist(), strict=True):
            reference[key] = label
    assert len(fingerprints) == len(reference)
    assert all(length <= 5_000 for length in fingerprints._run_lengths())
    assert fingerprints.nbytes == 9 * len(reference)  # 8-byte key + 1-byte label code
    fingerprints.drop_labels()
    assert fingerprints.nbytes == 8 * len(reference)
    assert fingerprints.contains(np.array(sorted(reference), dtype=np.uint64)).all()


def test_full_range_keys_and_empty_queries() -> None:
    keys = np.array([0, 1, 2**63, 2**64 - 1], dtype=np.uint64)
    fingerprints = FingerprintSet()
    assert not fingerprints.contains(keys).any()
    fingerprints.add(keys)
    assert fingerprints.contains(keys).all()
    assert not fingerprints.contains(np.array([2, 2**64 - 2], dtype=np.uint64)).any()
    assert fingerprints.contains(np.zeros(0, dtype=np.uint64)).shape == (0,)


def test_fingerprint_values_cannot_run_together() -> None:
    # The separator is whitespace to the normaliser, so it never occurs inside a value.
    assert normalize_text(f"a{SEPARATOR}b") == "a b"
    assert fingerprint(["ab", "c"]) != fingerprint(["a", "bc"])
    assert as_keys([fingerprint(["क"]), fingerprint(["ख"])]).dtype == np.uint64


# --- statistics ---------------------------------------------------------------------------


@pytest.mark.parametrize("size", [1, 2, 3, 7, 20, 101, 1000])
def test_length_histogram_percentiles_equal_numpy(size: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stats, "DENSE_LENGTH_CAP", 64)  # exercise the sparse counts of long texts
    rng = np.random.default_rng(size)
    lengths = rng.integers(1, 100, size=size)
    histogram = LengthHistogram()
    for part in np.array_split(lengths, 3):
        histogram.add(part)
    for p in (0, 5, 50, 95, 100):
        assert histogram.percentile(p) == int(np.percentile(lengths, p, method="nearest")), p
    assert histogram.max() == lengths.max() and histogram.count == size


def test_split_stats_from_tables_equal_row_by_row() -> None:
    task = TASKS["stsb"]
    rows = [{"sentence1": "क" * (i % 13 + 1), "sentence2": "ख", "label": [0.0, -0.0, 2.5][i % 3]} for i in range(50)]
    by_row, by_table = SplitStats(task.text_fields, "label"), SplitStats(task.text_fields, "label")
    for row in rows:
        by_row.add(row)
    schema = task_features(task).arrow_schema
    by_table.add_table(pa.Table.from_pylist(rows[:20], schema=schema))
    by_table.add_table(pa.Table.from_pylist(rows[20:], schema=schema))
    assert by_row.length_percentiles() == by_table.length_percentiles()
    assert list(by_row.label_counts.items()) == list(by_table.label_counts.items())


# --- writing ------------------------------------------------------------------------------


def test_table_path_writes_the_same_bytes_as_row_path(tmp_path: Path) -> None:
    task = TASKS["mnli"]
    features = task_features(task)
    rows = [{"premise": f"वाक्य {i}", "hypothesis": "अर्को" * (i % 5), "label": i % 3} for i in range(23_456)]
    rows = [r for r in rows if r["hypothesis"]]
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    by_row = ShardedSplitWriter(tmp_path / "a", "train", features, max_shard_bytes=400_000)
    for row in rows:
        by_row.write(dict(row))
    by_table = ShardedSplitWriter(tmp_path / "b", "train", features, max_shard_bytes=400_000)
    schema = features.arrow_schema.remove(features.arrow_schema.get_field_index("idx"))
    everything = pa.Table.from_pylist(
        [{"premise": f"वाक्य {i}", "hypothesis": "अर्को" * (i % 5), "label": i % 3} for i in range(23_456)], schema=schema
    )
    # Uneven pieces, filtered as the carving pass does (filter adds validity bitmaps).
    for start, stop in ((0, 3), (3, 9_000), (9_000, 23_456)):
        piece = everything.slice(start, stop - start)
        by_table.write_table(piece.filter(pa.array([h != "" for h in piece.column("hypothesis").to_pylist()])))
    first, second = by_row.close(), by_table.close()
    assert [p.name for p in first] == [p.name for p in second] and len(first) > 1
    assert by_row.num_bytes == by_table.num_bytes and by_row.num_rows == by_table.num_rows == len(rows)
    for a, b in zip(first, second, strict=True):
        assert a.read_bytes() == b.read_bytes(), a.name


# --- carving ------------------------------------------------------------------------------


def _holdout_reference(strata: np.ndarray, fraction: float, seed: int) -> np.ndarray:
    mask = np.zeros(len(strata), dtype=bool)
    rng = np.random.default_rng(seed)
    for value in np.unique(strata):
        positions = np.flatnonzero(strata == value)
        count = round(fraction * len(positions))
        if count == 0 and len(positions) >= 2 and fraction > 0:
            count = 1
        mask[rng.permutation(positions)[:count]] = True
    return mask


@pytest.mark.parametrize("dtype", [np.int8, np.int64])
@pytest.mark.parametrize("size", [0, 1, 5, 999, 20_000])
def test_holdout_draws_what_permutation_drew(size: int, dtype: type) -> None:
    strata = np.random.default_rng(size).choice([0, 1, 1, 1, 2, 5], size=size).astype(dtype)
    for fraction, seed in ((0.1, 42), (0.33, 7), (0.9, 0)):
        assert np.array_equal(stratified_holdout(strata, fraction, seed), _holdout_reference(strata, fraction, seed))


# --- normalisation and reading --------------------------------------------------------------


def _normalize_reference(text: str, profile: LanguageProfile) -> str:
    """Every pass of the profile, unconditionally, as the normaliser was first written."""
    text = unicodedata.normalize("NFC", text)
    if profile.compatibility:
        compatibility = re.compile(f"[{rules.char_class(rules.expand(profile.compatibility))}]")
        text = compatibility.sub(lambda m: unicodedata.normalize("NFKC", m.group()), text)
    removed = rules.char_class(rules.expand(profile.removed)) if profile.removed else ""
    text = re.sub(f"[{rules.CONTROLS}{removed}]", "", text)
    if profile.emoji:
        text = rules._ORPHAN_SELECTOR.sub("", text)
    if profile.tidy_joiners:
        text = rules._JOINER_RUN.sub(rules._joiner_rule(profile), text)
    fold = rules._folder(profile)
    if fold is not None:
        text = fold(text)
    if profile.dandas:
        script = rules.char_class(rules.expand(profile.script))
        text = re.sub(f"(?<=[{script}])(?:\\s*\\|)+", rules._dandas, text)
    return unicodedata.normalize("NFC", re.sub(r"\s+", " ", text).strip())


_SPACES_AND_INVISIBLES = [" ", "  ", "\t", "\n", "\u00a0", "\u3000", "\x1f", "\u200b", "\u2060", "\ufeff", "\u00ad"]
_TRICKY = st.sampled_from(
    [*_SPACES_AND_INVISIBLES, "\u200c", "\u200d", "|", "||", "।", "न\u093c", "\u0929", "\u093c", "e\u0301", "a", "\x07",
     "\ufe0f", "❤", "\u0654", "ه", "ۀ", "ك", "١", "\ufeeb", "ـ", "\u200f"]
)  # fmt: skip
_SCRIPTS = {"nepali": (0x0900, 0x097F), "urdu": (0x0600, 0x06FF), "plain": (0x0D80, 0x0DFF)}


@pytest.mark.parametrize("name", sorted(_SCRIPTS))
def test_fast_normalisation_equals_every_pass(name: str) -> None:
    """The fast path and the skipped passes change nothing (issue 30, item 3: for every profile)."""
    profile = get_profile(name)
    low, high = _SCRIPTS[name]

    @settings(max_examples=400, deadline=None)
    @given(st.lists(st.characters(min_codepoint=low, max_codepoint=high) | _TRICKY, max_size=30).map("".join))
    def check(text: str) -> None:
        assert profile.normalize(text) == _normalize_reference(text, profile)

    check()
    assert normalize_text("न\ufe0f\u093c") == _normalize_reference("न\ufe0f\u093c", NEPALI) == "\u0929"


def test_whitespace_split_agrees_with_regex() -> None:
    space = re.compile(r"\s")
    assert all(bool(space.match(chr(c))) == chr(c).isspace() for c in range(0x3100))


def test_json_surrogate_escape_across_chunks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sources, "_SCAN_CHUNK_BYTES", 16)
    for pad in range(20):
        path = tmp_path / f"t{pad}.jsonl"
        path.write_bytes(b'{"text": "' + b"x" * pad + b'\\udc80", "label": 1}\n')
        assert sources._may_hold_undecodable(WatchedSource(path), json_escapes=True), pad
        path.write_bytes(b'{"text": "' + b"x" * pad + b'", "label": 1}\n')
        assert not sources._may_hold_undecodable(WatchedSource(path), json_escapes=True), pad
    path.write_bytes("ठीक छ,1\n".encode() * 10 + b"\xff\n")
    assert sources._may_hold_undecodable(WatchedSource(path))


# --- overlap counts -----------------------------------------------------------------------


def test_overlap_counts_equal_a_plain_reference(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Batched, fingerprinted counts equal counting with Python sets over every row."""
    import json

    from nlue.data import config_builder
    from nlue.data.build import build_repo
    from nlue.data.report import BuildOptions, TaskSources
    from nlue.text.normalize import loose_text

    monkeypatch.setattr(config_builder, "DEDUP_BATCH_ROWS", 7)  # repeats across many small batches
    rng = np.random.default_rng(3)
    # Few distinct texts, some differing only in punctuation, digits or case: many overlaps of every kind.
    texts = ["क ख", "क ख।", "क, ख", "ग १२", "ग 12", "Ram gayo", "ram gayo!", "घर", "घर ।", "नदी", "पहाड"]

    def rows(n: int, pool: int) -> list[dict]:
        picks = rng.integers(0, pool, size=(n, 2))
        return [{"premise": texts[a], "hypothesis": texts[b], "label": int(rng.integers(0, 3))} for a, b in picks]

    # Train draws from fewer texts, so that some fields of the other splits are not in train.
    data = {"train": rows(40, 8), "validation": rows(40, len(texts)), "test": rows(80, len(texts))}
    files = {}
    for split, records in data.items():
        path = tmp_path / f"{split}.jsonl"
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
        files[split] = [path]
    # The reference below keeps an input's first label (--conflicts keep-first); the overlap counts are the point.
    options = BuildOptions(show_progress=False, conflicts="keep-first")
    result = build_repo([TaskSources(TASKS["mnli"], files)], tmp_path / "out", options)

    def pair(r: dict) -> tuple[str, str]:
        return normalize_text(r["premise"]), normalize_text(r["hypothesis"])

    def loose(r: dict) -> tuple[str, str]:
        return tuple(loose_text(t) for t in pair(r))

    train = {pair(r) for r in data["train"]}
    validation: dict[tuple[str, str], int] = {}
    for r in data["validation"]:
        if pair(r) not in train:
            validation.setdefault(pair(r), r["label"])
    train_loose = {loose(r) for r in data["train"]}
    train_fields = [{p[i] for p in train} for i in range(2)]

    def expected(kept: list[dict]) -> dict:
        return {
            "with_train": sum(pair(r) in train for r in kept),
            "with_validation": sum(pair(r) in validation for r in kept),
            "near": sum(loose(r) in train_loose and pair(r) not in train for r in kept),
            "fields": {
                name: sum(pair(r)[i] in train_fields[i] for r in kept)
                for i, name in enumerate(["premise", "hypothesis"])
            },
        }

    first_label: dict[tuple[str, str], int] = {}
    same = other = 0
    for r in data["test"]:
        if pair(r) in first_label:
            same += first_label[pair(r)] == r["label"]
            other += first_label[pair(r)] != r["label"]
        else:
            first_label[pair(r)] = r["label"]
    kept_validation = [{"premise": p, "hypothesis": h} for p, h in validation]
    splits = result.configs["mnli"].splits
    for name, kept in (("test", data["test"]), ("validation", kept_validation)):
        counts = splits[name].overlap
        got = {
            "with_train": counts.with_train,
            "with_validation": counts.with_validation,
            "near": counts.near_duplicates_of_train,
            "fields": counts.fields_shared_with_train,
        }
        want = expected(kept)
        if name == "validation":
            want["with_validation"] = 0  # validation is not compared with itself
        assert got == want, name
    assert splits["test"].kept == len(data["test"])
    assert (splits["test"].kept_duplicates, splits["test"].kept_conflicting_duplicates) == (same, other)
    assert splits["validation"].kept == len(validation)


def _loose_reference(text: str) -> str:
    """The near-duplicate folding written out character by character."""
    digits = {chr(0x0966 + d): str(d) for d in range(10)}
    kept = (
        digits.get(c, c)
        for c in text
        if not unicodedata.category(c).startswith("P") and c not in (" ", "\u200c", "\u200d", "\ufe0e", "\ufe0f")
    )
    return "".join(kept).casefold()


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.lists(
            st.characters(min_codepoint=0x0900, max_codepoint=0x097F)
            | st.sampled_from([" ", "।", "॥", ",", "“", "”", "-", "\u200c", "\u200d", "A", "ß", "Σ", "ﬁ", "١", "\x1f"])
            | st.characters(),
            max_size=20,
        ).map("".join),
        max_size=12,
    )
)
def test_loose_texts_equal_folding_one_character_at_a_time(texts: list[str]) -> None:
    assert normalize.loose_texts(texts) == [_loose_reference(t) for t in texts]


def test_no_punctuation_or_case_beyond_plane_1() -> None:
    """What lets the folding tables scan only the first two planes."""
    import sys

    for code in range(normalize._FOLDING_CODE_POINTS, sys.maxunicode + 1):
        character = chr(code)
        assert not unicodedata.category(character).startswith("P"), hex(code)
        assert character.casefold() == character, hex(code)


def test_loose_texts_in_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(normalize, "_FOLD_CHUNK", 3)
    texts = [f"क, ख {i}।" for i in range(10)] + ["Straße"]
    assert normalize.loose_texts(texts) == [_loose_reference(t) for t in texts]
