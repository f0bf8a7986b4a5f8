"""Text normalisation rules (see nlue.data.normalize)."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nlue.data.normalize import normalize_answer, normalize_text


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
