"""The prompts of the shipped tasks that are still kept in Python, by task name.

A shipped task file says ``prompts: shipped`` and the loader takes the task's prompts from
here: NLUE's from :mod:`nlue.registry.nlue_prompts`, the exams' from
:data:`nlue.registry.mcq.MCQ_PROMPTS` (English, and the exam's own language). A later step
writes them into the task files themselves; a user's task file always writes its prompts out.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from nlue.registry.mcq import MCQ_PROMPTS
from nlue.registry.nlue_prompts import NLUE_PROMPTS
from nlue.registry.spec import PromptSpec

_EXAM_LANGUAGES: Mapping[str, tuple[str, ...]] = {"mcq_ne": ("en", "ne"), "mcq_ur": ("en", "ur")}


def shipped_prompts(task: str) -> Mapping[str, PromptSpec]:
    """Prompt language -> prompt of shipped task ``task`` (empty for a task with none, such as stsb today)."""
    if task in _EXAM_LANGUAGES:
        return MappingProxyType({code: MCQ_PROMPTS[code] for code in _EXAM_LANGUAGES[task]})
    return NLUE_PROMPTS.get(task, MappingProxyType({}))
