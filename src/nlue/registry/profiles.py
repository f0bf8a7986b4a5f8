"""The language profiles a task file may name: which text rules normalise the task's text.

One list, kept here, that the task-file schema and validator read. A profile's rules are
chosen by its name: ``nepali`` is today's normaliser (dandas, Devanagari joiners);
``urdu`` (Arabic script) and ``plain`` (any other script) are named now so that a task
file can declare them, and get their own rules in :mod:`nlue.text` (issue 30, item 3).

When a task file names no profile, the first of its languages decides
(:func:`default_profile`): Nepali text gets ``nepali``, Urdu ``urdu``, any other ``plain``,
so that no other language goes through the Nepali rules unasked.
"""

from __future__ import annotations

from types import MappingProxyType

# Profile -> the languages (ISO 639-1/639-3) it is the default for.
LANGUAGE_PROFILES: MappingProxyType[str, tuple[str, ...]] = MappingProxyType(
    {
        "nepali": ("ne", "nep", "npi"),
        "urdu": ("ur", "urd"),
        "plain": (),
    }
)
FALLBACK_PROFILE = "plain"


def default_profile(languages: tuple[str, ...] | list[str]) -> str:
    """The profile for a task in ``languages`` that names none: by its first language, else ``plain``."""
    first = languages[0] if languages else ""
    return next((name for name, codes in LANGUAGE_PROFILES.items() if first in codes), FALLBACK_PROFILE)
