"""Export the tasks as lm-evaluation-harness task YAMLs, so that `lm_eval --include_path DIR` runs them.

That is how a user spreads a large model over many GPUs (lm-eval's vLLM backend) without
nlue writing a distributed engine. Each exported task is a ``multiple_choice`` task whose
``doc_to_text`` is the kind's own Jinja template (:meth:`~nlue.registry.kinds.TaskKind.llm_template`)
and whose ``doc_to_choice`` are the verbalised labels: the very strings nlue's own
log-likelihood evaluator scores, so that the two agree (a test runs both on a tiny model).

Written per task and language: ``nlue_<task>_<lang>.yaml`` (task name ``nlue_<task>_<lang>``),
plus a group ``nlue_<benchmark>_<lang>`` per benchmark and language (listing only the tasks
written; ``nlue_<benchmark>_all_<lang>`` where a task file's benchmark has its task's name). The
dataset is the one given (a Hub id or a local built repo; lm-eval loads it with
``datasets.load_dataset(dataset, task)``), and only the tasks it has a config for are written:
a YAML lm_eval cannot load is worse than none (:func:`dataset_configs`, :func:`tasks_to_export`).

With ``wordings="all"`` (``--wordings all``) each other wording of a task's prompt in that language
(:mod:`nlue.registry.wordings`; ours for the shipped tasks) is a task of its own,
``nlue_<task>_<lang>_<wording>``, rendered from the task as that wording words it (the same template code,
so the same text nlue's evaluator scores for that wording), and a group ``nlue_<task>_<lang>_wordings``
holds the main task and its wordings; the benchmark groups keep the main wording alone, so their
averages stay those of a run without wordings.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from nlue.errors import NlueError
from nlue.registry.kinds import CAUSAL_LM_LOGLIKELIHOOD
from nlue.registry.tasks import TaskSpec, get_task
from nlue.registry.wordings import MAIN, WORDING_CHOICES, worded_task, wording_names

logger = logging.getLogger(__name__)

TARGET_DELIMITER = " "  # lm-eval puts it between the prompt and each choice; so does nlue's evaluator
FEWSHOT_DELIMITER = "\n\n"
EXPORT_VERSION = 1.0
DEFAULT_LANGUAGES = ("en", "ne")  # the prompt languages exported when none are named


def exportable(task: TaskSpec) -> bool:
    """Tasks scored by causal-LM log-likelihood over labelled choices that have prompts."""
    return CAUSAL_LM_LOGLIKELIHOOD in task.kind.evaluators and bool(task.prompts)


def task_name(task: TaskSpec, language: str, wording: str = MAIN) -> str:
    """``nlue_<task>_<lang>``, and ``nlue_<task>_<lang>_<wording>`` for a wording other than the main one."""
    return f"nlue_{task.name}_{language}" + ("" if wording == MAIN else f"_{wording}")


def wordings_group_name(task: TaskSpec, language: str) -> str:
    return f"nlue_{task.name}_{language}_wordings"


def group_name(benchmark: str, language: str) -> str:
    """``nlue_<benchmark>_<lang>``; ``nlue_<benchmark>_all_<lang>`` for a benchmark named as one of its tasks (a
    task file's own benchmark), whose group would otherwise take its task's name (and file)."""
    from nlue.registry.tasks import TASKS

    return f"nlue_{benchmark}_all_{language}" if benchmark in TASKS else f"nlue_{benchmark}_{language}"


def task_config(task: TaskSpec, language: str, dataset: str, wording: str = MAIN) -> dict[str, Any]:
    """One lm-eval task as a dict (what the YAML holds), in one wording of its prompt (the main one by default)."""
    template, choices = task.kind.llm_template(worded_task(task, language, wording), language)
    splits = task.splits
    fewshot = "train" if "train" in splits else ("demo" if "demo" in splits else None)
    config: dict[str, Any] = {
        "task": task_name(task, language, wording),
        "dataset_path": dataset,
        "dataset_name": task.name,
        "test_split": "test",
        "output_type": "multiple_choice",
        "doc_to_text": template,
        "doc_to_choice": list(choices),
        "doc_to_target": f"{{{{ {task.label_field} }}}}",
        "target_delimiter": TARGET_DELIMITER,
        "fewshot_delimiter": FEWSHOT_DELIMITER,
        "metric_list": [
            {"metric": "acc", "aggregation": "mean", "higher_is_better": True},
            {"metric": "acc_norm", "aggregation": "mean", "higher_is_better": True},
        ],
        "metadata": {"version": EXPORT_VERSION, "exported_by": "nlue", "language": language},
    }
    if wording != MAIN:
        config["metadata"]["wording"] = wording
    if fewshot:
        config["fewshot_split"] = fewshot
    if "validation" in splits:
        config["validation_split"] = "validation"
    return config


@dataclass(frozen=True)
class LmEvalExport:
    """What :func:`export_lm_eval` wrote, and what it left out and why."""

    files: tuple[Path, ...]  # every YAML written: tasks, then groups
    tasks: tuple[str, ...]  # the lm-eval task names written (``nlue_<task>_<lang>``)
    groups: tuple[str, ...]  # the group names written (``nlue_<benchmark>_<lang>``)
    not_in_dataset: tuple[str, ...]  # exportable tasks left out because the dataset has no such config
    no_prompt: tuple[str, ...]  # ``nlue_<task>_<lang>`` not written: the task has no prompt in that language
    other_languages: tuple[str, ...]  # prompt languages the written tasks have that were not asked for
    configs: tuple[str, ...] | None  # the dataset's configs; None when they could not be determined
    wording_groups: tuple[str, ...] = ()  # ``nlue_<task>_<lang>_wordings`` written (``wordings="all"``)


def dataset_configs(dataset: str) -> tuple[str, ...] | None:
    """The configs ``datasets`` finds in ``dataset``: the names lm-eval can load it by (``dataset_name``).

    A local folder is read offline, from its dataset card's ``configs`` (what ``nlue build``
    writes; ``<config>/`` folders without the card load only as one ``default`` config, and
    lm-eval could not load them by task name either). A Hub id asks the Hub; when it cannot
    answer (offline, not found, no access) this logs a warning and returns None.
    """
    import datasets

    try:
        return tuple(datasets.get_dataset_config_names(dataset))
    except (OSError, ValueError) as exc:
        if Path(dataset).is_dir():
            raise NlueError(f"{dataset} holds no dataset that datasets can load ({exc})") from exc
        logger.warning(
            "could not read the configs of %s (%s); exporting every task asked for: lm_eval fails on any it lacks",
            dataset,
            exc,
        )
        return None


def tasks_to_export(
    dataset: str, configs: Collection[str] | None, tasks: Sequence[str] | None = None
) -> tuple[list[TaskSpec], list[str]]:
    """(the tasks to export, the exportable tasks left out because ``dataset`` lacks them).

    ``tasks`` given: each must be exportable and a config of the dataset, or NlueError says which
    is not and what the dataset has. ``tasks`` None: every exportable task the dataset has, and
    NlueError when it has none. ``configs`` None (unknown): the tasks asked for, unchecked.
    """
    from nlue.registry.tasks import TASKS

    if tasks:
        chosen = [get_task(name) for name in tasks]
        refused = [t.name for t in chosen if not exportable(t)]
        if refused:
            raise NlueError(
                f"cannot export {', '.join(refused)}: only tasks scored by log-likelihood over labelled choices "
                "(with prompts in the registry) go to lm-evaluation-harness"
            )
        missing = [t.name for t in chosen if configs is not None and t.name not in configs]
        if missing:
            raise NlueError(
                f"{dataset} has no config for {', '.join(missing)}, so lm_eval could not load "
                f"{'it' if len(missing) == 1 else 'them'}; its configs: {', '.join(configs or ()) or 'none'}"
            )
        return chosen, []
    candidates = [t for t in TASKS.values() if exportable(t)]
    if configs is None:
        return candidates, []
    chosen = [t for t in candidates if t.name in configs]
    if not chosen:
        raise NlueError(
            f"{dataset} has a config for none of the tasks nlue exports to lm-eval "
            f"({', '.join(t.name for t in candidates)}); its configs: {', '.join(configs) or 'none'}"
        )
    skipped = [t.name for t in candidates if t.name not in configs]
    if skipped:
        logger.info("not exported, %s has no such config: %s", dataset, ", ".join(skipped))
    return chosen, skipped


def prompt_languages(tasks: Sequence[TaskSpec], languages: Iterable[str] | None) -> list[str]:
    """The languages to export ``tasks`` in: ``languages``, each of which some task must have a prompt in.

    None: those of :data:`DEFAULT_LANGUAGES` the tasks have. A language no task has is an
    NlueError naming the languages they do have, never an empty export.
    """
    available = sorted({language for task in tasks for language in task.prompts})
    asked = list(dict.fromkeys(DEFAULT_LANGUAGES if languages is None else languages))
    if languages is None and any(language in available for language in asked):
        return [language for language in asked if language in available]
    unknown = [language for language in asked if language not in available]
    if unknown or not asked:
        raise NlueError(
            f"no task to export ({', '.join(t.name for t in tasks)}) has a prompt in {', '.join(unknown)}; "
            f"their prompt languages: {', '.join(available)}"
        )
    return asked


def export_lm_eval(
    out: Path,
    dataset: str,
    tasks: Sequence[str] | None = None,
    languages: Iterable[str] | None = None,
    wordings: str = MAIN,
) -> LmEvalExport:
    """Write the YAMLs of ``tasks`` that ``dataset`` has (default: every exportable one it has) into ``out``.

    Checked before anything is written (:func:`tasks_to_export`, :func:`prompt_languages`): a
    task the dataset lacks is refused when asked for by name and left out otherwise, so that
    every YAML written is one lm_eval can load. ``languages`` None: :data:`DEFAULT_LANGUAGES`.
    ``wordings="all"``: each other wording of a prompt too, and a group of them per task and language.
    """
    from nlue.registry.tasks import benchmark_of

    if wordings not in WORDING_CHOICES:
        raise NlueError(f"wordings must be one of {', '.join(WORDING_CHOICES)}, got {wordings!r}")
    configs = dataset_configs(dataset)
    chosen, not_in_dataset = tasks_to_export(dataset, configs, tasks)
    chosen_languages = prompt_languages(chosen, languages)
    out.mkdir(parents=True, exist_ok=True)
    files: list[Path] = []
    names: list[str] = []
    no_prompt: list[str] = []
    groups: dict[str, list[str]] = {}
    worded: dict[str, list[str]] = {}
    for task in chosen:
        for language in chosen_languages:
            if language not in task.prompts:
                no_prompt.append(task_name(task, language))
                continue
            config = task_config(task, language, dataset)
            path = out / f"{config['task']}.yaml"
            _write_yaml(path, config)
            files.append(path)
            names.append(config["task"])
            groups.setdefault(group_name(benchmark_of(task).name, language), []).append(config["task"])
            others = wording_names(task, language)[1:] if wordings != MAIN else ()
            for wording in others:
                config = task_config(task, language, dataset, wording)
                path = out / f"{config['task']}.yaml"
                _write_yaml(path, config)
                files.append(path)
                names.append(config["task"])
            if others:
                worded[wordings_group_name(task, language)] = [task_name(task, language, w) for w in (MAIN, *others)]
    clash = sorted(set(names) & {*groups, *worded})
    if clash:
        raise NlueError(f"a wording's task name is also a group's: {', '.join(clash)}; rename the wording")
    for group, members in {**groups, **worded}.items():
        path = out / f"{group}.yaml"
        _write_yaml(path, {"group": group, "task": members, "metadata": {"version": EXPORT_VERSION}})
        files.append(path)
    if no_prompt:
        logger.info("not exported, no prompt in that language: %s", ", ".join(no_prompt))
    stale = sorted({p.name for p in out.glob("nlue_*.yaml")} - {p.name for p in files})
    if stale:
        logger.warning(
            "%s also holds %s, not written by this export; lm_eval --include_path %s reads them too",
            out,
            ", ".join(stale),
            out,
        )
    logger.info("wrote %d lm-eval task files to %s", len(files), out)
    other = sorted({language for task in chosen for language in task.prompts} - set(chosen_languages))
    return LmEvalExport(
        tuple(files),
        tuple(names),
        tuple(groups),
        tuple(not_in_dataset),
        tuple(no_prompt),
        tuple(other),
        configs,
        tuple(worded),
    )


def _write_yaml(path: Path, data: dict[str, Any]) -> None:
    tmp = path.with_name(f".{path.name}.partial")
    tmp.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False, width=1000), encoding="utf-8")
    tmp.replace(path)
