"""The model options of every command, declared once: ``--model``, ``--endpoint``, ``--backend`` and the rest.

:func:`add_model_options` puts them on a parser (each command chooses the defaults that fit it);
:func:`model_spec_from_args` turns the parsed options into a :class:`~nlue.lm.spec.ModelSpec` for
:func:`nlue.lm.factory.load_model`. One spelling and one meaning for every command that loads a model.
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path
from typing import Any

from nlue.errors import NlueError
from nlue.lm.backends import LANGUAGE_MODEL, backends_for
from nlue.lm.spec import (
    AUTO,
    DEFAULT_API_KEY_ENV,
    DEFAULT_CONCURRENCY,
    DEFAULT_MAX_RETRIES,
    DEFAULT_TIMEOUT,
    ModelSpec,
)

logger = logging.getLogger(__name__)

MODEL_HELP = "a local folder or Hub id; with --endpoint, the name the server knows the model by"


def add_model_options(
    parser: argparse.ArgumentParser,
    *,
    roles: tuple[str, ...] = (LANGUAGE_MODEL,),
    required: bool = True,
    model_help: str = MODEL_HELP,
    batch_size: int | None = None,
    concurrency: int = DEFAULT_CONCURRENCY,
    timeout: float = DEFAULT_TIMEOUT,
    endpoint: bool = True,
    journal: bool = True,
    prices: bool = False,
    batch_flag: str = "--batch-size",
) -> argparse._ArgumentGroup:
    """Add the model options to ``parser``; the HTTP ones only when the command takes ``--endpoint``.

    ``batch_flag`` renames the local batch size for a command whose ``--batch-size`` means something
    else (``nlue translate``: rows per request); :func:`model_spec_from_args` reads it either way.
    """
    group = parser.add_argument_group("model")
    group.add_argument("--model", required=required, help=model_help)
    names = [b.name for role in roles for b in backends_for(role)]
    group.add_argument("--backend", choices=[AUTO, *names], default=AUTO,
                       help="how to load or call the model (default: chosen from --model and --endpoint)")  # fmt: skip
    if endpoint:
        group.add_argument("--endpoint", help="base URL of an OpenAI-compatible server, e.g. http://127.0.0.1:8000/v1")
        group.add_argument("--api-key-env", default=DEFAULT_API_KEY_ENV,
                           help="variable holding the API key (%(default)s); read, never printed or stored; a "
                           "user:password in --endpoint goes as HTTP basic auth instead")  # fmt: skip
        group.add_argument("--concurrency", type=int, default=concurrency,
                           help="requests in flight at once (%(default)s); 1 for a server that answers one at a "
                           "time, such as plain `transformers serve`")  # fmt: skip
        group.add_argument("--timeout", type=float, default=timeout,
                           help="seconds for each try of a request: its whole answer, however slowly it comes "
                           "(%(default)s)")  # fmt: skip
        group.add_argument("--max-retries", type=int, default=DEFAULT_MAX_RETRIES,
                           help="tries again of a failed request (%(default)s)")  # fmt: skip
        group.add_argument("--batch-api", action="store_true",
                           help="send the requests as batches through the server's batch API (/v1/files, /v1/batches: "
                           "about half the price at OpenAI, answers within 24 h); a killed run resumes its batches")  # fmt: skip
        if prices:
            group.add_argument("--prompt-price-per-1k", type=float, help="price of 1,000 prompt tokens (cost estimate)")
            group.add_argument("--completion-price-per-1k", type=float, help="price of 1,000 answer tokens")
    group.add_argument("--device", help="a local model's device: cuda, cpu, mps (default: the best there is)")
    group.add_argument("--dtype", default=AUTO,
                       help="a local model's dtype: auto (bfloat16 on CUDA, else float32), float32, bfloat16, float16")  # fmt: skip
    group.add_argument(batch_flag, dest="model_batch_size", type=int, default=batch_size,
                       help="a local model's batch size" + (" (%(default)s)" if batch_size else ""))  # fmt: skip
    add_cache_options(parser, journal=journal)
    return group


def add_cache_options(parser: argparse.ArgumentParser, *, journal: bool = True) -> None:
    """``--cache-dir``, ``--no-cache`` and (``journal``) ``--journal``: where answers are looked up and kept."""
    group = parser.add_argument_group(
        "answer cache",
        "every answer is kept in a cache shared by all runs, so a rerun, a killed run run again or a second sweep "
        "asks only what is missing (see `nlue cache report`)",
    )
    where = group.add_mutually_exclusive_group()
    where.add_argument("--cache-dir", type=Path,
                       help="folder of the shared answer cache, answers.sqlite (default: $NLUE_ANSWER_CACHE, else $NLUE_CACHE, "
                       "else $XDG_CACHE_HOME/nlue, else ~/.cache/nlue); on a network file system give each node a "
                       "local one")  # fmt: skip
    where.add_argument("--no-cache", action="store_true",
                       help="ask every request afresh and keep no answer: such a run cannot be resumed")  # fmt: skip
    if journal:
        where.add_argument("--journal", type=Path, metavar="FILE",
                           help="a cache of this run's own (an answers.sqlite file) instead of the shared one")  # fmt: skip


def open_answer_store(args: argparse.Namespace) -> Any:
    """The store the cache options name: an :class:`AnswerCache` (shared or ``--journal``), or none kept."""
    from nlue.lm.answer_cache import AnswerCache, NoAnswerCache, cache_path

    if getattr(args, "no_cache", False):
        return NoAnswerCache()
    return AnswerCache(getattr(args, "journal", None) or cache_path(getattr(args, "cache_dir", None)))


def old_journal(results_dir: Path, model: str) -> Path:
    """Where an older nlue journalled a model's answers (``<results-dir>/journals/<model>.jsonl``)."""
    from nlue.lm.slug import model_slug

    return Path(results_dir) / "journals" / f"{model_slug(model)}.jsonl"


def note_old_journal(old: Path) -> None:
    """Say so when an older nlue's journal lies where this run would have used it: its answers are not read."""
    if old.is_file():
        logger.warning("%s holds answers of an older nlue, which are no longer read; `nlue cache import %s` adds "
                       "them to the answer cache", old, old)  # fmt: skip


def model_spec_from_args(
    args: argparse.Namespace, *, journal: Any = None, model: str | None = None, **options: Any
) -> ModelSpec:
    """The :class:`ModelSpec` the parsed model options describe; ``journal`` and ``model`` override the options."""
    if getattr(args, "batch_api", False):
        if not getattr(args, "endpoint", None):
            raise NlueError("--batch-api sends requests to a server's batch API: give its --endpoint")
        options = {"batch_api": True, **options}
    return ModelSpec(
        model=model or args.model,
        endpoint=getattr(args, "endpoint", None),
        backend=getattr(args, "backend", AUTO),
        api_key_env=getattr(args, "api_key_env", DEFAULT_API_KEY_ENV),
        concurrency=getattr(args, "concurrency", DEFAULT_CONCURRENCY),
        timeout=getattr(args, "timeout", DEFAULT_TIMEOUT),
        max_retries=getattr(args, "max_retries", DEFAULT_MAX_RETRIES),
        device=getattr(args, "device", None),
        dtype=getattr(args, "dtype", AUTO),
        batch_size=getattr(args, "model_batch_size", None),
        journal=journal if journal is not None else getattr(args, "journal", None),
        prompt_price_per_1k=getattr(args, "prompt_price_per_1k", None),
        completion_price_per_1k=getattr(args, "completion_price_per_1k", None),
        show_progress=not getattr(args, "quiet", False),
        options=options,
    )
