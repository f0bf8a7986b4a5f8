"""Native-language multiple-choice exams in the UrduMMLU protocol: prompts, answer parsing, scores.

* :mod:`nlue.evals.mcq.prompts` renders an item (zero- or k-shot, chat messages or plain text);
* :mod:`nlue.evals.mcq.parse` reads a model's two-line answer, strictly (and, apart, leniently);
* :mod:`nlue.evals.mcq.score` turns parsed answers into accuracy over all items, accuracy over
  parseable items and the invalid rate, per domain, subdomain and level;
* :mod:`nlue.evals.mcq.loglik` scores the options by log-likelihood instead (lm-eval's way);
* :mod:`nlue.evals.mcq.run` runs an exam on a language model and writes every file
  (:func:`~nlue.evals.mcq.run.run_mcq`; ``nlue llm mcq`` on the command line), and
  :mod:`nlue.evals.mcq.report` writes the raw outputs, tables, chart and prompt-language gap.

The gold key enters only in :mod:`nlue.evals.mcq.score` (and the scored ``raw_outputs.jsonl``):
prompts and parsers never see it. The runner is imported from its module, so that importing
this package stays light.
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
