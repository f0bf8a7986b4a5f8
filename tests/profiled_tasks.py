"""Shipped tasks with another language profile, and a throwaway profile, for the tests of issue 30, item 3.

Until task files give every TaskSpec a ``profile`` field (item 1), a subclass carries it; the
builder reads it as ``getattr(task, "profile", None)`` either way.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from nlue.registry.spec import TaskSpec
from nlue.text.rules import LanguageProfile

# A throwaway profile, as a user would declare one: Sinhala keeps a joiner after its virama (al-lakuna),
# where it selects a conjunct ("ශ්‍රී"), and drops one anywhere else.
SINHALA = LanguageProfile(
    name="sinhala_test",
    summary="Sinhala: joiners kept where they select a conjunct; invisible and direction characters removed.",
    rules="* NFC; ZWJ/ZWNJ kept between Sinhala letters or beside the al-lakuna; stray ones removed.",
    script="\u0d80-\u0dff",
    removed="\u200b\u2060\ufeff\u00ad\u200e\u200f\u202a-\u202e\u2066-\u2069",
    tidy_joiners=True,
    joiner_signs="\u0dca",
)


@dataclass(frozen=True)
class _ProfiledTask(TaskSpec):
    profile: str | None = None


def profiled(task: TaskSpec, profile: str) -> TaskSpec:
    """``task`` as it is, normalised by the language profile called ``profile``."""
    values = {f.name: getattr(task, f.name) for f in fields(TaskSpec) if f.name != "profile"}
    return _ProfiledTask(**values, profile=profile)
