"""The model options of every command, declared once: ``--model``, ``--endpoint``, ``--backend`` and the rest.

:func:`add_model_options` puts them on a parser (each command chooses the defaults that fit it);
:func:`model_spec_from_args` turns the parsed options into a :class:`~nlue.lm.spec.ModelSpec` for
:func:`nlue.lm.factory.load_model`. One spelling and one meaning for every command that loads a model.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from nlue.lm.backends import LANGUAGE_MODEL, backends_for
from nlue.lm.spec import (
    AUTO,
    DEFAULT_API_KEY_ENV,
    DEFAULT_CONCURRENCY,
    DEFAULT_MAX_RETRIES,
    DEFAULT_TIMEOUT,
    ModelSpec,
)

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
        if prices:
            group.add_argument("--prompt-price-per-1k", type=float, help="price of 1,000 prompt tokens (cost estimate)")
            group.add_argument("--completion-price-per-1k", type=float, help="price of 1,000 answer tokens")
    group.add_argument("--device", help="a local model's device: cuda, cpu, mps (default: the best there is)")
    group.add_argument("--dtype", default=AUTO,
                       help="a local model's dtype: auto (bfloat16 on CUDA, else float32), float32, bfloat16, float16")  # fmt: skip
    group.add_argument(batch_flag, dest="model_batch_size", type=int, default=batch_size,
                       help="a local model's batch size" + (" (%(default)s)" if batch_size else ""))  # fmt: skip
    if journal:
        group.add_argument("--journal", type=Path,
                           help="answer journal, which makes a run resumable (default <results-dir>/journals/<model>.jsonl)")  # fmt: skip
    return group


def default_journal(results_dir: Path, model: str) -> Path:
    """Where a model's answers are journalled when ``--journal`` is not given."""
    from nlue.lm.slug import model_slug

    return Path(results_dir) / "journals" / f"{model_slug(model)}.jsonl"


def model_spec_from_args(
    args: argparse.Namespace, *, journal: Any = None, model: str | None = None, **options: Any
) -> ModelSpec:
    """The :class:`ModelSpec` the parsed model options describe; ``journal`` and ``model`` override the options."""
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
