"""neDIOM idiomaticity detection over the 8 input variants: zero-shot, 5-shot and 10-shot, scored and written.

:func:`run_eval` loads the task (a built dataset repo, a Hub id, a folder of source files
such as ``nlue idioms split`` writes, or the embedded sample), scores every chosen
variant in every chosen setting, and writes **one results file per variant and setting**
in the shared format (:class:`nlue.results.RunResult`), under
``<results-dir>/<name>__<setting>__<variant>/<task>.json``. One file per cell keeps one
primary score per file, as every reader of the results folder expects; the cell's
coordinates are in ``details`` (``setting``, ``variant`` with its number, context and
whether the idiom was given), so a leaderboard rebuilds the 8 x 3 table from the files.

Metrics of a file: ``macro_f1`` (primary; the paper's metric) and ``accuracy`` with 95%
bootstrap intervals (:mod:`nlue.scoring`). Zero-shot adds ``macro_f1_norm``/``accuracy_norm``
(the prediction by length-normalised log-likelihood, :mod:`nlue.idioms.zero_shot`).
Few-shot gives the mean over seeds, ``macro_f1_sd`` (sample sd over seeds) and an interval
for the mean: items are resampled once per bootstrap draw and every seed's predictions
are scored on the same draw, so the interval is about the test items and the sd about
the training seeds. ``details`` also holds the floors (always idiomatic, always literal)
and the per-item predictions, so that two runs can be compared item by item.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from nlue.errors import NlueError
from nlue.evals.verify import add_wording_tests
from nlue.idioms.few_shot import FewShotSettings, run_seeds
from nlue.idioms.table import Cell, floors
from nlue.registry.kinds.idiomaticity import CONTEXTS, VARIANTS, InputVariant
from nlue.registry.nediom import TABLE3_SETTINGS
from nlue.registry.tasks import TaskSpec

logger = logging.getLogger(__name__)

SETTINGS: tuple[str, ...] = TABLE3_SETTINGS
CONTEXT_CHOICES: tuple[str, ...] = (*CONTEXTS, "all")
IDIOM_CHOICES: Mapping[str, tuple[bool, ...]] = {"with": (True,), "without": (False,), "both": (True, False)}
DEFAULT_SEEDS = 5
ZERO_SHOT_NOTE = (
    "nlue's zero-shot protocol (the paper states no prompt or label words): macro_f1/accuracy from the label word "
    "with the higher summed log-likelihood after our prompt; *_norm from the log-likelihood per character."
)
FEW_SHOT_NOTE = (
    "Few-shot fine-tuning as the paper (3 epochs, AdamW); learning rate, batch size, head and seeds are ours. Every "
    "seed trains on the same k-shot items (the pool is fixed); the seed changes the head's initialisation, dropout "
    "and batch order. macro_f1 is the mean over seeds, macro_f1_sd their sample sd, the interval bootstraps items."
)


def shots_per_label(setting: str) -> int:
    """0 for zero-shot, k for k-shot."""
    if setting not in SETTINGS:
        raise NlueError(f"--setting must be one of {', '.join(SETTINGS)}, got {setting!r}")
    return 0 if setting == SETTINGS[0] else int(setting.split("-")[0])


def select_variants(contexts: Sequence[str], idiom: str) -> list[InputVariant]:
    """The variants of the chosen context windows (or ``all``) with, without or both, in the paper's order."""
    unknown = [c for c in contexts if c not in CONTEXT_CHOICES]
    if unknown or not contexts:
        raise NlueError(f"--context must be among {', '.join(CONTEXT_CHOICES)}, got {', '.join(unknown) or 'none'}")
    if idiom not in IDIOM_CHOICES:
        raise NlueError(f"--idiom must be one of {', '.join(IDIOM_CHOICES)}, got {idiom!r}")
    wanted = set(CONTEXTS) if "all" in contexts else set(contexts)
    return [v for v in VARIANTS if v.context in wanted and v.with_idiom in IDIOM_CHOICES[idiom]]


# ------------------------------------------------------------------ data
def _from_source_folder(folder: Path, task: TaskSpec, split: str) -> list[dict[str, Any]]:
    """A split's source file (``<split>.jsonl``, ``.csv``, ...) read and checked row by row with the task's rules."""
    from nlue.data.rows import RowConverter
    from nlue.data.sources import read_records
    from nlue.errors import RowProblem

    paths = sorted(p for p in folder.glob(f"{split}.*") if p.suffix in {".jsonl", ".json", ".csv", ".tsv", ".parquet"})
    if not paths:
        raise NlueError(f"{folder}: no {split} file (expected {split}.jsonl, as `nlue idioms split` writes)")
    converter, items = RowConverter(task), []
    for number, record in read_records(paths[0]):
        row = converter.convert(str(paths[0]), number, record)
        if isinstance(row, RowProblem):
            raise NlueError(f"{row.file}: row {row.row}: field {row.field!r}: {row.reason}")
        if isinstance(row, dict):
            items.append(row)
    return items


def load_items(
    dataset: str | None, task: TaskSpec, limit: int | None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Any]]:
    """(few-shot pool, test items, a description for the results) from a built repo, Hub id, source folder or sample."""
    import datasets

    from nlue.data.access import dataset_description, resolve_dataset

    if limit is not None and limit < 1:
        raise NlueError(f"--limit must be at least 1, got {limit}")
    folder = Path(str(dataset)) if dataset else None
    if folder is not None and folder.is_dir() and not (folder / "README.md").is_file():
        pool, test = (_from_source_folder(folder, task, split) for split in ("train", "test"))
        description = {"id": str(dataset), "path": str(folder), "config": task.name, "is_sample": False}
    else:
        if folder is not None and not folder.exists() and (folder.is_absolute() or str(dataset).startswith(".")):
            raise NlueError(f"--dataset {dataset!r}: no such folder (give a built repo, a source folder or a Hub id)")
        source = str(dataset) if dataset else resolve_dataset(None, task)
        try:
            data = datasets.load_dataset(source, task.name)
        except Exception as exc:  # datasets raises many types (not found, offline, bad config): all the user's to fix
            raise NlueError(f"--dataset {source!r}: cannot load config {task.name!r} ({exc})") from None
        missing = [s for s in ("train", "test") if s not in data]
        if missing:
            raise NlueError(f"--dataset {source!r}: config {task.name!r} has no {' or '.join(missing)} split")
        pool, test = list(data["train"]), list(data["test"])
        if dataset:
            description = dataset_description(str(dataset), task.name, "test")
        else:
            description = {"id": "nlue sample data", "path": source, "config": task.name, "is_sample": True}
    test = test[:limit] if limit else test
    if not test:
        raise NlueError(f"{description['id']}: the test split of {task.name} is empty")
    description.update(split="test", items=len(test))
    return pool, test, description


# ------------------------------------------------------------------ scoring
def few_shot_problem(predictions: np.ndarray, references: np.ndarray) -> Any:
    """A scoring problem whose statistic is the mean over seeds; items (not seeds) are what the bootstrap resamples."""
    from nlue.scoring import ScoringProblem
    from nlue.scoring.classification import CLASSIFICATION_METRICS, classification_statistic

    per_seed = classification_statistic(2)

    def mean_over_seeds(outputs: np.ndarray, refs: np.ndarray | None) -> dict[str, np.ndarray]:
        runs = [per_seed(outputs[..., s], refs) for s in range(outputs.shape[-1])]
        return {name: np.mean([run[name] for run in runs], axis=0) for name in CLASSIFICATION_METRICS}

    return ScoringProblem(np.asarray(predictions).T.copy(), np.asarray(references), mean_over_seeds,
                          CLASSIFICATION_METRICS, value_range=(0.0, 1.0))  # fmt: skip


def zero_shot_metrics(task: TaskSpec, scores: Any, refs: np.ndarray, resamples: int | None, seed: int) -> dict:
    """macro-F1 and accuracy of the summed (primary) and the per-character (``*_norm``) argmax, with intervals."""
    from nlue.scores import score_task

    metrics = score_task(task.name, scores.predictions, refs, bootstrap_resamples=resamples, seed=seed)
    normalised = score_task(task.name, scores.normalised_predictions("chars"), refs, bootstrap_resamples=resamples,
                            seed=seed)  # fmt: skip
    for key, value in normalised.items():
        base, _, suffix = key.partition("_ci_")
        metrics[f"{base}_norm" + (f"_ci_{suffix}" if suffix else "")] = value
    return {k: float(v) for k, v in metrics.items()}


def few_shot_metrics(task: TaskSpec, predictions: np.ndarray, refs: np.ndarray, resamples: int | None,
                     seed: int) -> tuple[dict[str, float], list[float]]:  # fmt: skip
    """Mean over seeds with its interval, the sd over seeds, and each seed's macro-F1."""
    from nlue.scores import score_task
    from nlue.scoring.bootstrap import scores_with_intervals

    per_seed = [float(score_task(task.name, row, refs)["macro_f1"]) for row in predictions]
    metrics = scores_with_intervals(few_shot_problem(predictions, refs), None, resamples, seed=seed)
    if len(per_seed) > 1:
        metrics["macro_f1_sd"] = float(np.std(per_seed, ddof=1))
    return {k: float(v) for k, v in metrics.items()}, per_seed


# ------------------------------------------------------------------ the run
@dataclass
class EvalRequest:
    """What `nlue idioms eval` asks for; ``zero_shot`` scores items of a variant (``scores(items, variant)``)."""

    model: str
    task: TaskSpec
    settings: Sequence[str]
    variants: Sequence[InputVariant]
    results_dir: Path
    name: str
    dataset: str | None = None
    language: str = "en"
    seeds: Sequence[int] = tuple(range(DEFAULT_SEEDS))
    few_shot: FewShotSettings = field(default_factory=FewShotSettings)
    bootstrap_resamples: int = 1000
    seed: int = 42
    limit: int | None = None
    zero_shot: Callable[[], Any] | None = None  # builds the scorer on first use (loading a model is slow)
    overwrite: bool = False  # replace results files of another identity, or complete ones with a partial run
    wordings: str = "main"  # "all": zero-shot cells also asked in every other prompt wording (nlue.idioms.wordings)


@dataclass
class EvalReport:
    cells: list[Cell]
    floors: dict[str, float]
    paths: list[Path]
    is_sample: bool
    test_items: int


def _result(request: EvalRequest, setting: str, variant: InputVariant, metrics: dict[str, float],
            details: dict[str, Any], description: dict[str, Any], extra: dict[str, Any],
            identity: dict[str, Any] | None = None) -> Any:  # fmt: skip
    from nlue.results import RunResult

    shots = shots_per_label(setting)
    return RunResult(
        task=request.task.name, model=request.model, kind="zero-shot" if shots == 0 else "fine-tune",
        metrics=metrics, dataset=description, identity=identity, base_model=request.model if shots else None,
        seed=request.seed if shots == 0 else request.seeds[0],
        hyperparameters={"setting": setting, "shots_per_label": shots, "input_variant": variant.name, **extra},
        details={"setting": setting, "variant": {"number": variant.number, "context": variant.context,
                 "with_idiom": variant.with_idiom, "name": variant.name}, **details},
        notes=ZERO_SHOT_NOTE if shots == 0 else FEW_SHOT_NOTE,
    )  # fmt: skip


def variant_folder(name: str, setting: str, variant: InputVariant) -> str:
    """``<name>__<setting>__v<N>-<context>-<with|without>-idiom``: the folder of one cell's results file."""
    context = variant.context.replace("+", "-")
    return f"{name}__{setting}__v{variant.number}-{context}-{'with' if variant.with_idiom else 'without'}-idiom"


def zero_shot_label(setting: str, language: str, mode: str, limit: int | None = None, wordings: str = "main") -> str:
    """The setting part of a zero-shot folder: the prompt language and the mode change the scores; a partial
    run (``--limit``) and a run in every wording (``-wordings-all``) each have a folder of their own."""
    from nlue.evals.llm.wordings import run_suffix
    from nlue.run_identity import limit_suffix

    mode_part = "-generate" if mode == "generate" else ""
    return f"{setting}-{language}{mode_part}{run_suffix(wordings)}{limit_suffix(limit)}"


def _cell_identity(request: EvalRequest, setting: str, variant: InputVariant, everything: Sequence[Any],
                   scored: int, train: Sequence[Any], scorer: Any) -> dict[str, Any]:  # fmt: skip
    """The run identity of one cell (:mod:`nlue.run_identity`): the scorer's model, or the encoder fine-tuned."""
    from nlue.run_identity import local_model, model_run_identity, run_identity, split_facts

    k = shots_per_label(setting)
    facts = split_facts(everything, scored, train)
    settings: dict[str, Any] = {"input_variant": variant.name, "bootstrap_resamples": request.bootstrap_resamples}
    if k == 0:
        from nlue.evals.llm.wordings import identity_settings

        if scorer.mode == "generate":
            settings |= {"chat": scorer.chat, "max_new_tokens": scorer.max_new_tokens}
        settings |= identity_settings(request.task, request.language, request.wordings)
        return model_run_identity(scorer.model, request.task.name, facts, mode=scorer.mode, shots=0,
                                  prompt_language=request.language, limit=request.limit, seed=request.seed,
                                  settings=settings)  # fmt: skip
    settings |= {"seeds": list(request.seeds), **request.few_shot.describe()}
    return run_identity(request.task.name, local_model(request.model, "few-shot fine-tuning"), facts,
                        mode="fine-tune", shots=k, limit=request.limit, seed=request.seeds[0], settings=settings)  # fmt: skip


def _plan(request: EvalRequest, everything: Sequence[Any], scored: int, pool: Sequence[Any]) -> tuple[list, Any]:
    """Every cell to run, as (setting, k, training items, variant, folder, identity), each checked against the
    results file it would replace before any is scored (:func:`nlue.results.check_replace`); and the scorer."""
    from nlue.idioms.split import shots
    from nlue.results import check_replace, task_result_path

    plan, scorer = [], None
    for setting in request.settings:
        k = shots_per_label(setting)
        train = shots(pool, k) if k else []
        if k == 0:
            if request.zero_shot is None:
                raise NlueError("zero-shot needs a scorer (a causal or masked LM)")
            scorer = scorer or request.zero_shot()
            label = zero_shot_label(setting, request.language, scorer.mode, request.limit, request.wordings)
        else:
            from nlue.run_identity import limit_suffix

            label = setting + limit_suffix(request.limit)
        for variant in request.variants:
            folder = variant_folder(request.name, label, variant)
            identity = _cell_identity(request, setting, variant, everything, scored, train, scorer)
            check_replace(task_result_path(request.results_dir, folder, request.task.name), identity,
                          overwrite=request.overwrite)  # fmt: skip
            plan.append((setting, k, train, variant, folder, identity))
    return plan, scorer


def _generated(scorer: Any, test: Sequence[Mapping[str, Any]], ids: list[str], refs: np.ndarray,
               variant: InputVariant, request: EvalRequest, folder: str,
               resamples: int | None) -> tuple[dict, dict, list[dict]]:  # fmt: skip
    """Metrics and details of one variant answered by generation; its raw outputs, gold last, beside the results."""
    from nlue.evals.llm import label_generation as gen

    prompts, outputs, words = scorer.answers(test, variant, request.language)
    gen.require_answers(outputs, f"{request.task.name} {variant.name}")
    strict, lenient, rows = gen.answer_rows(ids, prompts, outputs, words, refs.tolist())
    extras = [{"output": r["output"], "verdict": r["verdict"], "category": r["strict"]["category"]} for r in rows]
    metrics = gen.label_scores(strict, refs.tolist(), len(words), resamples, request.seed)
    raw = gen.write_rows(request.results_dir / folder / request.task.name / "raw_outputs.jsonl", rows)
    details = {"predictions": [p.label for p in strict], "label_words": list(words),
               "invalid_categories": dict(gen.INVALID_CATEGORIES), "lenient": gen.lenient_summary(lenient, refs.tolist()),
               "files": {"raw_outputs": str(raw.relative_to(request.results_dir))}}  # fmt: skip
    return metrics, details, extras


def run_eval(request: EvalRequest) -> EvalReport:
    """Score every chosen variant in every chosen setting; write one results file per cell.

    Every cell's results file is checked before the first is scored: one of another identity, or a complete
    one where this run is partial, stops the run unless ``request.overwrite``.
    """
    from nlue.evals.llm.wordings import FIELD, SECTION, Asked, require_wordings
    from nlue.idioms.wordings import cell_wordings
    from nlue.predictions import attach, prediction_rows
    from nlue.results import write_result

    require_wordings([request.task], request.language, request.wordings)
    if not request.seeds:
        raise NlueError("--seeds must be at least 1")
    pool, everything, description = load_items(request.dataset, request.task, None)
    if request.limit is not None and request.limit < 1:
        raise NlueError(f"--limit must be at least 1, got {request.limit}")
    test = everything[: request.limit] if request.limit else everything
    description["items"] = len(test)
    refs = np.asarray([int(item["label"]) for item in test], dtype=np.int64)
    floor_values = floors(request.task.name, refs)
    resamples = request.bootstrap_resamples or None
    cells, paths = [], []
    ids = [str(item.get("id", i)) for i, item in enumerate(test)]
    plan, scorer = _plan(request, everything, len(test), pool)
    for setting, k, train, variant, folder, identity in plan:
        started = time.perf_counter()
        details: dict[str, Any] = {"floors": floor_values, "item_ids": ids}
        if k == 0:
            if scorer.mode == "generate":
                metrics, more, extras = _generated(scorer, test, ids, refs, variant, request, folder, resamples)
                details |= more
                predicted: list[Any] = more["predictions"]
                extra = {"prompt_language": request.language, "mode": "generate", "scorer": scorer.describe(),
                         "primary": "macro-F1 of the strictly parsed answers (an invalid answer is wrong)"}  # fmt: skip
            else:
                scores = scorer.scores(test, variant, request.language)
                metrics = zero_shot_metrics(request.task, scores, refs, resamples, request.seed)
                details |= {"predictions": scores.predictions.tolist(), "label_words": list(scores.choices),
                            "loglikelihoods": np.round(scores.loglikelihoods, 4).tolist()}  # fmt: skip
                predicted = scores.predictions.tolist()
                extras = [{"loglikelihoods": dict(zip(scores.choices, np.round(row, 4).tolist(), strict=True))}
                          for row in scores.loglikelihoods]  # fmt: skip
                extra = {"prompt_language": request.language, "mode": "loglik", "primary": "summed log-likelihood",
                         "scorer": scorer.describe()}  # fmt: skip
            robust = cell_wordings(scorer, request.task, request.wordings, test, ids, refs, variant, request.language,
                                   Asked(metrics, predicted, extras), resamples, request.seed, zero_shot_metrics)  # fmt: skip
            if robust is not None:
                details[SECTION] = robust.section
                extras = [{**e, FIELD: r} for e, r in zip(extras, robust.records, strict=True)]
            cell = Cell(setting, variant, metrics["macro_f1"], metrics.get("macro_f1_ci_low"),
                        metrics.get("macro_f1_ci_high"))  # fmt: skip
        else:
            predictions = run_seeds(request.model, request.task, train, test, variant, request.seeds,
                                    request.few_shot)  # fmt: skip
            metrics, per_seed = few_shot_metrics(request.task, predictions, refs, resamples, request.seed)
            details |= {"seeds": list(request.seeds), "macro_f1_per_seed": per_seed,
                        "training_item_ids": [str(t.get("id")) for t in train],
                        "predictions": predictions.tolist()}  # fmt: skip
            extra = {"seeds": list(request.seeds), **request.few_shot.describe()}
            predicted = predictions.T.tolist()  # per item, one prediction per seed
            extras = [{"seeds": list(request.seeds)}] * len(test)
            cell = Cell(setting, variant, metrics["macro_f1"], metrics.get("macro_f1_ci_low"),
                        metrics.get("macro_f1_ci_high"), metrics.get("macro_f1_sd"), len(per_seed))  # fmt: skip
        result = _result(request, setting, variant, metrics, details, description, extra, identity)
        result.timings = {"seconds": round(time.perf_counter() - started, 3)}
        rows = prediction_rows(request.task, test, predicted, refs.tolist(), extras)
        add_wording_tests(result, request.task, rows, resamples, request.seed)
        attach(result, rows, request.results_dir, folder)
        paths.append(write_result(result, request.results_dir, folder, overwrite=request.overwrite))
        cells.append(cell)
        logger.info("%s %s: macro-F1 %s", setting, variant.name, cell.text())
    return EvalReport(cells, floor_values, paths, bool(description.get("is_sample")), len(test))
