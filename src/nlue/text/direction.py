"""Which way a language's text runs: the Space's text boxes and tables turn right-to-left for these.

A task file names its languages by ISO 639 code (``languages: [ur]``); the page needs to know whether
the main one is written right to left (Urdu, Arabic, Persian, ...), so that a visitor types and reads it
the way it is written. The list holds the languages whose usual script is right-to-left (Arabic,
Hebrew, Syriac, Thaana, N'Ko), by their 639-1 and 639-3 codes; any other code runs left to right.
"""

from __future__ import annotations

RIGHT_TO_LEFT: frozenset[str] = frozenset(
    {
        "ar", "ara", "arb", "arz", "apc", "acm", "ary", "fa", "fas", "per", "pes", "prs", "ur", "urd",
        "ps", "pus", "pbt", "sd", "snd", "ug", "uig", "ckb", "ks", "kas", "bal", "skr", "pnb", "bqi",
        "he", "heb", "yi", "yid", "lad", "syr", "aii", "dv", "div", "nqo",
    }
)  # fmt: skip


def is_right_to_left(language: str) -> bool:
    """Whether text in ``language`` (an ISO 639 code, any case; a region after ``-`` or ``_`` ignored) runs right to left."""
    code = language.strip().lower().replace("_", "-")
    return code in RIGHT_TO_LEFT or code.split("-")[0] in RIGHT_TO_LEFT
