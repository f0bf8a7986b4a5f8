"""What the dataset card says of tasks a user declared in task files: not the papers' tasks nlue ships.

A user's task has no paper behind it in nlue: its description, languages, licence, citation, metrics,
domains and sources are what its task file declares, and the card says so, in place of the sentences
about NLUE's paper. The repo carries each such task file under ``tasks/``
(:mod:`nlue.registry.task_file.carry`), and the card lists them and says how they are found.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from nlue.registry.kinds.base import CardText
from nlue.registry.spec import TaskSpec
from nlue.registry.task_file.load import is_user_task

if TYPE_CHECKING:
    from nlue.data.report import ConfigReport

__all__ = ["citation_text", "declared_card_text", "declared_task_lines", "is_user_task", "task_files_section"]

USER_TASK = "a user-declared task: declared in its own task file, not one of the papers' tasks nlue ships"


def declared_card_text(configs: Mapping[str, ConfigReport]) -> CardText:
    """The opening, scoring and limitations paragraphs of a repo of user-declared tasks."""
    tasks = [cfg.task for cfg in configs.values()]
    names = ", ".join(f"`{task.name}`" for task in tasks)
    one = len(tasks) == 1
    intro = (
        (f"The task {names} is declared by its own task file: a user-declared task" if one else
         f"The tasks {names} are declared by their own task files: user-declared tasks")
        + ", not one of the papers' benchmarks that nlue ships (NLUE, the native-language exams, neDIOM). What "
        "each config holds, in which language, under which licence and how to cite it is what its task file "
        "declares; this repo carries the files under `tasks/`."
    )  # fmt: skip
    metrics = "; ".join(f"`{task.name}`: {', '.join(task.metrics)} (primary `{task.primary_metric}`)" for task in tasks)
    scoring = (
        "Score predictions with the `nlue` commands and evaluate module, which compute the metrics the task files "
        f"declare: {metrics}. nlue finds the tasks through this repo (`--dataset`) or through `--task-file`."
    )
    limitations = (
        "The data and its labels are the task files' authors'; nlue checked each row against the declared fields "
        "and labels and counted what it removed (see How it was built), but did not review the items."
    )
    languages = tuple(dict.fromkeys(code for task in tasks for code in task.languages))
    return CardText(intro, scoring, limitations, languages)


def declared_task_lines(task: TaskSpec, carried: str | None) -> list[str]:
    """A config's bullets for a user-declared task: where it is declared and what its file says."""
    lines = [
        f"- **Declared by:** {f'the task file `{carried}`' if carried else 'a task file'}; {USER_TASK}",
        f"- **Languages:** {', '.join(task.languages)}; **licence:** {task.license or 'not declared'}; "
        f"**version:** {task.version}",
        f"- **Category:** {task.category}",
        f"- **Inputs:** {', '.join(f'`{f}`' for f in task.input_fields)}",
    ]
    if task.label_field:
        labels = f" ({', '.join(task.label_names)})" if task.label_names else ""
        lines.append(
            f"- **Label:** `{task.label_field}`{labels}" + (f" - {task.label_notes}" if task.label_notes else "")
        )
    note = f", {task.primary_metric_note}" if task.primary_metric_note else ""
    lines.append(f"- **Metrics (declared):** {', '.join(task.metrics)}; **primary:** `{task.primary_metric}`{note}")
    if task.domains:
        lines.append(f"- **Domains (declared):** {', '.join(task.domains)}")
    if task.sources:
        lines.append(f"- **Sources (declared):** {'; '.join(task.sources)}")
    if task.paper_total_size:
        train = f"{task.paper_train_size:,}" if task.paper_train_size else "none"
        lines.append(
            f"- **Published sizes (declared):** train {train}, test {task.paper_test_size:,}, "
            f"total {task.paper_total_size:,}"
        )
    return lines


def task_files_section(carried: Sequence[str], repo: str, first: str) -> list[str]:
    """What the repo's ``tasks/`` folder holds and how a command finds it."""
    if not carried:
        return []
    return [
        "## Task files",
        "",
        "This repo carries the task file of each user-declared config, its `data:` left out (the Parquet files "
        "hold the data):",
        "",
        *(f"- `{path}`" for path in carried),
        "",
        "A command that reads the repo finds them, with no `--task-file`: "
        f"`nlue baseline --dataset {repo} --tasks {first}` (a Hub id: the file of each task asked for is fetched "
        "with the data's other files). `nlue tasks validate` checks them; `--task-file` takes them too.",
        "",
    ]


def citation_text(tasks: Sequence[TaskSpec]) -> list[str]:
    """The Citation section's body: the BibTeX the tasks declare, or a sentence where none does."""
    citations = list(dict.fromkeys(task.citation for task in tasks if task.citation))
    if not citations:
        return ["No citation is declared in the task file(s)."]
    return ["```bibtex", "\n\n".join(citations), "```"]
