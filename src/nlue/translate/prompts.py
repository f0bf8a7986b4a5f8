"""What a language model is asked to translate, and how its answer is read.

A request carries one batch of rows of one class, as a JSON array of numbered items that
hold only the row's text fields: the label never leaves this process (it is attached after
translation, because a label can change with the language, and a model that sees it could
bend the translation towards it). The answer must be a JSON array with one object per item,
numbered as sent and holding exactly the fields sent, each a non-empty string; anything
else (prose around it, a missing or extra item, a truncated array) is a failed answer,
which the batching layer retries, then splits.

``PROMPT_VERSION`` goes into every translated row's provenance and into each request, so
a changed prompt is asked afresh rather than answered from an older run's journal.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence

from nlue.lm.base import ChatMessage, GenerationRequest
from nlue.registry.spec import TaskSpec

PROMPT_VERSION = "nlue-translate-v1"
_FENCE = re.compile(r"^```(?:json)?\s*\n(.*)\n```$", re.DOTALL)

SYSTEM = (
    "You translate English text into Nepali for a language-understanding benchmark. "
    "Write natural, fluent Nepali in Devanagari, as a native speaker would write it; do not translate word by word. "
    "Keep the meaning of every item exactly, including anything that makes it true or false, similar or "
    "different, grammatical or not. Keep names of people, places, brands and products as names (write them in "
    "Devanagari as Nepali writers do, or keep them as they are when they have no Nepali form), keep numbers and "
    "years as numbers, and keep technical terms that have no Nepali word in romanized form. "
    "Answer with JSON only."
)


class ReplyError(ValueError):
    """An answer that is not the numbered JSON asked for; the message says what was wrong."""


def item_fields(task: TaskSpec) -> tuple[str, ...]:
    """The fields translated: the task's text fields (never its label)."""
    return tuple(name for name in task.text_fields if name != task.label_field)


def _placeholder_rules(task: TaskSpec) -> list[str]:
    spec = task.input_spec
    rules = []
    if spec.blank is not None and spec.blank_field is not None:
        rules.append(
            f'In the field "{spec.blank_field}", keep the blank marker {spec.blank!r} exactly once, where the '
            "missing word goes; the other fields are the words that can fill it, translated so that they fit it."
        )
    if task.mask:
        rules.append(f"Keep the marker {task.mask!r} unchanged.")
    return rules


def user_message(task: TaskSpec, items: Sequence[Mapping[str, str]], attempt: int = 0, review: int = 0) -> str:
    """The request for one batch: the rules, then the numbered items as JSON."""
    fields = item_fields(task)
    numbered = [{"n": i, **{name: item[name] for name in fields}} for i, item in enumerate(items, start=1)]
    shape = ", ".join(f'"{name}": "..."' for name in fields)
    lines = [
        f"Translate the text of each of the {len(items)} items below into Nepali.",
        *_placeholder_rules(task),
        f"Return a JSON array of exactly {len(items)} objects, one per item, in the same order, each "
        f'{{"n": <the item\'s number>, {shape}}}, with no other text before or after it.',
    ]
    if review:
        lines.append(
            f"(Review round {review}: native speakers found earlier translations of these items inadequate; "
            "translate them afresh, faithfully and naturally.)"
        )
    if attempt:
        # Worded differently on each retry, so the retry is a new request (the journal answers a repeated one).
        lines.append(f"(Retry {attempt}: the previous answer was not a JSON array of {len(items)} such objects.)")
    lines += ["", "Items:", json.dumps(numbered, ensure_ascii=False, indent=0)]
    return "\n".join(lines)


def batch_request(
    task: TaskSpec, items: Sequence[Mapping[str, str]], attempt: int, max_new_tokens: int, review: int = 0
) -> GenerationRequest:
    """One chat request for a batch (the prompt version rides in the system message)."""
    system = f"{SYSTEM} [{PROMPT_VERSION}]"
    messages = (ChatMessage("system", system), ChatMessage("user", user_message(task, items, attempt, review)))
    return GenerationRequest(messages=messages, max_new_tokens=max_new_tokens)


def parse_reply(text: str, count: int, fields: Sequence[str]) -> list[dict[str, str]]:
    """The translations of ``count`` items from a reply, in item order; :class:`ReplyError` if it is malformed."""
    body = text.strip()
    fenced = _FENCE.match(body)
    if fenced:  # a fenced JSON block is still only JSON; prose around it is not accepted
        body = fenced.group(1).strip()
    try:
        data = json.loads(body)
    except ValueError as exc:
        raise ReplyError(f"not valid JSON ({exc.msg} at character {exc.pos}; the answer may be cut short)") from None
    if not isinstance(data, list):
        raise ReplyError(f"expected a JSON array, got {type(data).__name__}")
    if len(data) != count:
        raise ReplyError(f"count mismatch: {count} items sent, {len(data)} returned")
    out: list[dict[str, str] | None] = [None] * count
    wanted = {"n", *fields}
    for position, entry in enumerate(data, start=1):
        if not isinstance(entry, dict):
            raise ReplyError(f"entry {position} is not a JSON object")
        if set(entry) != wanted:
            raise ReplyError(f"entry {position} has the keys {sorted(entry)}, expected {sorted(wanted)}")
        number = entry["n"]
        if not isinstance(number, int) or isinstance(number, bool) or not 1 <= number <= count:
            raise ReplyError(f"entry {position} has n={number!r}, expected a number from 1 to {count}")
        if out[number - 1] is not None:
            raise ReplyError(f"item {number} is answered twice")
        values = {name: entry[name] for name in fields}
        empty = [name for name, value in values.items() if not isinstance(value, str) or not value.strip()]
        if empty:
            raise ReplyError(f"item {number}: {', '.join(empty)} is not a non-empty string")
        out[number - 1] = values
    return [entry for entry in out if entry is not None]
