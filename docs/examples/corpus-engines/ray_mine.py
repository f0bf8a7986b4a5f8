"""Idiom mining with Ray Data: `nlue idioms mine`'s per-document function over the blocks of a Ray dataset.

The corpus is JSONL (one document a line, with ``id`` and ``text``), one file, a folder or many, read
by ``ray.data.read_json``; each batch runs nlue's :func:`nlue.idioms.mine.find_candidates`, the same
function ``nlue idioms mine`` runs per document. With the order preserved, the candidates come back in
corpus order, repeats are dropped (:func:`~nlue.idioms.mine.drop_repeats`) and each is written as a line
of ``candidates.jsonl``: the same bytes ``nlue idioms mine --corpus corpus.jsonl`` writes. Candidates
are few beside documents, so gathering them in the driver is cheap.

    python ray_mine.py --idioms idioms.txt --corpus corpus/ --out candidates.jsonl            # a local Ray
    RAY_ADDRESS=ray://head:10001 python ray_mine.py ...                                         # a cluster

(``ray.data.read_text`` works the same way for plain text, one document a line, but gives no ids: give
your documents ids, as an engine cannot rebuild the line numbers nlue uses when there are none.)
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import ray
import ray.data

from nlue.idioms.mine import candidate_line, drop_repeats, find_candidates, read_idioms


def mine_batch(batch: dict, idioms: list[str]) -> dict:
    """One batch of documents (columns ``id`` and ``text``) to its candidates, each as one JSON string."""
    texts = [text or "" for text in batch["text"]]
    found = find_candidates(idioms, zip((str(i) for i in batch["id"]), texts, strict=True))
    return {"candidate": [json.dumps(record, ensure_ascii=False) for record in found]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--idioms", type=Path, required=True)
    parser.add_argument("--corpus", required=True, help="a JSONL file or folder (local, s3://, gs://)")
    parser.add_argument("--out", type=Path, required=True, help="the candidates.jsonl to write")
    parser.add_argument("--num-cpus", type=int, help="a local Ray's CPUs (default: the machine's)")
    parser.add_argument("--batch-size", type=int, default=4096, help="documents per batch (%(default)s)")
    args = parser.parse_args()
    idioms = read_idioms(args.idioms)
    ray.init(num_cpus=args.num_cpus, include_dashboard=False, log_to_driver=False)
    ray.data.DataContext.get_current().execution_options.preserve_order = True  # candidates in corpus order
    documents = ray.data.read_json(args.corpus)
    found = documents.map_batches(mine_batch, fn_kwargs={"idioms": idioms}, batch_size=args.batch_size,
                                  batch_format="numpy")  # fmt: skip
    with args.out.open("w", encoding="utf-8") as out:
        for record in drop_repeats(json.loads(row["candidate"]) for row in found.iter_rows()):
            out.write(candidate_line(record))


if __name__ == "__main__":
    main()
