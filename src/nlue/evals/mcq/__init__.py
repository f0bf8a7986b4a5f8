"""Native-language multiple-choice exams in the UrduMMLU protocol: prompts, answer parsing, scores.

* :mod:`nlue.evals.mcq.prompts` renders an item (zero- or k-shot, chat messages or plain text);
* :mod:`nlue.evals.mcq.parse` reads a model's two-line answer, strictly (and, apart, leniently);
* :mod:`nlue.evals.mcq.score` turns parsed answers into accuracy over all items, accuracy over
  parseable items and the invalid rate, per domain, subdomain and level.

The gold key enters only in :mod:`nlue.evals.mcq.score`: prompts and parsers never see it.
"""

from nlue.evals.mcq.parse import INVALID_CATEGORIES, ParseResult, parse_lenient, parse_strict
from nlue.evals.mcq.prompts import SEED, draw_demonstrations, render, show_prompt, system_prompt, user_prompt
from nlue.evals.mcq.score import score_answers

__all__ = [
    "INVALID_CATEGORIES",
    "SEED",
    "ParseResult",
    "draw_demonstrations",
    "parse_lenient",
    "parse_strict",
    "render",
    "score_answers",
    "show_prompt",
    "system_prompt",
    "user_prompt",
]
