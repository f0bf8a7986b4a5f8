"""What a language profile declares, and the one normaliser every profile runs (:class:`LanguageProfile`).

A profile is data: which characters it removes, whether it tidies joiners and emoji, which look-alike
letters it folds, whether pipes become dandas. :meth:`LanguageProfile.normalize` applies the
declared rules in one fixed order, so that every profile is idempotent the same way:

1. Unicode NFC; a text that holds nothing a rule below acts on (printable, none of the profile's
   folded, removed or compatibility characters, no ``|`` for a danda profile) only has its orphaned
   emoji selectors removed and its spaces tidied (the common case, and the fast one);
2. compatibility characters (Arabic presentation forms, say) replaced by their NFKC form;
3. control characters removed (NUL, the other C0 controls, DEL, the C1 controls; the ones that are
   whitespace become spaces in step 8), and the profile's ``removed`` characters;
4. emoji rules: a variation selector U+FE0E/U+FE0F kept only after an emoji it applies to;
5. joiner rules: a single ZWJ/ZWNJ kept only between two letters of the profile's script (or a
   letter and a ``joiner_signs`` sign, such as the virama), and a single ZWJ between two emoji;
   a run of joiners, or a joiner anywhere else, removed;
6. folds: look-alike sequences and letters replaced, some only where a word starts (NFC again
   after each round, until nothing changes);
7. dandas: an ASCII ``|`` (or ``||``) written after a letter of the script becomes ``।`` (``॥``);
8. every run of whitespace becomes one space; leading and trailing space removed; NFC once more
   when a removed character let two combining marks meet.

Steps a profile does not declare are skipped: the plain profile is steps 1, 3 and 8 alone.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from nlue.errors import NlueError

# Control characters that are not whitespace (those become spaces with the whitespace rule).
CONTROLS = "\x00-\x08\x0e-\x1b\x7f-\x84\x86-\x9f"
JOINERS = "\u200c\u200d"
SELECTORS = "\ufe0e\ufe0f"
# Extended_Pictographic characters of the BMP (Unicode emoji-data; generated once with the
# `regex` module's \p{Extended_Pictographic}, kept literal so that normalisation needs no
# dependency), then the supplementary emoji blocks whole.
EMOJI_BASE = (
    "\u00a9\u00ae\u203c\u2049\u2122\u2139\u2194-\u2199\u21a9-\u21aa\u231a-\u231b\u2328\u23cf\u23e9-\u23f3"
    "\u23f8-\u23fa\u24c2\u25aa-\u25ab\u25b6\u25c0\u25fb-\u25fe\u2600-\u2604\u260e\u2611\u2614-\u2615"
    "\u2618\u261d\u2620\u2622-\u2623\u2626\u262a\u262e-\u262f\u2638-\u263a\u2640\u2642\u2648-\u2653"
    "\u265f-\u2660\u2663\u2665-\u2666\u2668\u267b\u267e-\u267f\u2692-\u2697\u2699\u269b-\u269c"
    "\u26a0-\u26a1\u26a7\u26aa-\u26ab\u26b0-\u26b1\u26bd-\u26be\u26c4-\u26c5\u26c8\u26ce-\u26cf\u26d1"
    "\u26d3-\u26d4\u26e9-\u26ea\u26f0-\u26f5\u26f7-\u26fa\u26fd\u2702\u2705\u2708-\u270d\u270f\u2712"
    "\u2714\u2716\u271d\u2721\u2728\u2733-\u2734\u2744\u2747\u274c\u274e\u2753-\u2755\u2757\u2763-\u2764"
    "\u2795-\u2797\u27a1\u27b0\u27bf\u2934-\u2935\u2b05-\u2b07\u2b1b-\u2b1c\u2b50\u2b55\u3030\u303d\u3297"
    "\u3299\U0001f000-\U0001ffff"
)
_KEYCAP_BASE = "0-9#*"
# A selector is orphaned when what precedes it is neither an emoji nor a keycap base, or when it
# follows a keycap base but no keycap mark (U+20E3) follows it. The pattern opens with the selector
# itself, so that re skips to selectors instead of testing a lookbehind at every character.
_ORPHAN_SELECTOR = re.compile(
    f"[{SELECTORS}](?:(?<![{EMOJI_BASE}{_KEYCAP_BASE}].)|(?<=[{_KEYCAP_BASE}].)(?!\u20e3))", flags=re.DOTALL
)
_EMOJI_CHAR = re.compile(f"[{EMOJI_BASE}]")
_EMOJI_END = re.compile(f"[{EMOJI_BASE}\ufe0f]")  # an emoji, or the emoji-style selector that ends one
_JOINER_RUN = re.compile(f"[{JOINERS}]+")
_PIPE_IN_RUN = re.compile(r"\s*(\|\|?)")


def _empty() -> Mapping[str, str]:
    return MappingProxyType({})


# eq=False: a profile is itself (hashed by identity), so its compiled rules can be cached per profile.
@dataclass(frozen=True, eq=False)
class LanguageProfile:
    """One language's (or script's) text rules, declared; register it with :func:`nlue.text.profiles.register_profile`.

    Character sets are strings of characters and ranges (``"\\u0900-\\u097f"``); a ``-`` meant as
    itself goes first or last.
    """

    name: str = field(metadata={"help": "the name task files and get_profile use (lower case)"})
    summary: str = field(metadata={"help": "one sentence for the dataset card and the docs: what the profile does"})
    rules: str = field(metadata={"help": "the rules in full as Markdown bullets (dataset card's build section)"})
    script: str = field(default="", metadata={"help": "the script's characters (ranges): joiners and dandas"})
    removed: str = field(default="", metadata={"help": "characters removed beyond the control characters"})
    tidy_joiners: bool = field(
        default=False,
        metadata={"help": "keep one ZWJ/ZWNJ only between two script letters (False: keep them as written)"},
    )
    joiner_signs: str = field(
        default="", metadata={"help": "signs a joiner may stand beside, though not between two of them (virama)"}
    )
    emoji: bool = field(
        default=False, metadata={"help": "drop orphaned variation selectors; keep a ZWJ between two emoji"}
    )
    compatibility: str = field(default="", metadata={"help": "characters replaced by their NFKC form (ranges)"})
    folds: Mapping[str, str] = field(
        default_factory=_empty, metadata={"help": "look-alike text -> the form kept, anywhere in a text"}
    )
    word_start_folds: Mapping[str, str] = field(
        default_factory=_empty,
        metadata={"help": "character -> the form kept where it does not follow a script letter (a word's start)"},
    )
    dandas: bool = field(default=False, metadata={"help": "an ASCII | after the script becomes a danda (।, ॥)"})
    bulk_script: str | None = field(
        default=None,
        metadata={"help": "ranges the columnar builder may pass without the row path (default: script)"},
    )

    def __post_init__(self) -> None:
        problems = _declaration_problems(self)
        if problems:
            raise NlueError(f"language profile {self.name!r}: " + "; ".join(problems))

    def normalize(self, text: str) -> str:
        """``text`` by this profile's rules (module docstring); normalising twice changes nothing."""
        return _compiled(self)(text)

    def normalizer(self) -> Callable[[str], str]:
        """:meth:`normalize` as a plain function, for loops over many texts (no lookup per call)."""
        return _compiled(self)


def expand(ranges: str) -> frozenset[str]:
    """The characters of a set written as characters and ranges (``"a-z_"``)."""
    chars: set[str] = set()
    i = 0
    while i < len(ranges):
        if i + 2 < len(ranges) and ranges[i + 1] == "-":
            chars.update(map(chr, range(ord(ranges[i]), ord(ranges[i + 2]) + 1)))
            i += 3
        else:
            chars.add(ranges[i])
            i += 1
    return frozenset(chars)


def char_class(chars: frozenset[str], escape: Callable[[int], str] | None = None) -> str:
    """A regex class body matching exactly ``chars`` (runs of code points as ranges)."""
    escape = escape or (lambda code: f"\\U{code:08x}" if code > 0xFFFF else f"\\u{code:04x}")
    codes = sorted(map(ord, chars))
    parts: list[str] = []
    start = 0
    for i in range(1, len(codes) + 1):
        if i == len(codes) or codes[i] != codes[i - 1] + 1:
            first, last = codes[start], codes[i - 1]
            parts.append(escape(first) if first == last else f"{escape(first)}-{escape(last)}")
            start = i
    return "".join(parts)


def _declaration_problems(profile: LanguageProfile) -> list[str]:
    """What makes a declaration unusable: a name no file can carry, folds that are not one step."""
    problems = []
    if not re.fullmatch(r"[a-z][a-z0-9_-]*", profile.name):
        problems.append("a name is lower-case letters, digits, '_' or '-', starting with a letter")
    folds = {**profile.folds, **profile.word_start_folds}
    for source, target in folds.items():
        if not source:
            problems.append("a fold replaces a non-empty text")
        elif any(key and key in target for key in folds):
            problems.append(f"fold {source!r} -> {target!r}: the result holds another fold's text")
        elif not unicodedata.is_normalized("NFC", target):
            problems.append(f"fold {source!r} -> {target!r}: the result is not NFC")
    if any(len(key) != 1 for key in profile.word_start_folds):
        problems.append("a word-start fold replaces one character")
    if (profile.tidy_joiners or profile.dandas) and not profile.script:
        problems.append("joiner and danda rules need the script's characters")
    return problems


def _joiner_rule(profile: LanguageProfile) -> Callable[[re.Match[str]], str]:
    letters = frozenset(c for c in expand(profile.script) if unicodedata.category(c)[0] == "L")
    signs = expand(profile.joiner_signs)
    joins = letters | signs
    emoji = profile.emoji

    def joiner_or_nothing(match: re.Match[str]) -> str:
        """One joiner is kept between script letters (or a letter and a sign), or one ZWJ between two
        emoji; a longer run, or a joiner anywhere else, is dropped."""
        joiner = match.group()
        if len(joiner) != 1:
            return ""
        text, start, end = match.string, match.start(), match.end()
        before, after = text[start - 1 : start], text[end : end + 1]
        if not before or not after:
            return ""
        if before in joins and after in joins and not (before in signs and after in signs):
            return joiner
        if emoji and joiner == "\u200d" and _EMOJI_END.match(before) and _EMOJI_CHAR.match(after):
            return joiner
        return ""

    return joiner_or_nothing


def _dandas(match: re.Match[str]) -> str:
    """A run of pipes after the script as dandas: ``||`` (no space between) is ``॥``, a lone ``|`` is ``।``."""
    return "".join("॥" if len(pipes.group(1)) == 2 else "।" for pipes in _PIPE_IN_RUN.finditer(match.group()))


def _folder(profile: LanguageProfile) -> Callable[[str], str] | None:
    """Steps 6 of the module docstring as one function, or None when the profile folds nothing."""
    if not profile.folds and not profile.word_start_folds:
        return None
    sequences = {k: v for k, v in profile.folds.items() if len(k) > 1}
    table = str.maketrans({k: v for k, v in profile.folds.items() if len(k) == 1})
    sequence_pattern = (
        re.compile("|".join(map(re.escape, sorted(sequences, key=len, reverse=True)))) if sequences else None
    )
    letters = frozenset(c for c in expand(profile.script) if unicodedata.category(c)[0] == "L") | expand(JOINERS)
    word_start = profile.word_start_folds
    starts = re.compile(f"[{char_class(frozenset(word_start))}]") if word_start else None

    def at_word_start(match: re.Match[str]) -> str:
        """The fold where no script letter (or joiner) precedes, combining marks skipped; else as written."""
        text, i = match.string, match.start() - 1
        while i >= 0 and unicodedata.category(text[i]) in ("Mn", "Me"):
            i -= 1
        return match.group() if i >= 0 and text[i] in letters else word_start[match.group()]

    def fold(text: str) -> str:
        # Folds apply to composed text (a removed mark of direction may have split a letter from its hamza),
        # and composing can make a folded code point (U+06D5 U+0654 -> U+06C0): fold and compose until stable.
        text = unicodedata.normalize("NFC", text)
        for _ in range(4):
            folded = text
            if sequence_pattern is not None:
                folded = sequence_pattern.sub(lambda m: sequences[m.group()], folded)
            if starts is not None:
                folded = starts.sub(at_word_start, folded)
            folded = unicodedata.normalize("NFC", folded.translate(table))
            if folded == text:
                break
            text = folded
        return text

    return fold


def fast_path_triggers(profile: LanguageProfile) -> frozenset[str]:
    """Printable characters some rule of the profile changes (beyond spaces and emoji selectors)."""
    chars = {key[0] for key in (*profile.folds, *profile.word_start_folds)}
    chars |= expand(profile.compatibility) | expand(profile.removed)
    if profile.dandas:
        chars.add("|")
    return frozenset(c for c in chars if c.isprintable())


@functools.cache
def _compiled(profile: LanguageProfile) -> Callable[[str], str]:
    """The profile's normaliser, its regexes built once per profile."""
    removed = re.compile(f"[{CONTROLS}{char_class(expand(profile.removed)) if profile.removed else ''}]")
    compatibility = re.compile(f"[{char_class(expand(profile.compatibility))}]") if profile.compatibility else None
    joiners = _joiner_rule(profile) if profile.tidy_joiners else None
    fold = _folder(profile)
    pipe_run = re.compile(f"(?<=[{char_class(expand(profile.script))}])(?:\\s*\\|)+") if profile.dandas else None
    emoji = profile.emoji
    triggers = fast_path_triggers(profile)
    if not triggers:
        triggered: Callable[[str], bool] = lambda text: False  # noqa: E731
    elif len(triggers) == 1:
        (only,) = triggers
        triggered = lambda text: only in text  # noqa: E731
    else:
        triggered = re.compile(f"[{char_class(triggers)}]").search  # type: ignore[assignment]

    def normalize(text: str) -> str:
        text = unicodedata.normalize("NFC", text)
        # Fast path: removed characters, joiners and whitespace but " " are all unprintable, so
        # printable text without a trigger needs at most its orphaned selectors removed (they are
        # nonspacing marks, hence printable) and its spaces tidied: what the passes below give.
        if text.isprintable() and not triggered(text):
            if emoji and ("\ufe0f" in text or "\ufe0e" in text):
                text = _ORPHAN_SELECTOR.sub("", text)
                # A selector removed from between a letter and its mark lets NFC fuse them (न U+FE0F ़ -> ऩ).
                if not unicodedata.is_normalized("NFC", text):
                    return passes(text)
            if "  " in text or text.startswith(" ") or text.endswith(" "):
                return " ".join(text.split())
            return text
        return passes(text)

    def passes(text: str) -> str:
        """The rules one by one, on NFC text; a pass is skipped where its characters are absent."""
        if compatibility is not None:
            text = compatibility.sub(lambda m: unicodedata.normalize("NFKC", m.group()), text)
        text = removed.sub("", text)
        # Selectors before joiners: a ZWJ is kept only between emoji, so what it sits next to must be final.
        if emoji and ("\ufe0f" in text or "\ufe0e" in text):
            text = _ORPHAN_SELECTOR.sub("", text)
        if joiners is not None and ("\u200c" in text or "\u200d" in text):
            text = _JOINER_RUN.sub(joiners, text)
        if fold is not None:
            text = fold(text)
        if pipe_run is not None and "|" in text:
            text = pipe_run.sub(_dandas, text)
        # str.split() and the regex \s agree on what whitespace is (both use str.isspace).
        text = " ".join(text.split())
        # A removed character may have stood between two combining marks, which NFC then reorders.
        return text if unicodedata.is_normalized("NFC", text) else unicodedata.normalize("NFC", text)

    return normalize
