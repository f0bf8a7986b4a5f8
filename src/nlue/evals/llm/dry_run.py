"""`nlue llm ... --dry-run`: the command run on a stand-in model, to count its requests and estimate their cost.

The command builds its requests as it always does, into a scratch folder that is then removed, and the
stand-in (:class:`nlue.lm.dry_run.DryRunLM`) answers placeholders; nothing is sent and nothing is kept.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import logging
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from nlue.lm.dry_run import DryRunLM, cost_lines
from nlue.lm.factory import AUTO_MODE, load_model
from nlue.lm.http import BATCH_PRICE_SHARE
from nlue.lm.options import model_spec_from_args


def dry_run(args: argparse.Namespace, runs: Callable[[argparse.Namespace, Any], None]) -> int:
    """``runs`` (the command's own loop) on a :class:`DryRunLM`; prints the requests, tokens and cost."""
    model = DryRunLM(load_model(model_spec_from_args(args)))
    with tempfile.TemporaryDirectory(prefix="nlue-dry-run-") as scratch, contextlib.redirect_stdout(io.StringIO()):
        scratch_args = argparse.Namespace(**{**vars(args), "results_dir": Path(scratch), "bootstrap_resamples": 0,
                                             "no_chart": True, "overwrite": True})  # fmt: skip
        logging.disable(logging.INFO)  # the scratch run's "wrote ..." lines would name what is not kept
        try:
            runs(scratch_args, model)
        finally:
            logging.disable(logging.NOTSET)
    where = f" at {model.describe().settings.get('base_url')}" if getattr(args, "endpoint", None) else ""
    print(f"dry run of nlue llm {args.suite} with {args.model}{where}:")
    discount = 1 - BATCH_PRICE_SHARE if getattr(args, "batch_api", False) else None
    for line in cost_lines(model.tally, args.prompt_price_per_1k, args.completion_price_per_1k, discount):
        print(f"  {line}")
    if getattr(args, "endpoint", None) and getattr(args, "mode", None) == AUTO_MODE:
        print("  --mode auto on a server: counted as log-likelihood; one probe request decides at run time")
    print("  answers already in the answer cache are not asked again: a rerun costs less")
    print("dry run: no request was sent and nothing was written")
    return 0
