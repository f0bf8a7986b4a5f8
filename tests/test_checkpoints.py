"""One home for loading checkpoints: what a folder is, and a clear error for what is not a masked LM."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nlue.errors import NlueError
from nlue.lm.checkpoints import is_adapter_folder, is_checkpoint, load_masked_lm


def test_folders_are_told_apart(tmp_path: Path) -> None:
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "config.json").write_text("{}", encoding="utf-8")
    (tmp_path / "adapter").mkdir()
    (tmp_path / "adapter" / "adapter_config.json").write_text(json.dumps({"task_type": "SEQ_CLS"}), encoding="utf-8")
    (tmp_path / "empty").mkdir()
    assert is_checkpoint(tmp_path / "full") and not is_adapter_folder(tmp_path / "full")
    assert is_checkpoint(tmp_path / "adapter") and is_adapter_folder(tmp_path / "adapter")
    assert not is_checkpoint(tmp_path / "empty") and not is_checkpoint(tmp_path / "missing")


def test_a_classifier_is_not_a_masked_lm(tmp_path: Path) -> None:
    pytest.importorskip("transformers")
    from nlue.lm.tiny import save_tiny_classifier

    model = save_tiny_classifier(tmp_path / "sa", "bert", "sa")
    (model / "tokenizer_config.json").write_text(
        json.dumps({**json.loads((model / "tokenizer_config.json").read_text()), "mask_token": None}), encoding="utf-8"
    )
    with pytest.raises(NlueError, match=r"not a masked language model|no mask token"):
        load_masked_lm(str(model))
    with pytest.raises(NlueError, match="cannot load its tokenizer"):
        load_masked_lm(str(tmp_path / "nowhere"))
