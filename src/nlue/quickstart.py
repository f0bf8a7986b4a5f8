"""The README's main job on the embedded sample: build, summarise, load back, check."""

from __future__ import annotations

import json
import logging
import warnings
from pathlib import Path

from nlue.data.build import build_repo
from nlue.data.discover import task_sources_from_folder
from nlue.data.report import BuildOptions
from nlue.data.sample import sample_data_dir
from nlue.data.summary import build_summary
from nlue.errors import NlueError
from nlue.registry.tasks import TASK_NAMES, TASKS

logger = logging.getLogger(__name__)

GMET_BASELINE = "baseline:bigram"
DEMO_TASK = "sa"  # the one task the tiny encoder is fine-tuned on, to show the recipe (and feed the Space)


def load_and_check(repo_dir: Path) -> list[str]:
    """Load every config with `datasets.load_dataset`; check features against the registry."""
    import datasets

    datasets.disable_progress_bars()  # twelve small configs: the bars would drown the summary
    lines = []
    for name, task in ((n, TASKS[n]) for n in TASK_NAMES):  # the NLUE build: the other benchmarks build apart
        ds = datasets.load_dataset(str(repo_dir), name)
        if task.label_field and task.label_names:
            names = ds[task.splits[0]].features[task.label_field].names
            if tuple(names) != task.label_names:
                raise NlueError(f"{name}: built label names {names} differ from the registry's {task.label_names}")
        sizes = ", ".join(f"{split} {ds[split].num_rows}" for split in ds)
        lines.append(f"load_dataset({str(repo_dir)!r}, {name!r}) -> {sizes}")
    return lines


def _silence_libraries() -> None:
    """Keep the main job's output to our own summary: library progress bars and load reports off."""
    import datasets
    import transformers

    datasets.disable_progress_bars()
    # peft asks transformers a deprecated question while setting up LoRA; nothing for a user to act on.
    warnings.filterwarnings("ignore", message=".*is_gradient_checkpointing.*", category=FutureWarning)
    transformers.utils.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()
    logging.getLogger("nlue").setLevel(logging.WARNING)


def run_gmet_baseline(dataset: str, out: Path, results_dir: Path):
    """Score the download-free GMET baseline; returns its RunResult (chart and judging files in ``out``)."""
    from nlue.gmet.cli import main as gmet_main
    from nlue.lm.slug import model_slug
    from nlue.results import RunResult

    code = gmet_main(["--model", GMET_BASELINE, "--dataset", dataset, "--out", str(out),
                      "--results-dir", str(results_dir), "--quiet"])  # fmt: skip
    if code:
        raise NlueError(f"the GMET baseline failed (exit {code})")
    data = json.loads((results_dir / model_slug(GMET_BASELINE) / "gmet.json").read_text(encoding="utf-8"))
    return RunResult(**data)


def print_scores(results: dict, overall: bool = True) -> None:
    """Each task's primary score with its interval, then the NLUE score (an nlue convention).

    GMET scored automatically (exact match with listed answers) is shown but kept out of the
    NLUE score: the paper's GMET numbers are native speakers' verdicts, not comparable.
    """
    from nlue.registry.tasks import NLUE_SCORE_NOTE
    from nlue.scores import nlue_score

    print(f"  {'task':<6} {'primary metric':<22} {'score':>6}  95% CI")
    counted = {}
    for task, result in results.items():
        name = result.primary_metric
        low, high = result.metrics.get(f"{name}_ci_low"), result.metrics.get(f"{name}_ci_high")
        ci = f"{low:.3f}-{high:.3f}" if low is not None and high is not None else "-"
        automatic = result.verdicts == "automatic"
        marker = "  (automatic verdicts: not in the NLUE score)" if automatic else ""
        print(f"  {task:<6} {name:<22} {result.primary_score:>6.3f}  {ci}{marker}")
        if not automatic:
            counted[task] = result.metrics
    if not overall:
        return
    summary = nlue_score(counted)
    missing = f" (missing: {', '.join(summary.missing)})" if summary.missing else ""
    print(f"  NLUE score over {len(summary.task_scores)} tasks: {summary.score:.3f}{missing}")
    print(f"  ({NLUE_SCORE_NOTE})")


def run_quickstart(out: Path, train: bool = True) -> int:
    """Build the sample benchmark, load it back, train and score the baselines, and say what to open next."""
    import transformers

    # Quiet for the main job only: a caller that goes on in the same process (a test, a notebook) keeps its levels.
    ours, theirs = logging.getLogger("nlue").level, transformers.utils.logging.get_verbosity()
    _silence_libraries()
    try:
        return _run_quickstart(out, train)
    finally:
        logging.getLogger("nlue").setLevel(ours)
        transformers.utils.logging.set_verbosity(theirs)


def _run_quickstart(out: Path, train: bool) -> int:
    from nlue.training.tiny_baseline import BASELINE_NAME, train_baselines

    print("1/3 Building the embedded SAMPLE data (written by the nlue developers; not the NLUE benchmark)...")
    options = BuildOptions(is_sample=True, license="apache-2.0", show_progress=False)
    result = build_repo(task_sources_from_folder(sample_data_dir()), out, options)
    print(build_summary(result))
    print("\n2/3 Loading every config back with datasets.load_dataset (offline, from the folder):")
    for line in load_and_check(result.repo_dir):
        print("  " + line)
    results_dir = out / "results"
    if train:
        from nlue.evals.baseline_cli import MODEL_ID, run_baseline

        print(f"\n3/3 Scoring the non-neural baseline {MODEL_ID} on every task (TF-IDF character n-grams "
              "and a linear model, trained in seconds; a floor, not a Nepali model)...")  # fmt: skip
        results = run_baseline(str(result.repo_dir), "all", results_dir)
        print(f"\n    and GMET, zero-shot, with the {GMET_BASELINE} baseline (no pretrained masked LM offline):")
        results["gmet"] = run_gmet_baseline(str(result.repo_dir), out / "gmet", results_dir)
        print_scores(results)
        print(f"\n    The fine-tuning recipe, demonstrated on {DEMO_TASK}: the {BASELINE_NAME} (4 layers, trained "
              "from scratch) with LoRA adapters, the checkpoint the Space serves...")  # fmt: skip
        demo = train_baselines(str(result.repo_dir), out / "models", results_dir, tasks=[DEMO_TASK], lora=True)
        print_scores(demo, overall=False)
    print(f"\nDone. Card: {result.repo_dir / 'README.md'}. Results: {results_dir}/. GMET chart: {out / 'gmet'}/.")
    print(f"Publish the dataset with `nlue push {result.repo_dir} --repo-id <you>/nlue --dry-run`.")
    if train:
        print(f"Open the Space on what was just built: `nlue space --models {out / 'models'} --results {results_dir}`, "
              "then http://127.0.0.1:7860")  # fmt: skip
    return 0
