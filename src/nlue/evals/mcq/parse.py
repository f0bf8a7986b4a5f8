"""Reading a model's answer to an exam item: the strict parser of the format, and a lenient one kept apart.

The format (facts §6-7) is two lines, the labels in English whatever the prompt language::

    Answer key: B
    Answer text: <the text of option B>

**Strict rule** (the one behind every headline number). Before parsing: thinking traces
are removed (``<think>...</think>`` blocks; an unclosed ``<think>`` hides the rest of the
output; a ``</think>`` with no opening, left when a chat template opened the trace in the
prompt, hides what precedes it), since a reasoning model's trace is not its answer;
blank lines are dropped and each line's surrounding whitespace is ignored; a leading
``- `` or ``• `` bullet is ignored (the paper's own figures show both). Then the output
must be exactly two lines: ``Answer key:`` with one capital letter A-D, then ``Answer
text:`` whose text equals the text of that option after the task's normalisation
(:func:`nlue.registry.kinds.mcq_text.normalize_mcq_text`; for Urdu that folds look-alike
code points, so a model writing Arabic kaf for keheh is not penalised). Tolerated: the
whitespace and bullets above, no space after a colon. Not tolerated: a lower-case or
decorated letter (``b``, ``B)``, ``(B)``), markdown, any other line (a preamble, an
explanation, a repeated answer), lines in the other order. The paper asks for "exactly
the two-line format" and a character-exact answer text; the key and the text must both
be there and agree, so an output never earns credit for a letter it did not write on
its key line.

**Invalid categories**, the first that applies (:data:`INVALID_CATEGORIES`):
``api_error`` (the request failed: counted as invalid by definition), ``empty`` (nothing
but whitespace, thinking traces or placeholder marks such as ``___``), then for the exact
two-line shape ``key_not_in_a_to_d``, ``key_text_disagree`` (the text is another option's)
and ``text_matches_no_option``; for any other shape ``refusal_or_echo`` (the output
repeats the prompt: a ``Subject:``/``Level:``/``Question:`` line in any shipped prompt language
or in one the exam's task file declares, the system prompt, or the question itself; or it has no key line and declines or asks
for clarification), ``no_key_line``, and ``malformed`` (a key line, but not the two-line
shape: text line missing, lines repeated or out of order, other text around them).

**Lenient parser** (:func:`parse_lenient`), reported separately and never blended into
the strict numbers: markdown emphasis removed; labels in any case and ``Answer:``,
``Key:``, ``उत्तर:`` or ``جواب:`` read as a key line; ``B)``, ``(B)``, ``B.`` and a
lower-case letter in those forms accepted; an output that is only a letter (optionally
with its option's text) or only one option's text is that option; a key line whose text
names another option is ``key_text_disagree``; two different keys are ``malformed``.
It too credits only a letter or an option text that the output wrote.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from nlue.registry.kinds.mcq_text import KEY_LABEL, LETTERS, TEXT_LABEL, normalize_mcq_text
from nlue.registry.kinds.multiple_choice import INVALID_PREDICTION, item_options
from nlue.registry.mcq import MCQ_PROMPTS
from nlue.registry.spec import TaskSpec

API_ERROR = "api_error"
EMPTY = "empty"
REFUSAL_OR_ECHO = "refusal_or_echo"
NO_KEY_LINE = "no_key_line"
KEY_NOT_IN_A_TO_D = "key_not_in_a_to_d"
MALFORMED = "malformed"
TEXT_MATCHES_NO_OPTION = "text_matches_no_option"
KEY_TEXT_DISAGREE = "key_text_disagree"
INVALID_CATEGORIES: Mapping[str, str] = {
    API_ERROR: "the request failed; no output to read",
    EMPTY: "nothing but whitespace, thinking traces or placeholder marks (___, ...)",
    REFUSAL_OR_ECHO: "the output repeats the prompt, or declines / asks for clarification without a key line",
    NO_KEY_LINE: "no `Answer key:` line",
    KEY_NOT_IN_A_TO_D: "the key line holds something other than one capital letter A-D",
    MALFORMED: "a key line, but not exactly the two answer lines (missing, repeated, reordered or extra lines)",
    TEXT_MATCHES_NO_OPTION: "the answer text is not the text of any option",
    KEY_TEXT_DISAGREE: "the answer text is the text of another option than the key",
}

_THINK_BLOCK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_THINK_OPEN = re.compile(r"<think>", re.IGNORECASE)
_THINK_CLOSE = re.compile(r"</think>", re.IGNORECASE)
_PLACEHOLDER = re.compile(r"[\s_.\-–—…?*•·]*")
_BULLET = re.compile(r"^[-•]\s+")
_KEY = re.compile(rf"^{KEY_LABEL}\s*(.*)$")
_TEXT = re.compile(rf"^{TEXT_LABEL}\s*(.*)$")
_ECHO_LABELS = tuple(
    f"{label}:" for spec in MCQ_PROMPTS.values() for label in spec.field_labels.values()
)  # every prompt language's Subject/Level/Question
_SYSTEM_OPENINGS = tuple(spec.instruction[:40] for spec in MCQ_PROMPTS.values())
_REFUSAL = re.compile(
    r"i can'?t|i cannot|i'?m sorry|i am sorry|unable to|not clear|unclear|clarif|as an ai"
    r"|माफ|स्पष्ट छैन|सक्दिन|معذرت|معاف|واضح نہیں|نہیں کر سک",
    re.IGNORECASE,
)
# Lenient forms.
_MARKDOWN = re.compile(r"\*\*|__|`|^#+\s*", re.MULTILINE)
_LENIENT_BULLET = re.compile(r"^(?:[-•*]|\d+[.)])\s+")
# A letter: "(b)", "B)", "B.", "B:" or a bare "B"; a bare letter followed by more text counts only when
# that text is the letter's option ("B Kathmandu"), so "Answer: A good question" commits to nothing.
_LETTER = r"(?:\(([A-Da-d])\)|([A-Da-d])([.):])|([A-D]))(?:\s+(.*))?"
_LENIENT_KEY = re.compile(r"^(?:final\s+)?(?:answer(?:\s*key)?|key|उत्तर|جواب)\s*[:：=\-]\s*" + _LETTER + "$", re.I)
_LENIENT_TEXT = re.compile(r"^answer\s*text\s*[:：]\s*(.*)$", re.IGNORECASE)
_LONE_LETTER = re.compile("^" + _LETTER + "$|^([a-d])$")
_EDGE_PUNCTUATION = " \t\"'“”‘’.,;:!?।॥۔،()[]"


@dataclass(frozen=True)
class ParseResult:
    """What an output committed to: its key and text, and why it is invalid (None when it is valid)."""

    key: str | None
    text: str | None
    category: str | None = None
    detail: str = ""

    @property
    def valid(self) -> bool:
        return self.category is None

    @property
    def prediction(self) -> int:
        """The key id 0-3 of a valid answer, :data:`INVALID_PREDICTION` (-1) otherwise."""
        return LETTERS.index(self.key) if self.valid and self.key is not None else INVALID_PREDICTION

    def as_dict(self) -> dict[str, Any]:
        return {"key": self.key, "text": self.text, "valid": self.valid, "category": self.category,
                "detail": self.detail}  # fmt: skip


def strip_thinking(text: str) -> str:
    """``text`` without reasoning traces (see the module docstring)."""
    text = _THINK_BLOCK.sub("", text)
    closing = list(_THINK_CLOSE.finditer(text))
    if closing:
        text = text[closing[-1].end() :]
    opening = _THINK_OPEN.search(text)
    return text[: opening.start()] if opening else text


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


def _is_empty(lines: list[str]) -> bool:
    return all(_PLACEHOLDER.fullmatch(line) for line in lines)


def _echo_marks(task: TaskSpec | None) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(field-label line openings, system prompt openings) that mark an echo: the shipped prompt languages', and
    those of the prompts ``task`` declares (a user's exam in a language nlue ships no prompt words for)."""
    if task is None or not task.prompts:
        return _ECHO_LABELS, _SYSTEM_OPENINGS
    specs = task.prompts.values()
    labels = (*_ECHO_LABELS, *(f"{label}:" for spec in specs for label in spec.field_labels.values()))
    openings = (*_SYSTEM_OPENINGS, *(spec.instruction[:40] for spec in specs))
    return tuple(dict.fromkeys(labels)), tuple(dict.fromkeys(openings))


def _echoes(lines: list[str], question: str | None, language: str, task: TaskSpec | None = None) -> bool:
    labels, openings = _echo_marks(task)
    if any(line.startswith(labels) for line in lines):
        return True
    joined = "\n".join(lines)
    if any(opening in joined for opening in openings):
        return True
    asked = normalize_mcq_text(question, language) if question else ""
    return len(asked) >= 8 and asked in normalize_mcq_text(joined, language)


def _matching(text: str, options: Mapping[str, str], language: str, loose: bool = False) -> list[str]:
    """The letters whose option equals ``text`` after normalisation (and, loosely, case and edge punctuation)."""

    def form(value: str) -> str:
        value = normalize_mcq_text(value, language)
        return value.strip(_EDGE_PUNCTUATION).casefold() if loose else value

    wanted = form(text)
    return [letter for letter in LETTERS if form(options[letter]) == wanted] if wanted else []


def parse_strict(
    output: str | None,
    options: Mapping[str, str],
    *,
    language: str = "ne",
    question: str | None = None,
    error: str | None = None,
    task: TaskSpec | None = None,
) -> ParseResult:
    """The strict reading of ``output`` against the item's ``options`` (A-D -> text); see the module docstring.

    ``error`` is the failure of the request that should have produced the output; ``question``
    (optional) lets a repetition of the question count as an echo, and ``task`` (optional) a repetition of
    its declared prompt's lines. The gold key is never an input.
    """
    if error is not None:
        return ParseResult(None, None, API_ERROR, str(error))
    lines = _lines(strip_thinking(output or ""))
    if _is_empty(lines):
        return ParseResult(None, None, EMPTY)
    plain = [_BULLET.sub("", line, count=1) for line in lines]
    keys = [_KEY.match(line) for line in plain]
    if len(plain) == 2 and keys[0] and (text_line := _TEXT.match(plain[1])):
        key, text = keys[0].group(1).strip(), text_line.group(1).strip()
        if key not in LETTERS:
            return ParseResult(key, text, KEY_NOT_IN_A_TO_D, f"key line holds {key!r}")
        matching = _matching(text, options, language)
        if key in matching:
            return ParseResult(key, text)
        if matching:
            return ParseResult(key, text, KEY_TEXT_DISAGREE, f"the text is option {matching[0]}'s, the key says {key}")
        return ParseResult(key, text, TEXT_MATCHES_NO_OPTION, f"{text!r} is not option {key}'s text")
    key_lines = [match.group(1).strip() for match in keys if match]
    if _echoes(plain, question, language, task) or (not key_lines and _REFUSAL.search("\n".join(plain))):
        return ParseResult(None, None, REFUSAL_OR_ECHO)
    if not key_lines:
        return ParseResult(None, None, NO_KEY_LINE)
    shown = key_lines[0] if len(key_lines) == 1 else None
    return ParseResult(shown, None, MALFORMED, f"{len(plain)} lines, {len(key_lines)} of them key lines")


def parse_lenient(
    output: str | None,
    options: Mapping[str, str],
    *,
    language: str = "ne",
    question: str | None = None,
    error: str | None = None,
    task: TaskSpec | None = None,
) -> ParseResult:
    """The lenient reading of ``output`` (module docstring); report it apart from the strict one."""
    if error is not None:
        return ParseResult(None, None, API_ERROR, str(error))
    lines = _lines(_MARKDOWN.sub("", strip_thinking(output or "")))
    if _is_empty(lines):
        return ParseResult(None, None, EMPTY)
    plain = [_LENIENT_BULLET.sub("", line, count=1) for line in lines]
    texts = [m.group(1).strip() for line in plain if (m := _LENIENT_TEXT.match(line))]
    keys = [key for line in plain if (key := _letter(_LENIENT_KEY.match(line), options, language))]
    if keys:
        letters = sorted({letter for letter, _ in keys})
        if len(letters) > 1:
            return ParseResult(None, None, MALFORMED, f"several keys: {', '.join(letters)}")
        return _checked(letters[0], (texts or [rest for _, rest in keys if rest] or [None])[0], options, language)
    lone = _letter(_LONE_LETTER.match(" ".join(plain)), options, language)
    if lone:
        return _checked(*lone, options, language)
    for candidate in (*texts, " ".join(plain)):
        matching = _matching(candidate, options, language, loose=True)
        if len(matching) == 1:
            return ParseResult(matching[0], candidate)
    if _echoes(plain, question, language, task) or _REFUSAL.search("\n".join(plain)):
        return ParseResult(None, None, REFUSAL_OR_ECHO)
    return ParseResult(None, None, NO_KEY_LINE)


def _letter(match: re.Match[str] | None, options: Mapping[str, str], language: str) -> tuple[str, str] | None:
    """(letter, text after it) of a lenient key match, or None when it commits to no letter."""
    if match is None:
        return None
    wrapped, marked, _, bare, rest = match.groups()[:5]
    lone = match.groups()[5] if len(match.groups()) > 5 else None
    letter = (wrapped or marked or bare or lone or "").upper()
    rest = (rest or "").strip()
    if bare and rest and _matching(rest, options, language, loose=True) != [letter]:
        return None  # "A good question": a capital that starts a sentence, not a key
    return (letter, rest) if letter else None


def _checked(letter: str, text: str | None, options: Mapping[str, str], language: str) -> ParseResult:
    """A lenient key, unless the text beside it is another option's."""
    if text:
        matching = _matching(text, options, language, loose=True)
        if matching and letter not in matching:
            return ParseResult(letter, text, KEY_TEXT_DISAGREE, f"the text is option {matching[0]}'s")
    return ParseResult(letter, text)


def parse_item_output(
    output: str | None,
    item: Mapping[str, Any],
    language: str,
    *,
    lenient: bool = False,
    error: str | None = None,
    task: TaskSpec | None = None,
) -> ParseResult:
    """Parse an output for an exam item; only its options, question and language are read, never its key.
    ``task``: the exam, whose declared prompt lines count as an echo (default: the shipped exams' only)."""
    parse = parse_lenient if lenient else parse_strict
    item_language = str(item.get("language") or language)
    return parse(output, item_options(item), language=item_language, question=item.get("question"), error=error,
                 task=task)  # fmt: skip
