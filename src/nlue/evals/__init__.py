"""Evaluations of language models without fine-tuning, built on the engine in :mod:`nlue.lm`.

Each evaluation renders a task's items as prompts, reads what the model returns and
scores it: the native-language exams (:mod:`nlue.evals.mcq`), the NLUE tasks by
log-likelihood, and the lm-evaluation-harness export (:mod:`nlue.evals.export.lm_eval`).
"""
