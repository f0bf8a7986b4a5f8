"""Fine-tune an encoder on one NLUE task: the same recipe as `nlue train`.

    python trainers/train.py --model FacebookAI/xlm-roberta-base --task qnli --preset VI
    python trainers/train.py trainers/configs/qnli_xlmr_lora.yaml
    accelerate launch trainers/train.py --model ... --task ...          # multi-GPU / multi-node
    torchrun --nproc_per_node 2 trainers/train.py --model ... --task ...

Every argument (with help text) is listed by `python trainers/train.py --help`.
"""

import sys

from nlue.training.cli import train_main

if __name__ == "__main__":
    sys.exit(train_main(prog="trainers/train.py"))
