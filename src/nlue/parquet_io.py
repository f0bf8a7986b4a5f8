"""Writing a split as size-capped Parquet shards named `<split>-0000N-of-0000M.parquet`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import datasets
import pyarrow as pa
import pyarrow.parquet as pq

DEFAULT_MAX_SHARD_BYTES = 256 * 1024 * 1024
ROWS_PER_BATCH = 10_000


class ShardedSplitWriter:
    """Streams rows of one split into Parquet shards, assigning ``idx`` as it goes.

    Shards are written under provisional names and renamed on :meth:`close`, once the
    total count M is known. Output is deterministic: the same rows in the same order
    give byte-identical files (no timestamps are written).
    """

    def __init__(
        self,
        directory: Path,
        split: str,
        features: datasets.Features,
        max_shard_bytes: int = DEFAULT_MAX_SHARD_BYTES,
    ) -> None:
        self.directory = directory
        self.split = split
        self.schema = features.arrow_schema
        self.max_shard_bytes = max_shard_bytes
        self.num_rows = 0
        self.num_bytes = 0
        self._pending: list[dict[str, Any]] = []
        self._writer: pq.ParquetWriter | None = None
        self._shard_bytes = 0
        self._provisional: list[Path] = []
        self.files: list[Path] = []

    def write(self, row: dict[str, Any]) -> None:
        row["idx"] = self.num_rows
        self.num_rows += 1
        self._pending.append(row)
        if len(self._pending) >= ROWS_PER_BATCH:
            self._flush()

    def _flush(self) -> None:
        if not self._pending:
            return
        table = pa.Table.from_pylist(self._pending, schema=self.schema)
        self._pending = []
        if self._writer is not None and self._shard_bytes + table.nbytes > self.max_shard_bytes:
            self._writer.close()
            self._writer = None
        if self._writer is None:
            path = self.directory / f".{self.split}-shard{len(self._provisional):05d}.parquet"
            self._provisional.append(path)
            self._writer = pq.ParquetWriter(path, self.schema, compression="snappy")
            self._shard_bytes = 0
        self._writer.write_table(table, row_group_size=ROWS_PER_BATCH)
        self._shard_bytes += table.nbytes
        self.num_bytes += table.nbytes

    def close(self) -> list[Path]:
        """Finish the last shard and give every shard its final name."""
        self._flush()
        if self._writer is not None:
            self._writer.close()
            self._writer = None
        if not self._provisional and self.num_rows == 0:
            # An empty split still gets one (empty) shard so the config's files resolve.
            path = self.directory / f".{self.split}-shard00000.parquet"
            pq.write_table(self.schema.empty_table(), path, compression="snappy")
            self._provisional.append(path)
        total = len(self._provisional)
        for i, path in enumerate(self._provisional):
            final = self.directory / f"{self.split}-{i:05d}-of-{total:05d}.parquet"
            path.rename(final)
            self.files.append(final)
        return self.files
