"""Carving a validation split out of train while the train split is built (a step of the config builder).

Kept apart from :mod:`nlue.data.config_builder`, whose :class:`~nlue.data.config_builder.ConfigBuilder`
inherits it: the spill, the seeded stratified draw and the two writers are one job.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from nlue.data import overlap
from nlue.data.carve import stratified_holdout
from nlue.data.fingerprints import FingerprintSet
from nlue.data.parquet_io import SpillWriter, read_spill
from nlue.data.report import SplitReport


class CarvedValidation:
    """The config builder's carving step: a mixin of :class:`~nlue.data.config_builder.ConfigBuilder`,
    whose readers (``_kept_rows``), writers and train index it uses."""

    dir: Path
    features: Any
    options: Any
    train_index: overlap.TrainIndex
    stratum_dtype: np.dtype
    task: Any
    label_field: Any
    label_dtype: Any

    def _build_train_with_carved_validation(
        self, paths: Sequence[Path], keys: dict[str, FingerprintSet]
    ) -> dict[str, SplitReport]:
        """Train has no validation split: hold out a stratified, seeded fraction of it.

        The kept rows are spilled to disk while their strata (1 byte each) are noted; once
        every row is known the held-out mask is drawn, and the spill is split into the
        two writers as Arrow tables, without turning rows back into Python objects.
        Returns the reports; the fingerprints of train (before the carve) and of the carved
        validation rows go to ``keys``.
        """
        train_keys = FingerprintSet(self.label_dtype)
        strata_chunks: list[np.ndarray] = []
        spill = SpillWriter(
            self.dir / ".train-spill.arrow",
            self.features,
            on_table=lambda t: strata_chunks.append(self._strata(t)),
            extra_fields=self._spilled_key_fields(),
        )
        source_report = SplitReport()
        for kept in self._kept_rows(paths, "train", source_report, train_keys, {}):
            self._write_kept(spill, kept)
        spill_path = spill.close()
        train_keys.drop_labels()
        self._log_fingerprints("train", train_keys)
        strata = np.concatenate(strata_chunks) if strata_chunks else np.zeros(0, dtype=self.stratum_dtype)
        strata_chunks.clear()
        held_out = stratified_holdout(strata, self.options.validation_fraction, self.options.seed)
        del strata
        train_report = source_report
        train_report.stats = self._new_stats()
        carved_counts = self.train_index.new_counts()
        val_report = SplitReport(carved_from_train=True, stats=self._new_stats(), overlap=carved_counts)
        train_writer = self._split_writer("train", train_report)
        val_writer = self._split_writer("validation", val_report)
        validation_keys = FingerprintSet()
        # Carved rows are counted against the built train split once all of it is known.
        carved_keys: list[overlap.RowKeys] = []
        position = 0
        for table in read_spill(spill_path):
            held = pa.array(held_out[position : position + table.num_rows])
            position += table.num_rows
            validation = table.filter(held)
            train = table.filter(pc.invert(held))
            train_writer.write_table(train)
            val_writer.write_table(validation)
            self.train_index.add(self.train_index.keys(self._table_columns(train)))
            validation_keys.add(self._table_fingerprints(validation))
            carved_keys.append(self.train_index.keys(self._table_columns(validation)))
        spill_path.unlink()
        carved = overlap.RowKeys.concat(carved_keys, self.train_index.field_names)
        carved_keys.clear()
        # A carved row's inputs are in no built train row: train was de-duplicated first.
        self.train_index.count(carved, np.zeros(len(carved), dtype=bool), carved_counts)
        self._finish(train_report, train_writer)
        self._finish(val_report, val_writer)
        keys["train"], keys["validation"] = train_keys, validation_keys
        return {"train": train_report, "validation": val_report}

    def _strata(self, table: pa.Table) -> np.ndarray:
        """Carving strata of a table's rows: the class id, or the score band 0..5."""
        return self.task.kind.strata(self.task, table.column(self.label_field).to_numpy()).astype(self.stratum_dtype)
