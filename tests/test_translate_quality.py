"""The script filter on its own: Devanagari share, other scripts, Latin words kept for review."""

from __future__ import annotations

import pytest

from nlue.translate.quality import ScriptReport, profile, script_of, script_problem


def test_scripts_of_letters_signs_digits_and_punctuation() -> None:
    assert [script_of(c) for c in ("क", "ि", "्", "१", "।", "a", "é", "ж", "ক", " ", "7")] == [
        "devanagari", "devanagari", "devanagari", None, None, "latin", "latin", "CYRILLIC", "BENGALI", None, None,
    ]  # fmt: skip
    found = profile(["नेपाल ABC", "१२३ ।"])
    assert (found.letters, found.devanagari, found.latin) == (8, 5, 3)
    assert found.devanagari_share == pytest.approx(5 / 8)


def test_rows_pass_or_fail_on_the_share_over_all_their_fields() -> None:
    assert script_problem({"text": "आज पानी पर्‍यो।"}) is None
    # a short field kept in Latin letters (a brand) does not sink its row
    ad = {"query": "सस्तो जुत्ता", "ad_title": "RunFast", "ad_description": "हल्का दौडने जुत्ता, घरमै पठाइन्छ"}
    assert script_problem(ad) is None
    assert script_problem({"text": "It rained today."}).startswith("untranslated: 0% of the letters")
    half = script_problem({"text": "आज पानी rained today"})
    assert half is not None and half.startswith("untranslated")
    assert script_problem({"text": "It rained today."}, min_devanagari=0.0) is None
    assert script_problem({"text": "आज পানি"}) == "other script: letters of bengali (4)"
    assert script_problem({"text": "१२३ ।"}).startswith("untranslated")  # no letters at all: nothing translated


def test_latin_words_of_kept_rows_are_counted_for_review() -> None:
    report = ScriptReport()
    report.add({"text": "मैले iPhone किनें"})
    report.add({"text": "मैले iPhone र Samsung हेरें"})
    report.add({"text": "मैले केही किनिनँ"})
    assert report.to_dict() == {
        "rows_with_latin_words": 2,
        "most_frequent_latin_words": {"iPhone": 2, "Samsung": 1},
    }
