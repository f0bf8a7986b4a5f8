"""The Gradio page of a metric Space: a table of inputs in, the module's scores out.

evaluate 0.4.6 ships ``evaluate.utils.launch_gradio_widget`` for this, but it is written
against Gradio 3 (``gr.inputs.Dataframe``, ``gr.outputs.Textbox``), names that Gradio 4
removed; on the Gradio 6 runtime our Spaces declare it fails at start-up. This module is
a drop-in with the same call, ``launch_gradio_widget(module)``, built on current Gradio
components. It also accepts a dict of modules (one tab each, e.g. one per NLUE task) and
offers a bootstrap-resamples field, since every NLUE module can return intervals.

Gradio is imported only when a page is built: the scoring package does not depend on it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import datasets

from nlue.errors import NlueError

CellKind = str  # "number" (int or float columns), "str", or "json" (lists, or mixed forms such as GMET references)


def input_columns(module: Any) -> list[tuple[str, CellKind]]:
    """The module's input names and how a table cell of each is read.

    A column that the module accepts in several types (GMET references: answer lists or
    0/1 judgments) is read as JSON, which turns each cell into whichever it holds.
    """
    options = module.features if isinstance(module.features, list) else [module.features]
    kinds = {name: {_kind(option[name]) for option in options} for name in options[0]}
    return [(name, found.pop() if len(found) == 1 else "json") for name, found in kinds.items()]


def _kind(feature: Any) -> CellKind:
    if isinstance(feature, datasets.Value) and feature.dtype.startswith(("int", "float")):
        return "number"
    if isinstance(feature, datasets.Value) and feature.dtype == "string":
        return "str"
    return "json"


def table_to_inputs(rows: Sequence[Sequence[Any]], columns: Sequence[tuple[str, CellKind]]) -> dict[str, list[Any]]:
    """Turn the rows of the page's table into ``compute`` keyword arguments; blank rows are skipped."""
    inputs: dict[str, list[Any]] = {name: [] for name, _ in columns}
    for row_number, row in enumerate(rows, start=1):
        cells = ["" if cell is None else cell for cell in row]
        if all(str(cell).strip() == "" for cell in cells):
            continue
        for (name, kind), cell in zip(columns, cells, strict=False):
            inputs[name].append(_read_cell(cell, kind, name, row_number))
    return inputs


def _read_cell(cell: Any, kind: CellKind, name: str, row_number: int) -> Any:
    if kind == "str":
        return str(cell).strip()
    if kind == "number":
        try:
            value = float(cell)
        except (TypeError, ValueError):
            raise NlueError(f"row {row_number}, column {name!r}: {cell!r} is not a number") from None
        return int(value) if value.is_integer() else value
    try:
        return json.loads(cell) if isinstance(cell, str) else cell
    except json.JSONDecodeError:
        raise NlueError(
            f'row {row_number}, column {name!r}: {cell!r} is not JSON; write a list as ["a", "b"] or a number as 1'
        ) from None


def build_widget(module_or_modules: Any) -> Any:
    """A Gradio Blocks page for one module, or tabs for a dict of ``{tab name: module}``."""
    import gradio as gr

    if isinstance(module_or_modules, Mapping):
        names = list(module_or_modules)
        return gr.TabbedInterface([_interface(gr, module_or_modules[n]) for n in names], tab_names=names)
    return _interface(gr, module_or_modules)


def _interface(gr: Any, module: Any) -> Any:
    columns = input_columns(module)

    def compute(rows: list[list[Any]], resamples: float | None) -> dict[str, Any]:
        inputs = table_to_inputs(rows, columns)
        count = int(resamples or 0)
        return module.compute(**inputs, bootstrap_resamples=count if count > 0 else None)

    table = gr.Dataframe(
        headers=[name for name, _ in columns],
        datatype=["number" if kind == "number" else "str" for _, kind in columns],
        row_count=3,
        column_count=len(columns),
        type="array",
        label='one item per row (lists as JSON, e.g. ["झ्याल", "ढोका"])',
    )
    resamples = gr.Number(value=0, precision=0, minimum=0, label="bootstrap resamples (0: no intervals)")
    return gr.Interface(
        fn=compute,
        inputs=[table, resamples],
        outputs=gr.JSON(label=module.name),
        title=module.name if module.config_name == "default" else f"{module.name} ({module.config_name})",
        description=module.description,
        article=f"```\n{module.inputs_description.strip()}\n```",
        flagging_mode="never",
    )


def launch_gradio_widget(module_or_modules: Any, **launch_kwargs: Any) -> None:
    """Build the page and serve it (what a metric Space's ``app.py`` calls)."""
    build_widget(module_or_modules).launch(**launch_kwargs)
