"""Score a checkpoint (or a folder of per-task checkpoints) on NLUE: the same as `nlue evaluate`.

python trainers/evaluate.py --model runs/xlmr --task all --dataset my-org/nlue
"""

import sys

from nlue.cli import main

if __name__ == "__main__":
    sys.exit(main(["evaluate", *sys.argv[1:]]))
