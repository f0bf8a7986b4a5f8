"""``--prompt-language``, spelled the same way for every benchmark: ``en``, ``native`` or ``both``.

``native`` is the benchmark's own language: Nepali for NLUE and neDIOM, the exam's language for
the exams (Nepali or Urdu). ``both`` runs English and then the native prompt.
"""

from __future__ import annotations

PROMPT_LANGUAGE_CHOICES: tuple[str, ...] = ("en", "native", "both")
PROMPT_LANGUAGE_HELP = "English, the benchmark's own language, or both one after the other (default %(default)s)"


def prompt_languages(choice: str, native: str) -> list[str]:
    """The language codes ``choice`` stands for, ``native`` being the benchmark's own language code."""
    if choice == "both":
        return ["en", native]
    return [native if choice == "native" else choice]
