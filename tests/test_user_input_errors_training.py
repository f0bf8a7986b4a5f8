"""Training options and checkpoints the libraries refuse are the user's input: exit 2 with the library's reason
(issue 29, item 27), never "internal error" (exit 3)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from nlue.cli import main
from nlue.cli_support import EXIT_INPUT
from nlue.errors import NlueError


@pytest.fixture(scope="module")
def tiny_classifier(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from nlue.lm.tiny import save_tiny_classifier

    return save_tiny_classifier(tmp_path_factory.mktemp("classifier") / "sa", task="sa")


def _pickled_with_a_numpy_array(source: Path, out: Path) -> Path:
    """``source`` re-saved as ``pytorch_model.bin`` holding one NumPy array beside its tensors, as some
    trainers save theirs; torch's ``weights_only`` loading refuses such a file."""
    import numpy as np
    import torch
    from safetensors.torch import load_file

    shutil.copytree(source, out)
    weights = load_file(out / "model.safetensors")
    (out / "model.safetensors").unlink()
    torch.save({**weights, "trainer_state": np.arange(3)}, out / "pytorch_model.bin")
    return out


@pytest.mark.parametrize(
    ("options", "reason"),
    [
        (["--save_strategy", "steps"], "requires the save and eval strategy to match"),
        (["--eval_strategy", "steps", "--save_strategy", "steps", "--eval_steps", "3", "--save_steps", "5"],
         "requires the saving steps to be a round multiple of the evaluation steps, but found 5"),
    ],
)  # fmt: skip
def test_training_options_transformers_refuses_are_bad_input(options, reason, tmp_path: Path, capsys) -> None:
    """issue 29, item 27: `nlue train --save_strategy steps` ended as "internal error" (exit 3)."""
    argv = ["train", "--model", str(tmp_path / "m"), "--task", "sa", "--output_dir", str(tmp_path / "out"), *options]
    assert main(argv) == EXIT_INPUT
    err = capsys.readouterr().err
    assert err.startswith("nlue train: error: the training options are refused by transformers: --load_best_model_at")
    assert reason in err and "--load_best_model_at_end false" in err  # what to change, in nlue's own defaults
    assert "internal error" not in err and not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("model_name_or_path: m\ntask: sa\nsave_strategy: steps\n", "requires the save and eval strategy to match"),
        ("model_name_or_path: m\ntask: sa\nnot_an_option: 1\n", "not_an_option"),
        ("task: sa\n", "missing 1 required positional argument: 'model_name_or_path'"),
        ("task: [sa\n", "while parsing a flow sequence"),
    ],
)
def test_an_options_file_transformers_refuses_names_the_file(text, reason, tmp_path: Path, capsys) -> None:
    """issue 29, item 27: the same refusals from a YAML options file, which is named."""
    options = tmp_path / "train.yaml"
    options.write_text(text, encoding="utf-8")
    assert main(["train", str(options)]) == EXIT_INPUT
    err = capsys.readouterr().err
    assert err.startswith(f"nlue train: error: the training options in {options} are refused by transformers")
    assert reason in err


def test_a_checkpoint_refused_by_weights_only_loading_is_bad_input(tiny_classifier: Path, tmp_path: Path) -> None:
    """issue 29, item 27: a pickled checkpoint torch's weights_only loading refuses ended as "internal error"."""
    from nlue.lm.checkpoints import load_classifier

    bad = _pickled_with_a_numpy_array(tiny_classifier, tmp_path / "pickled")
    with pytest.raises(NlueError) as caught:
        load_classifier(str(bad))
    message = str(caught.value)
    assert message.startswith(f"{bad}: its pickled weights (pytorch_model.bin) hold more than tensors")
    assert "refuses them: Unsupported global: GLOBAL numpy" in message  # torch's own reason
    assert "safe_serialization=True" in message and "\x1b" not in message


def test_train_and_evaluate_on_a_refused_or_cut_checkpoint_exit_2(tiny_classifier, sample_build, tmp_path, capsys):
    """issue 29, item 27: the commands end with exit 2 and the reason, for a refused and for a cut weights file."""
    bad = _pickled_with_a_numpy_array(tiny_classifier, tmp_path / "pickled")
    cut = shutil.copytree(tiny_classifier, tmp_path / "cut")
    with open(cut / "model.safetensors", "r+b") as handle:
        handle.truncate(4000)
    dataset = str(sample_build.repo_dir)
    train = ["train", "--model", str(bad), "--task", "sa", "--dataset", dataset, "--output_dir", str(tmp_path / "o")]
    assert main(train) == EXIT_INPUT
    assert "torch's safe loading (weights_only=True) refuses them" in capsys.readouterr().err
    evaluate = ["evaluate", "--model", str(cut), "--task", "sa", "--dataset", dataset, "--results-dir", str(tmp_path)]
    assert main(evaluate) == EXIT_INPUT
    err = capsys.readouterr().err
    assert f"nlue evaluate: error: {cut}: a safetensors weights file (model.safetensors) cannot be read" in err
    assert "internal error" not in err


def test_a_causal_lm_refused_by_weights_only_loading_is_bad_input(tiny_lms, tmp_path: Path) -> None:
    """issue 29, item 27: the same for a causal LM, whichever command loads it."""
    from nlue.lm.local import LocalCausalLM

    bad = _pickled_with_a_numpy_array(tiny_lms["gpt2"], tmp_path / "pickled-lm")
    with pytest.raises(NlueError, match=r"its pickled weights \(pytorch_model.bin\) hold more than tensors"):
        LocalCausalLM(bad, show_progress=False)
