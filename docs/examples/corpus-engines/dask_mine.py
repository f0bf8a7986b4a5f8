"""Idiom mining with Dask: `nlue idioms mine`'s per-document function over the partitions of a Dask bag.

The corpus is JSONL (one document a line, with ``id`` and ``text``), one file or a glob of many, read in
blocks; each partition runs nlue's :func:`nlue.idioms.mine.find_candidates`, the same function
``nlue idioms mine`` runs per document. The partitions come back in corpus order, repeats are dropped
(:func:`~nlue.idioms.mine.drop_repeats`) and each candidate is written as a line of ``candidates.jsonl``:
the same bytes ``nlue idioms mine --corpus corpus.jsonl`` writes. Candidates are few beside documents,
so gathering them in the driver is cheap; the documents themselves never leave the workers.

    python dask_mine.py --idioms idioms.txt --corpus 'corpus/*.jsonl' --out candidates.jsonl
    python dask_mine.py ... --scheduler processes --workers 8       # or threads, synchronous

Give every document an ``id``: a block of a file does not know its line numbers, so an id made from them
(what ``nlue idioms mine`` uses when there is none) cannot be rebuilt on an engine.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import dask
import dask.bag

from nlue.idioms.mine import candidate_line, drop_repeats, find_candidates, read_idioms


def mine_partition(lines: list[str], idioms: list[str]) -> list[dict]:
    """The candidates of one partition's JSONL lines, in order (blank lines skipped, as nlue does)."""
    records = (json.loads(line) for line in lines if line.strip())
    return find_candidates(idioms, ((str(r["id"]), r.get("text") or "") for r in records))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--idioms", type=Path, required=True)
    parser.add_argument("--corpus", required=True, help="a JSONL file or a glob of them (local, s3://, hdfs://)")
    parser.add_argument("--out", type=Path, required=True, help="the candidates.jsonl to write")
    parser.add_argument("--scheduler", default="processes", help="processes (default), threads or synchronous")
    parser.add_argument("--workers", type=int, help="worker processes or threads (default: the cores)")
    parser.add_argument("--blocksize", default="64MiB", help="bytes of a file per partition (%(default)s)")
    args = parser.parse_args()
    idioms = read_idioms(args.idioms)
    bag = dask.bag.read_text(args.corpus, blocksize=args.blocksize)
    found = bag.map_partitions(mine_partition, idioms)
    with dask.config.set(scheduler=args.scheduler, num_workers=args.workers):
        candidates = found.compute()
    with args.out.open("w", encoding="utf-8") as out:
        for record in drop_repeats(candidates):
            out.write(candidate_line(record))


if __name__ == "__main__":
    main()
