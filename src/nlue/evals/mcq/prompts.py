"""Prompts of the multiple-choice exams (facts §6 and §8): one item as chat messages or as plain text, 0-k shots.

What a prompt holds (the words per language are the exam's task file's ``prompts``; without a task,
the shipped exams', :data:`nlue.registry.mcq.MCQ_PROMPTS`):

* the **system prompt**: the instruction, ending with the two answer lines the model must
  write (English, Nepali or Urdu instruction; the lines themselves stay in English);
* the **user prompt** of an item, exactly the paper's layout::

      Subject: {domain} – {subdomain}
      Level: {level}
      Question: {question}
      A) {A}
      B) {B}
      C) {C}
      D) {D}
      Answer key:
      Answer text:

  with the labels in the prompt language (``विषय``/``तह``/``प्रश्न``, ``مضمون``/``سطح``/``سوال``);
* for k shots, k **demonstrations** from the task's ``demo`` split, each the user prompt of
  a pool item followed by its correct answer in the two-line format
  (``Answer key: B`` / ``Answer text: <option B>``).

Decisions where the paper is silent (ambiguities 12.4, 12.5):

* **Chat** (instruct models, ``chat=True``): a system message, then per demonstration a
  user message and the assistant's two-line answer, then the item's user message. The
  caller applies the model's chat template to these messages.
* **Plain text** (base models, ``chat=False``): the system prompt, a blank line, each
  demonstration as its user prompt *without* the two empty answer lines followed by its two
  answer lines, then the item the same way, ending with a newline: a base model continues
  with ``Answer key: ...``, as the demonstrations show, instead of facing an empty form.
* **Drawing demonstrations**: per item, ``random.Random(f"{seed}:{item id}")`` samples k
  items of the pool without replacement (seed 42, as the paper's runs), so an item's
  demonstrations do not depend on the order items are run in or on a resumed run; a pool
  item with the item's id or its question and options is never drawn; demonstrations come
  from the whole pool, not the item's subject (a pool of a few hundred has too few per
  subject), in the order drawn.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Mapping, Sequence
from typing import Any

from nlue.errors import NlueError
from nlue.registry.kinds.mcq_text import KEY_LABEL, TEXT_LABEL, exam_prompt, normalize_mcq_text
from nlue.registry.kinds.multiple_choice import item_options, key_letter
from nlue.registry.mcq import MCQ_PROMPTS
from nlue.registry.spec import PromptSpec, TaskSpec

logger = logging.getLogger(__name__)

SEED = 42
PAPER_SHOTS: tuple[int, ...] = (0, 1, 3, 5)
Messages = list[dict[str, str]]


def prompt_spec(language: str, task: TaskSpec | None = None) -> PromptSpec:
    """The prompt words of ``language``: ``task``'s, as its task file declares them, or (no task) the shipped
    exams' (en, ne, ur); an error naming the languages there are."""
    prompts = task.prompts if task is not None else MCQ_PROMPTS
    try:
        return prompts[language]
    except KeyError:
        owner = f"task {task.name!r} has" if task is not None else "there is"
        raise NlueError(f"{owner} no exam prompt in {language!r}; expected one of: {', '.join(prompts)}") from None


def system_prompt(language: str, task: TaskSpec | None = None) -> str:
    return prompt_spec(language, task).instruction


def _values(item: Mapping[str, Any]) -> dict[str, str]:
    """The fields a prompt shows, from a built row (columns A-D) or a source item (an ``options`` object)."""
    missing = [name for name in ("question", "domain", "subdomain", "level") if item.get(name) in (None, "")]
    if missing:
        raise NlueError(f"item {item.get('id', '?')!r} lacks {', '.join(missing)}, which the prompt shows")
    values = {name: str(item[name]) for name in ("question", "domain", "subdomain", "level")}
    values.update(item_options(item))
    return values


def item_body(item: Mapping[str, Any], language: str, task: TaskSpec | None = None) -> str:
    """Subject, level, question and options of ``item`` in the prompt language: no answer lines."""
    return exam_prompt(prompt_spec(language, task).field_labels, _values(item))


def user_prompt(item: Mapping[str, Any], language: str, task: TaskSpec | None = None) -> str:
    """The paper's user prompt: the item, then the empty ``Answer key:`` and ``Answer text:`` lines."""
    return f"{item_body(item, language, task)}\n{KEY_LABEL}\n{TEXT_LABEL}"


def answer_lines(item: Mapping[str, Any]) -> str:
    """The correct two-line answer of a demonstration item (pool items only: it reads the key)."""
    letter = key_letter(item["correct_key"])
    return f"{KEY_LABEL} {letter}\n{TEXT_LABEL} {item_options(item)[letter]}"


def _identity(item: Mapping[str, Any]) -> tuple[str, ...]:
    language = str(item.get("language") or "ne")
    options = item_options(item)
    return tuple(normalize_mcq_text(str(text), language) for text in (item["question"], *options.values()))


def draw_demonstrations(
    item: Mapping[str, Any], pool: Sequence[Mapping[str, Any]], shots: int, seed: int = SEED
) -> list[Mapping[str, Any]]:
    """``shots`` pool items for ``item``, drawn as the module docstring says (never the item itself)."""
    if shots < 0:
        raise NlueError(f"shots must be 0 or more, got {shots}")
    if shots == 0:
        return []
    item_id = str(item.get("id") or "\x1f".join(_identity(item)))
    identity = _identity(item)
    candidates = [d for d in pool if str(d.get("id")) != item_id and _identity(d) != identity]
    if len(candidates) < shots:
        raise NlueError(
            f"{shots}-shot prompts need {shots} demonstrations; the pool offers {len(candidates)} for item {item_id!r}"
        )
    if shots not in PAPER_SHOTS:
        logger.info("%d-shot prompts: the paper ran 0, 1, 3 and 5 shots", shots)
    return random.Random(f"{seed}:{item_id}").sample(candidates, shots)


def render(
    item: Mapping[str, Any],
    language: str,
    shots: int = 0,
    pool: Sequence[Mapping[str, Any]] = (),
    chat: bool = True,
    seed: int = SEED,
    task: TaskSpec | None = None,
) -> Messages | str:
    """The prompt of ``item``: chat messages (``chat=True``) or one plain text, with ``shots`` demonstrations,
    in the words of ``task``'s prompt (default: the shipped exams' prompt in ``language``)."""
    demonstrations = draw_demonstrations(item, pool, shots, seed)
    system = system_prompt(language, task)
    if chat:
        messages: Messages = [{"role": "system", "content": system}]
        for demo in demonstrations:
            messages.append({"role": "user", "content": user_prompt(demo, language, task)})
            messages.append({"role": "assistant", "content": answer_lines(demo)})
        messages.append({"role": "user", "content": user_prompt(item, language, task)})
        return messages
    blocks = [system, *(f"{item_body(demo, language, task)}\n{answer_lines(demo)}" for demo in demonstrations)]
    return "\n\n".join([*blocks, item_body(item, language, task)]) + "\n"


def show_prompt(rendered: Messages | str) -> str:
    """A rendered prompt as a person reads it (``--show-prompt``): the text, or each message under its role."""
    if isinstance(rendered, str):
        return rendered
    return "\n\n".join(f"[{message['role']}]\n{message['content']}" for message in rendered)
