"""`datasets` features of each config, derived from the task registry."""

from __future__ import annotations

import datasets

from nlue.registry.tasks import TaskSpec


def task_features(task: TaskSpec) -> datasets.Features:
    """The typed columns of a built config: inputs, label (ClassLabel or float), idx."""
    columns: dict[str, datasets.features.FeatureType] = {}
    if task.problem_type == "mask_fill":
        columns["sentence"] = datasets.Value("string")
        columns["category"] = datasets.Value("string")
        columns["theme"] = datasets.Value("string")
        columns["answers"] = datasets.List(datasets.Value("string"))
    else:
        for name in task.input_fields:
            columns[name] = datasets.Value("string")
        assert task.label_field is not None  # registry invariant, checked by tests
        if task.problem_type == "regression":
            columns[task.label_field] = datasets.Value("float64")
        else:
            columns[task.label_field] = datasets.ClassLabel(names=list(task.label_names))
    columns["idx"] = datasets.Value("int32")
    return datasets.Features(columns)
