"""Text normalisation rules (see nlue.text.normalize)."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nlue.text.normalize import normalize_answer, normalize_text


def test_nfc_makes_decomposed_and_composed_equal() -> None:
    composed = "\u0929"  # DEVANAGARI LETTER NNNA (precomposed nukta form)
    decomposed = "\u0928\u093c"
    assert normalize_text(decomposed) == normalize_text(composed) == unicodedata.normalize("NFC", composed)


def test_whitespace_is_collapsed_and_stripped() -> None:
    assert normalize_text("  म\t\tघर\u00a0 जान्छु \n") == "म घर जान्छु"


def test_invisible_characters_are_removed() -> None:
    assert normalize_text("\ufeffनमस्ते\u200b संसार\u00ad\u2060") == "नमस्ते संसार"


def test_joiners_kept_inside_devanagari_only() -> None:
    eyelash_ra = "गर\u094d\u200dयो"  # ZWJ selects the eyelash form: meaningful
    assert normalize_text(eyelash_ra) == eyelash_ra
    assert normalize_text("\u200dनमस्ते\u200c") == "नमस्ते"
    assert normalize_text("abc\u200cdef") == "abcdef"


def test_pipe_after_devanagari_becomes_danda() -> None:
    assert normalize_text("म घर गएँ | ऊ आयो ||") == "म घर गएँ। ऊ आयो॥"
    assert normalize_text("a | b") == "a | b"  # a pipe in Latin text is left alone


def test_digits_and_dandas_are_kept_as_written() -> None:
    assert normalize_text("२०८१ सालमा 5 जना आए।") == "२०८१ सालमा 5 जना आए।"


def test_answers_lose_surrounding_punctuation_and_danda() -> None:
    assert normalize_answer(' "काठमाडौं।" ') == "काठमाडौं"
    assert normalize_answer("(पानी),") == "पानी"


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(min_codepoint=0x0900, max_codepoint=0x097F) | st.sampled_from(" \t\u200b|")))
def test_normalisation_is_idempotent(text: str) -> None:
    once = normalize_text(text)
    assert normalize_text(once) == once
    assert once == once.strip() and "  " not in once


@pytest.mark.parametrize("text", ["", "   ", "\u200b\u200b"])
def test_blank_becomes_empty(text: str) -> None:
    assert normalize_text(text) == ""


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("नमस्ते\ufe0f", "नमस्ते"),  # orphaned, as scraped text often has it
        ("\ufe0fनमस्ते", "नमस्ते"),
        ("धन्यवाद \ufe0f।", "धन्यवाद ।"),  # after a space: orphaned
        ("राम्रो\ufe0e छ", "राम्रो छ"),  # the text-style selector, orphaned too
        ("ok\ufe0f!", "ok!"),
        ("1\ufe0f बजे", "1 बजे"),  # a digit is an emoji base only in a keycap
        ("❤\ufe0f\ufe0f", "❤\ufe0f"),  # a selector after a selector has no emoji before it
    ],
)
def test_orphaned_variation_selectors_are_dropped(raw: str, expected: str) -> None:
    assert normalize_text(raw) == expected


@pytest.mark.parametrize(
    "text",
    [
        "❤\ufe0f",  # heart, emoji presentation
        "मलाई मन पर्‍यो ❤\ufe0f",
        "☺\ufe0e",  # text presentation
        "©\ufe0f ™\ufe0f ‼\ufe0f ↔\ufe0f ℹ\ufe0f",  # emoji bases outside the Symbol categories
        "👍🏽",  # emoji with a skin-tone modifier: no selector, untouched
        "👍\ufe0f",
        "1\ufe0f\u20e3 #\ufe0f\u20e3 *\ufe0f\u20e3",  # keycaps
        "🏳\ufe0f",  # a selector after a supplementary-plane pictograph
    ],
)
def test_selectors_after_a_real_emoji_are_kept(text: str) -> None:
    assert normalize_text(text) == text


def test_loose_folding_ignores_emoji_presentation() -> None:
    from nlue.text.normalize import loose_text

    # Whether an emoji was written with its selector does not make a different item.
    assert loose_text(normalize_text("राम्रो ❤\ufe0f")) == loose_text(normalize_text("राम्रो ❤"))
    assert loose_text(normalize_text("राम्रो\ufe0f")) == loose_text("राम्रो")


@settings(max_examples=300, deadline=None)
@given(
    st.text(
        alphabet=st.sampled_from(
            ["क", "्", "1", "#", "a", " ", "।", "|", "❤", "👍", "🏽", "\ufe0f", "\ufe0e", "\u20e3", "\u200d"]
        )
    )
)
def test_selector_rule_is_idempotent_and_leaves_no_orphan(text: str) -> None:
    once = normalize_text(text)
    assert normalize_text(once) == once
    for position, character in enumerate(once):
        if character in "\ufe0e\ufe0f":
            before = once[position - 1] if position else ""
            keycap = before in "1#" and once[position + 1 : position + 2] == "\u20e3"
            assert before in ("❤", "👍", "🏽") or keycap, repr(once)


@pytest.mark.parametrize(("text", "expected"), [("क| |", "क।।"), ("क|||", "क॥।"), ("क ||", "क॥"), ("a | b", "a | b")])
def test_pipes_become_dandas_in_one_pass(text: str, expected: str) -> None:
    assert normalize_text(text) == expected and normalize_text(expected) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("PrimeHD || माओ", "PrimeHD || माओ"),  # a Latin double pipe, not half a danda
        ("a|| b", "a|| b"),
        ("x ||| y", "x ||| y"),
        ("ok || राम्रो छ ||", "ok || राम्रो छ॥"),  # the pipes after Devanagari still become a double danda
        ("राम्रो || PrimeHD ||", "राम्रो॥ PrimeHD ||"),
        ("क || ||", "क॥॥"),
        ("क।|", "क।।"),  # after a danda (Devanagari punctuation)
    ],
)
def test_pipes_after_other_text_stay_pipes(text: str, expected: str) -> None:
    """issue 29, item 15: "PrimeHD || माओ" became "PrimeHD |। माओ" (the second pipe read as a danda)."""
    assert normalize_text(text) == expected and normalize_text(expected) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("🏳\ufe0f\u200d🌈", "🏳\ufe0f\u200d🌈"),  # an emoji sequence: the ZWJ joins the flag and the rainbow
        ("👩\u200d🌾", "👩\u200d🌾"),
        ("👩\u200c🌾", "👩🌾"),  # ZWNJ never joins emoji
        ("👩\u200d\u200d🌾", "👩🌾"),  # a run of joiners is not a sequence
        ("नमस्ते\u200d 😀", "नमस्ते 😀"),
        ("क्\u200dष", "क्\u200dष"),
    ],
)
def test_joiners_are_kept_in_devanagari_and_in_emoji_sequences_only(text: str, expected: str) -> None:
    assert normalize_text(text) == expected


def test_marks_brought_together_by_a_removal_are_reordered_once() -> None:
    once = normalize_text("\u0951\u200b\u0952")  # a zero-width space between two combining marks
    assert normalize_text(once) == once


# --- issue 22: controls, bidirectional marks, stray joiners, answers normalised twice -------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("क\x00ख", "कख"),  # NUL: from a binary tool or a file read in the wrong encoding
        ("क\x07ख\x1b", "कख"),
        ("क\x7fख\x9b", "कख"),  # DEL and a C1 control
        ("क\tख\x1fग\x85घ", "क ख ग घ"),  # controls that are whitespace become one space each
    ],
)
def test_control_characters_are_removed(raw: str, expected: str) -> None:
    assert normalize_text(raw) == expected


@pytest.mark.parametrize("text", ["\u200f\u200e", "\u2066\u2069", " \u202a\u202c ", "\u061c"])
def test_text_of_bidirectional_marks_alone_is_empty(text: str) -> None:
    assert normalize_text(text) == ""


def test_bidirectional_overrides_are_removed_inside_texts() -> None:
    assert normalize_text("राम्रो \u202eछ\u202c") == "राम्रो छ"
    assert normalize_text("\u2067नमस्ते\u2069 संसार\u200f") == "नमस्ते संसार"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("क\u200c\u200c\u200cा", "का"),  # a run of joiners before a vowel sign
        ("क\u200cा", "का"),  # one joiner before a vowel sign selects nothing
        ("कि\u200cक", "किक"),  # after a vowel sign
        ("क\u200d।", "क।"),  # next to a danda
        ("क्\u200c\u200cष", "क्ष"),  # a run, even after the virama
        ("क्\u200cष", "क्\u200cष"),  # explicit virama: kept
        ("र\u200d्य", "र\u200d्य"),  # eyelash ra, written with the joiner before the virama: kept
        ("क\u200cख", "क\u200cख"),  # between two letters: kept
    ],
)
def test_joiners_are_kept_between_letters_and_the_virama_only(raw: str, expected: str) -> None:
    assert normalize_text(raw) == expected


@pytest.mark.parametrize("word", ["\u200d।\u200d।", "।\u200d।", "\u200c, क", "। \u200dक"])
def test_answer_normalisation_is_idempotent_on_found_inputs(word: str) -> None:
    once = normalize_answer(word)
    assert normalize_answer(once) == once
