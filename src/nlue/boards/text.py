"""The Space's words: titles, introductions, legends and messages, in one place.

Anything that names tasks, metrics or models is built from the registry, not typed here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from nlue.boards import columns as cols
from nlue.boards.columns import primary_metric_name, task_header
from nlue.registry.benchmarks import declared_tasks, is_shipped_task
from nlue.registry.paper import PAPER_CITATION
from nlue.registry.paper_checks import PaperFlag
from nlue.registry.tasks import MASK_PLACEHOLDER, NLUE_SCORE_NOTE, TASK_NAMES, TASKS, TaskSpec
from nlue.registry.views import readme_tasks_table
from nlue.text.direction import is_right_to_left
from nlue.text.safe import markdown_text

TITLE = "NLUE · Nepali Language Understanding Evaluation"
PAGE_TITLE = "NLUE Space"
PAPER_URL = "https://arxiv.org/abs/2411.19244"

INTRO = f"""# 🇳🇵 {TITLE}
Twelve Nepali NLU tasks from the [NLUE paper]({PAPER_URL}). Try a fine-tuned classifier on
your own sentences, fill a GMET blank with a masked language model, browse the data, and
compare results with the paper's reported scores."""

SAMPLE_DATA_NOTICE = (
    "ℹ️ The data browser shows the **embedded sample data**: a few dozen items per task, written by "
    "the nlue developers to try the tools. It is not the NLUE benchmark."
)

TRY_INTRO = (
    "Pick a task, type text in the task's language (Nepali, for NLUE's) into its fields, pick a model, and press "
    "**Predict**. "
    "Only models whose classifier labels match the task (in the registry's order) are offered."
)
GMET_INTRO = (
    f"Write a Nepali sentence with one `{MASK_PLACEHOLDER}` where a word is missing; the masked "
    "language model proposes the words it finds most likely there."
)
GMET_EXAMPLE = f"नेपालको राजधानी {MASK_PLACEHOLDER} हो।"
DATA_INTRO = "Page through any config and split, or draw random rows. Labels are shown by name."

# Markdown, shown on the page:
NO_CLASSIFIER_HINT = (
    "No model is configured for this task. Fine-tune one (`nlue train`) into `build/models/<task>/`, "
    "or list it in the models file (`NLUE_SPACE_MODELS`)."
)
# Plain text, for pop-ups and dropdown hints:
NO_CLASSIFIER = "No model is offered for this task here; pick another task."
NO_MASKED_LM_HINT = "No masked language model is configured; list one in the models file with kind: masked-lm."
NO_MASKED_LM = "No masked language model is offered here."
LOAD_FAILED = "The model {name} could not be loaded ({error}). Pick another one; the Space keeps serving."
CLASSIFY_API = (
    "A classifier's prediction for one example, for scripts: task name, model name as listed in the Space, "
    "and the task's input fields in the order of the Try tab. Answer: the label with every label's "
    "probability (or, for stsb, the score), the model and the size of the batch it ran in."
)
UNEXPECTED = "Something went wrong on our side while handling that request; it has been logged."


def task_choice(task: TaskSpec) -> tuple[str, str]:
    """(label shown, value) of a task in a dropdown."""
    return f"{task_header(task)} · {task.title}", task.name


def languages_text(task: TaskSpec) -> str:
    """The task's languages as the pages show them: ``ur (right to left)``, ``ne``, ``ne, en``."""
    return ", ".join(f"{code} (right to left)" if is_right_to_left(code) else code for code in task.languages)


def is_right_to_left_task(task: TaskSpec) -> bool:
    """Whether the task's main language (its first) is written right to left: its text boxes turn that way."""
    return bool(task.languages) and is_right_to_left(task.languages[0])


def task_text(task: TaskSpec, text: str) -> str:
    """A task's own words for a Markdown component: ours as written; a task file's (a user's) as literal text."""
    return text if is_shipped_task(task) else markdown_text(text)


def task_summary(task: TaskSpec, max_chars: int) -> str:
    """The text under the task dropdown: what the task asks, in which language, and what the model returns."""
    out = task.kind.describe_output(task)
    origin = "" if is_shipped_task(task) else " From a task file (no paper)."
    return (
        f"**{task_text(task, task.title)}** ({task_text(task, task.category)}). {task_text(task, task.description)} "
        f"Language: {languages_text(task)}.{origin} The model returns {out}. Up to {max_chars:,} characters per field."
    )


def sample_notice(configs: Sequence[str], is_sample: Callable[[str], bool]) -> str:
    """The data tab's notice: which of its configs are the embedded sample data (all, some or none)."""
    sample = [name for name in configs if is_sample(name)]
    if not sample:
        return ""
    if len(sample) == len(configs):
        return "\n\n" + SAMPLE_DATA_NOTICE
    own = ", ".join(markdown_text(name) for name in configs if name not in sample)
    return (
        f"\n\nℹ️ The shipped tasks' configs here are the **embedded sample data**: a few dozen items per task, "
        f"written by the nlue developers to try the tools, not the NLUE benchmark. {own}: from the dataset(s) this "
        "Space was given."
    )


def declared_intro() -> str:
    """A line for the page's introduction naming the tasks from task files (empty when there are none)."""
    tasks = declared_tasks()
    if not tasks:
        return ""
    named = ", ".join(f"{markdown_text(t.title)} ({languages_text(t)})" for t in tasks)
    return (
        f"\n\nAlso here, from task files (no paper printed them): {named}. Their runs are below NLUE's on the "
        "*Leaderboard* tab, under *Your tasks*."
    )


def leaderboard_legend() -> str:
    primaries = {}
    for task in (TASKS[name] for name in TASK_NAMES):
        primaries.setdefault(primary_metric_name(task), []).append(task_header(task))
    listed = "; ".join(f"{name}: {', '.join(tasks)}" for name, tasks in primaries.items())
    judged = ", ".join(task_header(TASKS[t]) for t in cols.JUDGED_TASKS)
    return (
        "**The paper's metrics** view shows every number the NLUE paper prints, in the order of its tables, "
        "for its ten encoders (*paper* rows, tables 2-5, kept exactly as printed) and for the results files in "
        "this Space's results folder; it ranks nothing unless you pick a column to sort by. "
        "**Primary metrics + NLUE score** shows one primary metric per task "
        f"({listed}) and their mean, the **NLUE score**. {NLUE_SCORE_NOTE} The mean of Pearson and Spearman for "
        "STS-B is ours too. A row that lacks tasks shows the mean over the tasks it has, marked *incomplete*. "
        f"\n\n{judged}: the paper's scores are native speakers' verdicts on each predicted word; *{judged} auto* "
        "columns hold scores from exact matches with the listed answers, where a right word that the list lacks "
        "counts as wrong. The two are not comparable, and only judged scores enter the NLUE score. Rows of kind "
        "*diagnostic* (answers ranked as candidates) are not scores and never get an NLUE score. "
        "**Flags** mark cells of the paper's tables that fail a consistency check; they are explained below."
    )


def flag_line(flag: PaperFlag) -> str:
    """One flagged cell of the paper's tables in words (Markdown): where, in short, then why."""
    return f"**{flag.model}, {task_header(TASKS[flag.task])}** ({flag.summary}): {flag.explanation}"


def flags_legend() -> str:
    """Every flagged cell of the paper's tables, with its explanation (Markdown)."""
    lines = ["### Flagged cells of the paper's tables", ""]
    for task in (TASKS[name] for name in TASK_NAMES):
        for flags in task.paper_flags.values():
            lines.extend(f"- {flag_line(flag)}" for flag in flags)
    lines.append("")
    lines.append(
        "The numbers stay as printed; `nlue.registry.paper_checks` holds the checks, which any future table goes through."
    )
    return "\n".join(lines)


def ranking_note(sort_by: str) -> str:
    """What the page must say when the rows are ranked by a number the paper never computed."""
    if sort_by == cols.NLUE_SCORE.name:
        return "ranked by the NLUE score, an nlue convention: the paper computes no overall score"
    # A primary that is none of the task's printed metrics is one we derive (STS-B's mean of two correlations).
    derived = [
        c.name for c in cols.TASK_COLUMNS if c.task and TASKS[c.task].primary_metric not in TASKS[c.task].metrics
    ]
    if sort_by in derived:
        return "ranked by the mean of Pearson and Spearman, an nlue convention the paper never computed"
    return ""


ABOUT = f"""## About NLUE

NLUE consolidates and extends benchmarks for Nepali natural-language understanding:
single-sentence classification, similarity and paraphrase, natural-language inference, and
GMET, a zero-shot masked-word test over 75 everyday categories.

{readme_tasks_table()}

This Space is part of the `nlue` package. Models and results it shows are set by its
configuration (`NLUE_SPACE_MODELS`, `NLUE_SPACE_RESULTS`, `NLUE_SPACE_DATASET`).

### Citation

```bibtex
{PAPER_CITATION}
```
"""
