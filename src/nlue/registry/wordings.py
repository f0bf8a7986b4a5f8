"""A task's prompt in each of its wordings: the main one and those its task file adds (ours, not a paper's).

A task file's prompt in one language is its *main* wording (named :data:`MAIN`); the prompt may list
more under ``wordings`` (:class:`~nlue.registry.spec.PromptWording`), each replacing some of the
main prompt's text (instruction, field labels, answer cue, answer or number line) and never its
label words. :func:`worded_task` gives the task as one wording asks it: the same task with that
language's prompt, answer line and number line replaced, so that every evaluator renders it with
its usual code and the main wording's prompts are, byte for byte, those of a run without wordings.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from types import MappingProxyType

from nlue.errors import NlueError
from nlue.registry.declaration import _canonical
from nlue.registry.spec import IdiomPrompt, PromptSpec, PromptWording, TaskSpec

MAIN = "main"  # the name of the prompt as the task file writes it, before its wordings
ALL = "all"  # --wordings all: every wording of the prompt language
WORDING_CHOICES: tuple[str, ...] = (MAIN, ALL)


def wording_names(task: TaskSpec, language: str) -> tuple[str, ...]:
    """The names of ``task``'s wordings in ``language``, the main one first."""
    return (MAIN, *(w.name for w in task.prompt_wordings.get(language, ())))


def _wording(task: TaskSpec, language: str, name: str) -> PromptWording:
    for wording in task.prompt_wordings.get(language, ()):
        if wording.name == name:
            return wording
    offered = ", ".join(wording_names(task, language))
    raise NlueError(f"task {task.name!r} has no {language!r} prompt wording {name!r}; it has: {offered}")


def worded_task(task: TaskSpec, language: str, name: str) -> TaskSpec:
    """``task`` asked in ``language`` with the wording ``name`` (``task`` itself for the main one)."""
    if name == MAIN:
        return task
    wording = _wording(task, language, name)
    changes: dict[str, object] = {}
    if language in task.prompts:
        main = task.prompts[language]
        prompt = PromptSpec(
            wording.instruction or main.instruction,
            MappingProxyType({**main.field_labels, **wording.field_labels}),
            wording.answer_cue or main.answer_cue,
            main.label_words,
        )
        changes["prompts"] = MappingProxyType({**task.prompts, language: prompt})
    if language in task.idiom_prompts:
        idiom = task.idiom_prompts[language]
        labels = wording.field_labels
        changes["idiom_prompts"] = MappingProxyType({**task.idiom_prompts, language: IdiomPrompt(
            wording.instruction or idiom.instruction_with_idiom,
            wording.instruction_without_idiom or idiom.instruction_without_idiom,
            labels.get("idiom", idiom.idiom_label), labels.get("context", idiom.context_label),
            wording.answer_cue or idiom.answer_cue, idiom.label_words,
        )})  # fmt: skip
    if wording.answer_line is not None:
        changes["answer_lines"] = MappingProxyType({**task.answer_lines, language: wording.answer_line})
    if wording.number_line is not None:
        changes["number_lines"] = MappingProxyType({**task.number_lines, language: wording.number_line})
    return dataclasses.replace(task, **changes)


def wordings_fingerprint(task: TaskSpec, language: str) -> str:
    """SHA-256 of ``task``'s wordings in ``language`` (what a ``--wordings all`` run's identity adds to the
    task's declaration fingerprint, which holds the main prompt)."""
    value = _canonical(task.prompt_wordings.get(language, ()))
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
