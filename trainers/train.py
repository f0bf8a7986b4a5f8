"""Fine-tune an encoder on one NLUE task: the same recipe as `nlue train`.

    python trainers/train.py --model FacebookAI/xlm-roberta-base --task qnli --preset VI
    python trainers/train.py trainers/configs/qnli_xlmr_lora.yaml
    accelerate launch trainers/train.py --model ... --task ...          # multi-GPU / multi-node
    torchrun --nproc_per_node 2 trainers/train.py --model ... --task ...

Every argument (with help text) is listed by `python trainers/train.py --help`; errors and
exit codes are those of `nlue train`.
"""

import sys

from nlue.training.cli import run_hf_command

if __name__ == "__main__":
    sys.exit(run_hf_command("train", sys.argv[1:], prog="trainers/train.py"))
