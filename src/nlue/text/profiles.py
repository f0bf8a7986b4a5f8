"""Language profiles: the text rules a task's fields are normalised by, chosen by name.

Three ship with nlue: ``nepali`` (the rules every NLUE and neDIOM build has always used),
``urdu`` (Arabic script as Urdu writes it) and ``plain`` (NFC, control characters and spaces
only, for any other script). A new one is one :class:`~nlue.text.rules.LanguageProfile`
declaration passed to :func:`register_profile`; :func:`get_profile` finds it by name and
:func:`profile_of` finds a task's.

Which profile a task uses: its ``profile`` field once task files declare one; until then the
fallback in :func:`fallback_profile_name`, the one place that maps shipped tasks to profiles.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from nlue.errors import NlueError
from nlue.text.rules import LanguageProfile

_INVISIBLE = "\u200b\u2060\ufeff\u00ad"  # zero-width space, word joiner, byte-order mark, soft hyphen
_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"  # marks, embeddings and overrides, isolates

NEPALI = LanguageProfile(
    name="nepali",
    summary=(
        "NFC; invisible, control and bidirectional formatting characters removed; ZWJ/ZWNJ kept only where "
        "Devanagari (or an emoji sequence) uses them; an ASCII `|` after Devanagari becomes a danda; digits "
        "kept as written."
    ),
    rules="""\
* Unicode NFC, so that precomposed and decomposed Devanagari (e.g. nukta forms) compare equal.
* Invisible characters with no linguistic role are removed: zero-width space, word
  joiner, byte-order mark, soft hyphen.
* Control characters are removed (NUL, the other C0 controls, DEL and the C1 controls),
  except the ones that are whitespace (tab, line breaks, U+001C-U+001F, U+0085), which
  become spaces by the whitespace rule below. No one's text holds a NUL: it comes from
  a binary tool or a file read in the wrong encoding.
* Bidirectional formatting characters are removed: the marks U+200E, U+200F, U+061C,
  the embeddings and overrides U+202A-U+202E and the isolates U+2066-U+2069. They only
  steer how a line is displayed (an override U+202E shows the text after it reversed,
  so two texts that look alike differ); Nepali needs none. A text made only of them is
  empty, and rejected as such.
* A single ZWJ or ZWNJ is kept only *between two Devanagari letters or a letter and the
  virama* (U+094D), where it selects a half-form, an explicit virama or the eyelash
  ra, and a single ZWJ *between two emoji* (an emoji sequence such as 🏳️‍🌈 or 👩‍🌾,
  where it joins the parts into one picture); a run of two or more joiners, and a
  joiner next to a vowel sign, a danda, a digit or anything else, is stray and removed.
* Every run of Unicode whitespace (incl. no-break space, tabs, newlines) becomes one
  space; leading and trailing space is stripped.
* An ASCII ``|`` written after Devanagari text (or after another such ``|``, which is
  about to become a danda) as a stand-in for the danda becomes ``।`` (and ``||`` becomes
  ``॥``); real dandas are kept as they are. Pipes after anything else stay pipes
  (``PrimeHD || माओ`` is kept as written). Normalising twice changes nothing.
* Devanagari digits (०-९) and ASCII digits are kept as written: converting them would
  change the text a model sees, and both occur in real Nepali text.
* The emoji variation selectors U+FE0F (emoji style) and U+FE0E (text style) are kept
  only right after an emoji they can apply to, and removed anywhere else (scraped text
  often leaves them after Devanagari, a space or punctuation, where they do nothing but
  make two equal sentences differ). An emoji here is a character with the Unicode
  property Extended_Pictographic in the Basic Multilingual Plane (❤, ☺, ✔, ©, ™, ‼, ...),
  or any character from U+1F000 to U+1FFFF (the emoji blocks, including flags' letters,
  skin-tone modifiers and code points reserved for future emoji); a digit, ``#`` or ``*``
  counts only as the base of a keycap, i.e. when the selector is followed by U+20E3
  (``1️⃣``). A selector after a selector is removed too.""",
    script="\u0900-\u097f\ua8e0-\ua8ff",
    removed=_INVISIBLE + _BIDI,
    tidy_joiners=True,
    joiner_signs="\u094d",  # the virama: a joiner beside it selects a half-form or an explicit virama
    emoji=True,
    dandas=True,
    # The block the near-duplicate key folds byte-wise (nlue.data.text_keys): rows passed in bulk stay in it.
    bulk_script="\u0900-\u097f",
)

# What an Urdu corpus mixes, and what each sequence or letter becomes. The rules follow the two
# public Urdu normalisers where they agree: urduhack's character table
# (urduhack/normalization/character.py, CORRECT_URDU_CHARACTERS) and Google's Nisaba Urdu rewrites
# (nisaba/scripts/abjad_alphabet/data/Arab/ur/visual_norm*.textproto and reading_norm.textproto).
# * Arabic yeh U+064A and alef maksura U+0649 -> Farsi yeh U+06CC, Arabic kaf U+0643 -> keheh U+06A9:
#   both sources (Nisaba limits some to the positions where the glyphs look alike; Urdu has no other
#   yeh-without-barree or kaf, so the letter is the same everywhere).
# * Heh with yeh above U+06C0 and heh + hamza above -> heh goal with hamza U+06C2, Farsi yeh + hamza
#   above -> yeh with hamza above U+0626, teh marbuta U+0629 -> teh marbuta goal U+06C3: Nisaba
#   (urduhack leaves them; each pair draws one glyph, and the first of each is not how Urdu spells it).
# * Arabic heh U+0647 is where the sources part: urduhack makes it heh goal U+06C1 everywhere, Nisaba
#   (a visual normaliser) makes it do-chashmi U+06BE inside a word, heh goal standing alone, and leaves
#   it at a word's end. Text typed on an Arabic or Persian keyboard writes both Urdu letters with it,
#   so inside or at the end of a word it is ambiguous ("کها" is کہا "said" or کھا "eat"; "ساته" is
#   ساتھ, "مدرسه" is مدرسہ) and stays as written. Where a word starts, or the letter stands alone,
#   it can only be heh goal (do-chashmi marks the aspiration of a consonant before it, so no Urdu
#   word starts with it): U+06C1, as urduhack does and as Nisaba does for the lone letter.
#   Do-chashmi U+06BE and heh goal U+06C1 are distinct Urdu letters and are never changed.
# * Arabic-Indic digits U+0660-U+0669 -> the Eastern (Urdu) digits U+06F0-U+06F9, as urduhack: the
#   same numbers in two code-point sets that keyboards mix, and Urdu prints the Eastern ones. ASCII
#   digits stay: Urdu text prints both, and the model should see what the source printed.
_URDU_FOLDS: Mapping[str, str] = MappingProxyType(
    {
        "\u064a": "\u06cc",  # ARABIC LETTER YEH -> FARSI YEH
        "\u0649": "\u06cc",  # ALEF MAKSURA -> FARSI YEH
        "\u0643": "\u06a9",  # ARABIC LETTER KAF -> KEHEH
        "\u06c0": "\u06c2",  # HEH WITH YEH ABOVE -> HEH GOAL WITH HAMZA ABOVE
        "\u0647\u0654": "\u06c2",  # HEH, HAMZA ABOVE -> HEH GOAL WITH HAMZA ABOVE
        "\u06cc\u0654": "\u0626",  # FARSI YEH, HAMZA ABOVE -> YEH WITH HAMZA ABOVE (one glyph, two spellings)
        "\u0629": "\u06c3",  # TEH MARBUTA -> TEH MARBUTA GOAL
        **{chr(0x0660 + i): chr(0x06F0 + i) for i in range(10)},  # Arabic-Indic -> Eastern Arabic-Indic digits
    }
)

URDU = LanguageProfile(
    name="urdu",
    summary=(
        "NFC; Arabic presentation forms replaced by their letters; invisible, control and bidirectional "
        "formatting characters and the tatweel removed; ZWNJ/ZWJ kept between two Arabic-script letters; "
        "Arabic yeh, alef maksura and kaf unified with the Urdu letters, heh to heh goal where a word "
        "starts, Arabic-Indic digits to the Urdu digits; no danda rules."
    ),
    rules="""\
* Unicode NFC; Arabic presentation forms (U+FB50-U+FDFF, U+FE70-U+FEFC, which PDF extraction
  leaves) are replaced by the letters they draw (their NFKC form).
* Zero-width space, word joiner, byte-order mark, soft hyphen, the tatweel U+0640 (a stretch
  of the line, not a letter), control characters and bidirectional formatting characters
  (U+200E, U+200F, U+061C, U+202A-U+202E, U+2066-U+2069) are removed; control characters
  that are whitespace become spaces.
* A single ZWNJ or ZWJ is kept between two Arabic-script letters, where Urdu uses it to stop
  (or force) the joining of two letters inside a word; a run of joiners, or one anywhere
  else, is removed. A single ZWJ between two emoji is kept, and emoji variation selectors are
  kept only after an emoji, as in the Nepali rules.
* Letters an Urdu corpus mixes are unified with the Urdu ones: Arabic yeh U+064A and alef
  maksura U+0649 become Farsi yeh U+06CC; Arabic kaf U+0643 becomes keheh U+06A9; heh with
  yeh above U+06C0 and heh followed by hamza above become U+06C2; Farsi yeh followed by hamza
  above becomes U+0626; teh marbuta U+0629 becomes U+06C3.
* Arabic heh U+0647 becomes heh goal U+06C1 where a word starts or the letter stands alone
  (no Urdu word starts with do-chashmi heh); inside or at the end of a word it is kept as
  written, since it may stand for heh goal or for do-chashmi heh (U+06BE) and guessing
  would turn one word into another. Do-chashmi heh and heh goal are never changed.
* Arabic-Indic digits U+0660-U+0669 become the Urdu digits U+06F0-U+06F9 (the same numbers);
  ASCII digits are kept as written.
* There are no danda rules: `|` stays a pipe. Every run of whitespace becomes one space;
  leading and trailing space is stripped. Normalising twice changes nothing.""",
    script="\u0600-\u06ff\u0750-\u077f",
    removed=_INVISIBLE + "\u0640" + _BIDI,
    tidy_joiners=True,
    emoji=True,
    compatibility="\ufb50-\ufdff\ufe70-\ufefc",
    folds=_URDU_FOLDS,
    word_start_folds=MappingProxyType({"\u0647": "\u06c1"}),  # ARABIC LETTER HEH -> HEH GOAL, where a word starts
)

PLAIN = LanguageProfile(
    name="plain",
    summary="NFC, control characters removed and whitespace tidied; nothing else (any script).",
    rules="""\
* Unicode NFC.
* Control characters are removed (NUL, the other C0 controls, DEL and the C1 controls); the
  ones that are whitespace become spaces.
* Every run of Unicode whitespace becomes one space; leading and trailing space is stripped.
* Nothing else changes: joiners, direction marks, digits and letters are kept as written,
  since which of them a script needs is what a profile of its own would declare.""",
)

_PROFILES: dict[str, LanguageProfile] = {}


def register_profile(profile: LanguageProfile, replace: bool = False) -> LanguageProfile:
    """Make ``profile`` known by its name (a name taken by another profile is refused unless ``replace``)."""
    known = _PROFILES.get(profile.name)
    if known is not None and known is not profile and not replace:
        raise NlueError(f"a language profile named {profile.name!r} is already registered")
    _PROFILES[profile.name] = profile
    return profile


def unregister_profile(name: str) -> None:
    """Forget a registered profile (a test's throwaway one); the shipped ones stay."""
    if name in (NEPALI.name, URDU.name, PLAIN.name):
        raise NlueError(f"the shipped language profile {name!r} cannot be removed")
    _PROFILES.pop(name, None)


for _shipped in (NEPALI, URDU, PLAIN):
    register_profile(_shipped)


def profile_names() -> tuple[str, ...]:
    return tuple(sorted(_PROFILES))


def get_profile(name: str | LanguageProfile) -> LanguageProfile:
    """The registered profile called ``name`` (a profile is returned as it is)."""
    if isinstance(name, LanguageProfile):
        return name
    profile = _PROFILES.get(str(name).strip().lower())
    if profile is None:
        raise NlueError(f"unknown language profile {name!r}; known profiles: {', '.join(profile_names())}")
    return profile


def fallback_profile_name(language: str | None) -> str:
    """The profile of a task that names none: urdu for an Urdu exam (mcq_ur), nepali for every other
    shipped task (NLUE, neDIOM, mcq_ne). The one place that maps tasks to profiles until every task
    declares its ``profile``; delete it then."""
    return URDU.name if language == "ur" else NEPALI.name


def profile_of(task: Any) -> LanguageProfile:
    """The profile a task's text is normalised with: its ``profile`` field, else the fallback."""
    name = getattr(task, "profile", None) or fallback_profile_name(getattr(task, "language", None))
    return get_profile(name)


_NEPALI = NEPALI.normalizer()


def normalize_text(text: str, profile: str | LanguageProfile | None = None) -> str:
    """``text`` normalised by ``profile`` (a name or a profile; default: ``nepali``, what every build used)."""
    return _NEPALI(text) if profile is None else get_profile(profile).normalize(text)
