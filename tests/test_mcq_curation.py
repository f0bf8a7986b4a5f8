"""Exam curation as UrduMMLU did it: normalisation, duplicates, near duplicates, annotation, agreement, the pool."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nlue.data.sample import sample_split
from nlue.errors import SourceError
from nlue.pipelines.mcq_annotation import (
    COLUMNS,
    Annotation,
    agreement,
    apply_inclusion_rule,
    export_sheets,
    import_sheets,
)
from nlue.pipelines.mcq_cli import main
from nlue.pipelines.mcq_curation import (
    DEFAULT_QUESTION_OVERLAP,
    DEFAULT_SHARED_OPTIONS,
    NearDuplicateRule,
    curate,
    overlapping,
    split_pool,
)
from nlue.registry.kinds.mcq_text import normalize_mcq_text, normalize_urdu
from nlue.registry.tasks import get_task
from nlue.text.normalize import normalize_text

NE, UR = get_task("mcq_ne"), get_task("mcq_ur")


# ---------------------------------------------------------------- normalisation
def test_urdu_directional_marks_go_and_look_alikes_fold() -> None:
    assert normalize_urdu("\u202bسوال\u202c\u200f \u2066جواب\u2069\u061c") == "سوال جواب"
    assert normalize_urdu("كتاب") == "کتاب"  # Arabic kaf -> keheh
    assert normalize_urdu("علي") == "علی" and normalize_urdu("مصطفى") == "مصطفی"  # yeh, alef maksura -> farsi yeh
    # Arabic heh -> heh goal where a word starts; inside or ending a word it may be either Urdu heh: kept
    # (issue 30, item 3; see nlue.text.profiles for the sources the rule follows).
    assert normalize_urdu("هم") == "ہم" and normalize_urdu("مدرسه") == "مدرسه" and normalize_urdu("کها") == "کها"
    assert normalize_urdu("قرة") == "قرۃ"  # teh marbuta -> teh marbuta goal
    assert normalize_urdu("١٩٤٧ اور 1947") == "۱۹۴۷ اور 1947"  # Arabic-Indic digits -> Urdu; ASCII kept
    assert normalize_urdu("\ufeeb\ufef4\ufe8e") == normalize_urdu("ہیا")  # presentation forms (PDF text)
    assert normalize_urdu("بـــات") == "بات"  # tatweel
    assert normalize_urdu("ہم\u200cعمر") == "ہم\u200cعمر" and normalize_urdu("ہم \u200c") == "ہم"


def test_nepali_is_normalised_as_the_builder_does_and_blanks_are_one() -> None:
    text = "नेपालको  राजधानी\u200b कुन हो?"
    assert normalize_mcq_text(text, "ne") == normalize_text(text)
    assert normalize_mcq_text("राजधानी ______ हो। …… .... … ...", "ne") == "राजधानी ____ हो। ____ ____ … ..."
    assert normalize_mcq_text("دارالحکومت ___ ہے", "ur") == "دارالحکومت ____ ہے"


URDUISH = st.text(
    alphabet=st.sampled_from([*"یيىکكہهۀۂەۃة۰١٩ٔ ـ\u200c\u200d\u200e\u202bابھ_.", "\ufef4", "\u0654"]),
    max_size=30,
)


@settings(max_examples=300, deadline=None)
@given(URDUISH)
def test_urdu_normalisation_is_idempotent(text: str) -> None:
    once = normalize_mcq_text(text, "ur")
    assert normalize_mcq_text(once, "ur") == once


# ---------------------------------------------------------------- curation
def _item(item_id: str, question: str, options: list[str], key: str, **extra) -> dict:
    return {"id": item_id, "question": question, "options": dict(zip("ABCD", options, strict=True)),
            "correct_key": key, "subdomain": "geography", "level": "Grade 10", **extra}  # fmt: skip


def _records(items: list[dict]) -> list[tuple[str, int, dict]]:
    return [("raw.jsonl", row, item) for row, item in enumerate(items, start=1)]


RIVERS = ["कोशी", "कर्णाली", "गण्डकी", "बागमती"]
LONGEST = "नेपालको सबैभन्दा लामो नदी कुन हो?"


def test_exact_duplicates_merge_when_answers_agree_and_drop_when_they_conflict() -> None:
    items = [
        _item("a", LONGEST, RIVERS, "B", source=[{"name": "web 1", "url": ""}]),
        _item("b", LONGEST, ["कर्णाली", "कोशी", "बागमती", "गण्डकी"], "A", source="web 2"),  # options reordered
        _item("c", "नेपालको राष्ट्रिय पक्षी कुन हो?", ["डाँफे", "मयूर", "कालिज", "ढुकुर"], "A"),
        _item("d", "नेपालको राष्ट्रिय पक्षी  कुन हो?", ["डाँफे", "मयूर", "कालिज", "ढुकुर"], "B"),  # conflicts with c
        _item("e", LONGEST, RIVERS, "E"),
    ]
    kept, report = curate(_records(items), NE)
    assert [item["id"] for item in kept] == ["a"]
    assert [s["name"] for s in kept[0]["source"]] == ["web 1", "web 2"]
    assert report.merged == [{"kept": "a", "merged": ["b"]}]
    assert dict(report.dropped) == {"merged_duplicate": 1, "conflicting_duplicate": 2, "invalid:correct_key": 1}
    assert report.to_dict()["read"] == 5 and report.to_dict()["kept"] == 1
    bad = next(drop for drop in report.drops if drop["reason"] == "invalid:correct_key")
    assert bad["where"] == "raw.jsonl, row 5" and "A, B, C or D" in bad["detail"]


def test_near_duplicates_are_conservative_and_every_pair_is_reported() -> None:
    long_question = "तलका मध्ये कुन नदी नेपालको सबैभन्दा लामो नदी मानिन्छ र कर्णाली प्रदेशबाट बग्छ?"
    near = long_question.replace("मानिन्छ", "मानिन्छ,")  # punctuation only: the same tokens once folded
    items = [
        _item("a", long_question, RIVERS, "B"),
        _item("b", near, ["कोशी", "कर्णाली", "गण्डकी", "राप्ती"], "B"),  # 3 of 4 options shared, same answer
        _item("c", "तलका मध्ये कुन नदी नेपालको सबैभन्दा लामो नदी मानिँदैन र कर्णाली प्रदेशबाट बग्दैन?", RIVERS, "A"),
        _item("d", long_question.replace("?", " होइन?"), RIVERS, "A"),  # a negation: never merged
        _item("e", near.replace("मानिन्छ,", "मानिन्छ ।"), RIVERS, "C"),  # near a, but another answer
    ]
    kept, report = curate(_records(items), NE)
    assert [item["id"] for item in kept] == ["a", "c", "d", "e"]
    assert report.near_duplicates == [{"kept": "a", "other": "b", "question_overlap": 1.0, "shared_options": 3}]
    assert report.near_duplicate_answer_conflicts == [
        {"kept": "a", "other": "e", "question_overlap": 1.0, "shared_options": 4}
    ]
    assert (DEFAULT_QUESTION_OVERLAP, DEFAULT_SHARED_OPTIONS) == (0.85, 3)
    strict_rule = NearDuplicateRule(question_overlap=1.0, shared_options=4)
    kept, report = curate(_records(items), NE, rule=strict_rule)
    assert len(kept) == 5 and not report.near_duplicates
    with pytest.raises(ValueError, match="shared options"):
        NearDuplicateRule(shared_options=5)


def test_numeric_keys_are_converted_only_when_asked() -> None:
    items = [_item("a", LONGEST, RIVERS, 1)]
    assert curate(_records(items), NE)[1].dropped == {"invalid:correct_key": 1}
    assert curate(_records(items), NE, numeric_keys=0)[0][0]["correct_key"] == "B"
    assert curate(_records(items), NE, numeric_keys=1)[0][0]["correct_key"] == "A"


# ---------------------------------------------------------------- annotation
def test_inclusion_rule_and_drop_reasons() -> None:
    items = [_item(f"i{n}", f"प्रश्न {n}", RIVERS, "A", domain="Social Sciences") for n in range(6)]
    first = {"i0": Annotation("A"), "i1": Annotation("B"), "i2": Annotation("A", flag="ambiguous"),
             "i3": Annotation("unsure"), "i4": Annotation(None), "i5": Annotation("C")}  # fmt: skip
    second = {"i0": Annotation("A"), "i1": Annotation("C"), "i2": Annotation("A"), "i3": Annotation("A"),
              "i4": Annotation("A"), "i5": Annotation("C")}  # fmt: skip
    kept, report = apply_inclusion_rule(items, first, second)
    assert [(item["id"], item["correct_key"], item["correct_option"]) for item in kept] == [
        ("i0", "A", "कोशी"), ("i5", "C", "गण्डकी"),
    ]  # fmt: skip
    assert report["dropped_by_reason"] == {"incomplete": 1, "flagged": 1, "unsure": 1, "disagreement": 1}
    assert report["key_changed_by_consensus"] == [{"id": "i5", "given": "A", "consensus": "C"}]
    # Letter pairs: i0 (A, A), i1 (B, C), i2 (A, A), i5 (C, C): 3 of 4 agree.
    assert report["agreement"]["items_compared"] == 4
    assert report["agreement"]["observed"] == pytest.approx(0.75)
    assert report["agreement"]["kappa_fixed_chance"] == pytest.approx((0.75 - 0.25) / 0.75)


def test_kappa_by_hand() -> None:
    pairs = [("A", "A")] * 4 + [("B", "B")] * 3 + [("C", "C"), ("D", "D"), ("A", "B")]
    result = agreement(pairs)
    assert result["observed"] == pytest.approx(0.9)
    assert result["kappa_fixed_chance"] == pytest.approx(0.65 / 0.75)  # 0.8667
    # Cohen: first A5 B3 C1 D1, second A4 B4 C1 D1 -> chance (20 + 12 + 1 + 1) / 100 = 0.34.
    assert result["cohen_kappa"] == pytest.approx((0.9 - 0.34) / 0.66)
    paper = agreement([("A", "A")] * 8998 + [("A", "B")] * 1002)  # the paper's observed 89.98%
    assert paper["kappa_fixed_chance"] == pytest.approx(0.8664, abs=1e-4)  # its kappa 0.8663, rounded
    assert agreement([])["observed"] is None


def test_sheets_round_trip_without_showing_keys(tmp_path: Path) -> None:
    items = [_item(f"i{n}", f"प्रश्न {n}", RIVERS, "B", domain="Social Sciences") for n in range(3)]
    first, second = export_sheets(items, tmp_path)
    with first.open(encoding="utf-8-sig", newline="") as handle:
        rows = list(csv.reader(handle))
    assert tuple(rows[0]) == COLUMNS and "correct_key" not in rows[0] and len(rows) == 4
    for path, answers in ((first, ["B", "b", "unsure"]), (second, ["B", "B", "B"])):
        with path.open("w", encoding="utf-8-sig", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(COLUMNS)
            for row, answer in zip(rows[1:], answers, strict=True):
                writer.writerow([*row[:9], answer, "", ""])
    kept, report = import_sheets(items, first, second)
    assert [item["id"] for item in kept] == ["i0", "i1"] and report["dropped_by_reason"]["unsure"] == 1
    with second.open("a", encoding="utf-8", newline="") as handle:
        csv.writer(handle).writerow(["i9", *[""] * 8, "Z", "", ""])
    with pytest.raises(SourceError, match="row 4, field 'item_id'"):
        import_sheets(items, first, second)


# ---------------------------------------------------------------- the pool
def test_the_pool_is_balanced_seeded_and_disjoint() -> None:
    items = sample_split(NE, "test")
    demo, test = split_pool(items, 8, seed=42)
    assert len(demo) == 8 and len(test) == len(items) - 8
    assert sorted(item["correct_key"] for item in demo) == list("AABBCCDD")
    assert overlapping(demo, test) == [] and split_pool(items, 8, seed=42) == (demo, test)
    repeated = [*items, {**items[0], "id": "again"}]
    demo, test = split_pool(repeated, 8, seed=0)
    assert overlapping(demo, test) == []  # a repeat of a pool item follows it into the pool
    with pytest.raises(ValueError, match="between 1 and"):
        split_pool(items, len(items))


def test_the_command_line_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    raw = [*sample_split(UR, "test"), {**sample_split(UR, "test")[0], "id": "copy"}]
    source = tmp_path / "raw.jsonl"
    source.write_text("".join(json.dumps(item, ensure_ascii=False) + "\n" for item in raw), encoding="utf-8")
    assert main(["curate", "--task", "mcq_ur", "--input", str(source), "--out", str(tmp_path / "cur")]) == 0
    report = json.loads((tmp_path / "cur" / "curation_report.json").read_text(encoding="utf-8"))
    assert report["kept"] == len(raw) - 1 and report["dropped_by_reason"] == {"merged_duplicate": 1}
    items_path = str(tmp_path / "cur" / "items.jsonl")
    assert main(["split", "--input", items_path, "--out", str(tmp_path / "src" / "mcq_ur"), "--demo-size", "8"]) == 0
    assert (tmp_path / "src" / "mcq_ur" / "demo.jsonl").read_text(encoding="utf-8").count("\n") == 8
    assert main(["export-sheets", "--input", items_path, "--out", str(tmp_path / "sheets")]) == 0
    sheets = [str(tmp_path / "sheets" / f"annotator_{n}.csv") for n in (1, 2)]
    code = main(["import-sheets", "--input", items_path, "--sheets", *sheets, "--out", str(tmp_path / "agreed")])
    assert code == 0  # empty sheets: every item incomplete
    report = json.loads((tmp_path / "agreed" / "annotation_report.json").read_text(encoding="utf-8"))
    assert report["retained"] == 0 and report["dropped_by_reason"]["incomplete"] == report["annotated"]
    assert main(["curate", "--task", "mcq_ur", "--input", str(tmp_path / "missing.jsonl"), "--out", "x"]) == 2
    assert "file not found" in capsys.readouterr().err
