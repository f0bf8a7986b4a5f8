"""Language profiles choose the text rules (issue 30, item 3): nepali, urdu, plain, and any one declared.

Each test below fails on the code before profiles existed (the module did not import; Urdu exams
kept control characters and folded every Arabic heh; there was no way to declare a script's rules).
"""

from __future__ import annotations

import json
from pathlib import Path
from types import MappingProxyType

import pyarrow.parquet as pq
import pytest

from nlue.data.build import build_repo
from nlue.data.report import BuildOptions, BuildResult, TaskSources
from nlue.errors import NlueError
from nlue.registry.tasks import TASK_NAMES, TASKS, get_task
from nlue.text import normalize
from nlue.text.profiles import (
    NEPALI,
    PLAIN,
    URDU,
    get_profile,
    normalize_text,
    profile_names,
    profile_of,
    register_profile,
    unregister_profile,
)
from nlue.text.rules import LanguageProfile

from .profiled_tasks import SINHALA, profiled


@pytest.fixture
def sinhala() -> LanguageProfile:
    register_profile(SINHALA)
    yield SINHALA
    unregister_profile(SINHALA.name)


def test_profiles_are_found_by_name() -> None:
    """issue 30, item 3: the shipped profiles by name; an unknown name says which exist."""
    assert {"nepali", "urdu", "plain"} <= set(profile_names())
    assert get_profile("Urdu") is URDU and get_profile(PLAIN) is PLAIN
    with pytest.raises(NlueError, match=r"unknown language profile 'klingon'; known profiles: nepali, plain, urdu"):
        get_profile("klingon")


def test_normalize_text_is_the_nepali_profile_unless_told() -> None:
    """issue 30, item 3: every caller of normalize_text(text) keeps today's rules; a profile is one argument."""
    text = "नेपाल|  \u200bकाठमाडौं | كتاب"
    assert normalize.normalize_text(text) == NEPALI.normalize(text) == "नेपाल। काठमाडौं। كتاب"
    assert normalize.normalize_text(text, profile="urdu") == URDU.normalize(text) == "नेपाल| काठमाडौं | کتاب"
    assert normalize_text(text, PLAIN) == "नेपाल| \u200bकाठमाडौं | كتاب"


def test_each_shipped_task_has_its_profile() -> None:
    """issue 30, item 3: NLUE and neDIOM nepali, the Nepali exam nepali, the Urdu exam urdu; a task's field wins."""
    assert {profile_of(TASKS[name]).name for name in TASK_NAMES} == {"nepali"}
    assert profile_of(get_task("nediom")) is NEPALI and profile_of(get_task("mcq_ne")) is NEPALI
    assert profile_of(get_task("mcq_ur")) is URDU
    assert profile_of(profiled(TASKS["sa"], "plain")) is PLAIN
    with pytest.raises(NlueError, match="unknown language profile 'klingon'"):
        profile_of(profiled(TASKS["sa"], "klingon"))


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("كتاب علي مصطفى", "کتاب علی مصطفی"),  # Arabic kaf, yeh and alef maksura -> keheh, Farsi yeh
        ("هم ه", "ہم ہ"),  # a word-initial or lone Arabic heh is heh goal
        ("کها ساته مدرسه", "کها ساته مدرسه"),  # inside or ending a word it may be either heh: kept
        ("ہم بھی کہا کھا", "ہم بھی کہا کھا"),  # heh goal and do-chashmi heh are distinct letters, kept
        ("جلوهٔ آزادیٔ ۀ", "جلوۂ آزادئ ۂ"),  # heh/yeh + hamza above, heh with yeh above
        ("قرة", "قرۃ"),  # teh marbuta -> teh marbuta goal
        ("١٩٤٧ ۱۹۴۷ 1947", "۱۹۴۷ ۱۹۴۷ 1947"),  # Arabic-Indic -> Urdu digits; ASCII kept
        ("ہم\u200cعمر", "ہم\u200cعمر"),  # ZWNJ between two Arabic letters is kept
        ("ہم\u200c\u200cعمر ہم \u200c", "ہمعمر ہم"),  # a run of joiners, or a stray one, is not
        ("\ufeeb\ufef4\ufe8e", "ہیا"),  # presentation forms (PDF text) -> letters
        ("بـــات\x00\x07 \u202bسوال\u202c\u200f", "بات سوال"),  # tatweel, controls, direction characters
        ("A|B ॥ 👩\u200d🌾 ❤\ufe0f ک\ufe0f", "A|B ॥ 👩\u200d🌾 ❤\ufe0f ک"),  # no danda rules; emoji as Nepali
    ],
)
def test_urdu_unifies_what_urdu_corpora_mix(given: str, expected: str) -> None:
    """issue 30, item 3: the urdu profile's folds (sources cited in nlue.text.profiles)."""
    assert URDU.normalize(given) == expected
    assert URDU.normalize(expected) == expected


def test_plain_touches_nfc_controls_and_spaces_only() -> None:
    """issue 30, item 3: plain keeps joiners, direction marks, pipes and letters as written."""
    text = " ශ්\u200dරී\x00 e\u0301\t|\u200f ك\u200b "
    assert PLAIN.normalize(text) == "ශ්\u200dරී é |\u200f ك\u200b"


def test_nepali_selector_between_letter_and_mark_normalises_once() -> None:
    """issue 30, item 3 (found by the per-profile properties): removing an orphaned selector from between a
    letter and its nukta let NFC fuse them only on a second pass; one pass does it now."""
    once = normalize_text("न\ufe0f\u093c")
    assert once == "\u0929" == normalize_text(once)


def test_a_declaration_is_checked() -> None:
    """issue 30, item 3: a declaration that could not normalise once and for all is refused, saying why."""
    with pytest.raises(NlueError, match="the result holds another fold's text"):
        LanguageProfile(name="chain", summary="", rules="", folds=MappingProxyType({"a": "b", "b": "c"}))
    with pytest.raises(NlueError, match="a name is lower-case"):
        LanguageProfile(name="Bad Name", summary="", rules="")
    with pytest.raises(NlueError, match="need the script's characters"):
        LanguageProfile(name="nojoin", summary="", rules="", tidy_joiners=True)
    with pytest.raises(NlueError, match="already registered"):
        register_profile(LanguageProfile(name="urdu", summary="", rules=""))


def _built_rows(result: BuildResult, config: str, split: str) -> list[dict]:
    return pq.read_table(result.repo_dir / config / f"{split}-00000-of-00001.parquet").to_pylist()


def test_a_new_profile_is_one_declaration(tmp_path: Path, sinhala: LanguageProfile) -> None:
    """issue 30, item 3: a profile declared in a few lines builds a task, both engines alike, and the card says so."""
    task = profiled(TASKS["sa"], sinhala.name)
    words = ["ශ්\u200dරී ලංකාව", "හොඳ පොත", "නරක කෑම", "ලස්සන ගම", "පරණ පාර", "අලුත් ගෙදර"]
    folder = tmp_path / "src"
    folder.mkdir()
    files = {}
    for split, count in (("train", 24), ("validation", 6), ("test", 6)):
        rows = [
            {"text": f"{words[i % 6]} {split} {i}" + ("\u200d" if i % 3 == 0 else "  "), "label": i % 2}
            for i in range(count)
        ]
        path = folder / f"{split}.jsonl"
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
        files[split] = [path]
    built = {}
    for engine in ("rows", "columnar"):
        options = BuildOptions(show_progress=False, engine=engine, license="apache-2.0")
        result = build_repo([TaskSources(task, files)], tmp_path / engine, options)
        built[engine] = {p.relative_to(tmp_path / engine): p.read_bytes() for p in (tmp_path / engine).rglob("*")
                         if p.is_file()}  # fmt: skip
    assert built["rows"] == built["columnar"]
    texts = [row["text"] for row in _built_rows(result, "sa", "train")]
    assert "ශ්\u200dරී ලංකාව train 0" in texts  # the conjunct's joiner kept, the stray one at the end removed
    assert all("  " not in text and not text.endswith("\u200d") for text in texts)
    card = (result.repo_dir / "README.md").read_text(encoding="utf-8")
    assert f"the `{sinhala.name}` language profile: {sinhala.summary}" in card
    assert sinhala.rules in card


def test_cards_name_each_configs_profile(exam_build: BuildResult, sample_build: BuildResult) -> None:
    """issue 30, item 3: each config's section names its profile; the build section lists each profile's rules."""
    exams = (exam_build.repo_dir / "README.md").read_text(encoding="utf-8")
    assert exams.count("- **Text normalisation:** the `nepali` language profile:") == 1
    assert exams.count("- **Text normalisation:** the `urdu` language profile:") == 1
    assert "Each text field of config `mcq_ur` is normalised by the `urdu` language profile:" in exams
    assert URDU.rules in exams and NEPALI.rules in exams
    nlue = (sample_build.repo_dir / "README.md").read_text(encoding="utf-8")
    assert nlue.count("the `nepali` language profile:") == len(TASK_NAMES) + 1
    assert "Each text field of every config is normalised by the `nepali` language profile:" in nlue
    assert "urdu" not in nlue


def test_urdu_sample_is_built_as_written(exam_build: BuildResult) -> None:
    """issue 30, item 3: our Urdu sample is written in Urdu letters, so the urdu profile leaves every text as is."""
    from nlue.data.sample import sample_data_dir

    for split in ("demo", "test"):
        source = (sample_data_dir() / "mcq_ur" / f"{split}.jsonl").read_text(encoding="utf-8").splitlines()
        given = {item["id"]: item for item in map(json.loads, source)}
        for row in _built_rows(exam_build, "mcq_ur", split):
            item = given[row["id"]]
            assert row["question"] == item["question"]
            assert [row[letter] for letter in "ABCD"] == [item["options"][letter] for letter in "ABCD"]


def test_urdu_exam_rows_follow_the_urdu_profile(tmp_path: Path) -> None:
    """issue 30, item 3: an Urdu exam's question and options are normalised by the urdu profile (controls went
    into the Parquet before, and every Arabic heh was folded)."""
    item = {
        "id": "ur-1",
        "question": "\u202bكيا يه مدرسه \x00هے\u202c؟",
        "options": {"A": "١", "B": "۲", "C": "3", "D": "کها"},
        "correct_key": "D",
        "subdomain": "general knowledge",
        "level": "SSC-I",
    }
    folder = tmp_path / "src" / "mcq_ur"
    folder.mkdir(parents=True)
    (folder / "test.jsonl").write_text(json.dumps(item, ensure_ascii=False) + "\n", encoding="utf-8")
    task = get_task("mcq_ur")
    options = BuildOptions(name="mcq", show_progress=False, license="apache-2.0")
    result = build_repo([TaskSources(task, {"test": [folder / "test.jsonl"]})], tmp_path / "out", options)
    (row,) = _built_rows(result, "mcq_ur", "test")
    assert row["question"] == "کیا یه مدرسه ہے؟"
    assert [row[letter] for letter in "ABCD"] == ["۱", "۲", "3", "کها"] and row["correct_option"] == "کها"
