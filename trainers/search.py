"""Grid search with k-fold cross-validation, then train and test the winner: the same as `nlue search`.

    python trainers/search.py --model FacebookAI/xlm-roberta-base --task rte --folds 5
    python trainers/search.py --model ... --task rte --learning_rates 2e-5,1e-4 --batch_sizes 16

An interrupted search resumes: finished trials are read back from <output_dir>/search/trials/.
Errors and exit codes are those of `nlue search`.
"""

import sys

from nlue.training.cli import run_hf_command

if __name__ == "__main__":
    sys.exit(run_hf_command("search", sys.argv[1:], prog="trainers/search.py"))
