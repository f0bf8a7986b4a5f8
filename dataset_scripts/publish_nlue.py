"""Build the NLUE dataset repo and publish it to the Hub: the maintainer's one command.

    python dataset_scripts/publish_nlue.py --source raw/ --repo-id <org>/nlue --dry-run
    python dataset_scripts/publish_nlue.py --source raw/ --repo-id <org>/nlue

A thin sequence of `nlue build` then `nlue push`; all logic lives in the nlue package.
Without --source it publishes the embedded SAMPLE data (useful to try the flow).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from nlue.cli import main as nlue_main


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--source", help="folder of <config>/<split>.<ext> files (default: the embedded sample)")
    parser.add_argument("--out", default="build", help="build folder (default: build)")
    parser.add_argument("--repo-id", required=True, help="the Hub dataset id, e.g. my-org/nlue")
    parser.add_argument("--license", help="license id for the card")
    parser.add_argument("--private", action="store_true", help="create the Hub repo private")
    parser.add_argument("--dry-run", action="store_true", help="build, then only list what would be uploaded")
    args = parser.parse_args(argv)
    build = ["build", "--out", args.out, "--repo-id", args.repo_id, "--quiet"]
    build += ["--source", args.source] if args.source else []
    build += ["--license", args.license] if args.license else []
    code = nlue_main(build)
    if code:
        return code
    push = ["push", f"{args.out}/nlue", "--repo-id", args.repo_id]
    push += ["--private"] if args.private else []
    push += ["--dry-run"] if args.dry_run else []
    return nlue_main(push)


if __name__ == "__main__":
    sys.exit(main())
