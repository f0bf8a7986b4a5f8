"""Presets I–VIII: trainable subsets per family, the extra FC layer, save and reload."""

from __future__ import annotations

import copy
import json
import logging
import re
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from nlue.tiny_models import FAMILIES, save_tiny_classifier  # noqa: E402
from nlue.training.presets import (  # noqa: E402
    PRESETS,
    apply_preset,
    get_preset,
    load_sequence_classifier,
    presets_markdown_table,
)

ALL_PRESETS = ("I", "II", "III", "IV", "V", "VI", "VII", "VIII")

# The definition, restated independently of the module: trained top layers of the 4-layer tiny models.
TOP_LAYERS_OF_4 = {"I": 0, "II": 1, "III": 2, "IV": 2, "V": 3, "VI": 4, "VII": 4, "VIII": 4}
WITH_EMBEDDINGS = {"VII", "VIII"}
WITH_EXTRA_FC = {"IV", "VIII"}

# Per family: (layer regex with the index as group 1, head regex, embeddings regex).
RULES = {
    "bert": (r"^bert\.encoder\.layer\.(\d+)\.", r"^(classifier|bert\.pooler)\.", r"^bert\.embeddings\."),
    "roberta": (r"^roberta\.encoder\.layer\.(\d+)\.", r"^classifier\.", r"^roberta\.embeddings\."),
    "deberta-v2": (
        r"^deberta\.encoder\.layer\.(\d+)\.",
        r"^(classifier|pooler)\.",
        r"^deberta\.(embeddings|encoder\.rel_embeddings|encoder\.LayerNorm)\.",
    ),
    "distilbert": (
        r"^distilbert\.transformer\.layer\.(\d+)\.",
        r"^(pre_classifier|classifier)\.",
        r"^distilbert\.embeddings\.",
    ),
    "electra": (r"^electra\.encoder\.layer\.(\d+)\.", r"^classifier\.", r"^electra\.(embeddings|embeddings_project)\."),
}
EXTRA_FC = re.compile(r"\.extra_fc\.")


def expected_trainable(names: list[str], family: str, preset: str) -> set[str]:
    """The trainable names of a 4-layer model by the definition, from the names alone."""
    layer_rule, head_rule, embeddings_rule = RULES[family]
    first_trained = 4 - TOP_LAYERS_OF_4[preset]
    expected = set()
    for name in names:
        layer = re.match(layer_rule, name)
        groups = [bool(layer), bool(re.match(head_rule, name)), bool(re.match(embeddings_rule, name))]
        assert sum(groups) == 1, f"{name} is in {sum(groups)} groups"
        if EXTRA_FC.search(name):
            assert preset in WITH_EXTRA_FC, name
        if (layer and int(layer.group(1)) >= first_trained) or groups[1] or (groups[2] and preset in WITH_EMBEDDINGS):
            expected.add(name)
    return expected


@pytest.fixture(scope="module")
def tiny_models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """One tiny classifier per family (4 layers, hidden 32), loaded once; tests deep-copy them."""
    root = tmp_path_factory.mktemp("tiny-presets")
    return {
        family: transformers.AutoModelForSequenceClassification.from_pretrained(
            save_tiny_classifier(root / family, family, "sa")
        )
        for family in FAMILIES
    }


@pytest.fixture
def fresh(tiny_models: dict[str, object]):
    return lambda family: copy.deepcopy(tiny_models[family])


def tiny_electra():
    config = transformers.AutoConfig.for_model(
        "electra",
        vocab_size=100,
        embedding_size=16,
        hidden_size=32,
        num_hidden_layers=4,
        num_attention_heads=2,
        intermediate_size=64,
    )
    return transformers.AutoModelForSequenceClassification.from_config(config)


def inputs(batch: int = 3, length: int = 9, vocab: int = 100) -> dict[str, torch.Tensor]:
    generator = torch.Generator().manual_seed(0)
    ids = torch.randint(5, vocab, (batch, length), generator=generator)
    return {"input_ids": ids, "attention_mask": torch.ones_like(ids)}


def trainable(model) -> set[str]:
    return {name for name, param in model.named_parameters() if param.requires_grad}


@pytest.mark.parametrize("preset", ALL_PRESETS)
@pytest.mark.parametrize("family", FAMILIES)
def test_trainable_names_follow_the_definition(fresh, family: str, preset: str) -> None:
    model = fresh(family)
    summary = apply_preset(model, preset)
    names = [name for name, _ in model.named_parameters()]
    assert trainable(model) == expected_trainable(names, family, preset)
    assert set(summary.trainable_names) == trainable(model)
    assert summary.trainable_params == sum(p.numel() for p in model.parameters() if p.requires_grad)
    assert summary.total_params == sum(p.numel() for p in model.parameters())
    assert summary.layers_trained == tuple(range(4 - TOP_LAYERS_OF_4[preset], 4))
    assert any(EXTRA_FC.search(name) for name in names) == (preset in WITH_EXTRA_FC)
    assert model.config.nlue_preset == preset


@pytest.mark.parametrize("preset", ALL_PRESETS)
def test_electra_family(preset: str) -> None:
    model = tiny_electra()
    apply_preset(model, preset)
    names = [name for name, _ in model.named_parameters()]
    assert trainable(model) == expected_trainable(names, "electra", preset)


@pytest.mark.parametrize("family", FAMILIES)
def test_iv_is_iii_plus_the_extra_fc(fresh, family: str) -> None:
    iii, iv = fresh(family), fresh(family)
    apply_preset(iii, "III")
    apply_preset(iv, "IV")
    difference = trainable(iv) ^ trainable(iii)
    assert difference and all(EXTRA_FC.search(name) for name in difference)
    assert difference <= trainable(iv)
    assert {n for n, _ in iv.named_parameters()} - {n for n, _ in iii.named_parameters()} == difference


@pytest.mark.parametrize("preset", ["VII", "VIII"])
@pytest.mark.parametrize("family", FAMILIES)
def test_full_fine_tuning_trains_everything(fresh, family: str, preset: str) -> None:
    model = fresh(family)
    summary = apply_preset(model, preset)
    assert all(param.requires_grad for param in model.parameters())
    assert summary.trainable_params == summary.total_params


@pytest.mark.parametrize("preset", ["IV", "VIII"])
@pytest.mark.parametrize("family", FAMILIES)
def test_forward_and_backward_with_the_extra_fc(fresh, family: str, preset: str) -> None:
    model = fresh(family)
    apply_preset(model, preset)
    model.train()
    batch = inputs(vocab=model.config.vocab_size)
    output = model(**batch, labels=torch.tensor([0, 1, 1]))
    assert output.logits.shape == (3, model.config.num_labels)
    output.loss.backward()
    for name, param in model.named_parameters():
        assert (param.grad is not None) == param.requires_grad, name
    extra = [param for name, param in model.named_parameters() if EXTRA_FC.search(name)]
    assert len(extra) == 2 and all(param.grad.abs().sum() > 0 for param in extra)


def logits(model, vocab: int) -> torch.Tensor:
    model.eval()
    with torch.no_grad():
        return model(**inputs(vocab=vocab)).logits


@pytest.mark.parametrize("preset", ["I", "IV", "VIII"])
@pytest.mark.parametrize("family", FAMILIES)
def test_reload_gives_identical_predictions(fresh, tmp_path: Path, family: str, preset: str) -> None:
    model = fresh(family)
    apply_preset(model, preset)
    vocab = model.config.vocab_size
    before = logits(model, vocab)
    model.save_pretrained(tmp_path)
    reloaded = load_sequence_classifier(tmp_path)
    assert torch.equal(logits(reloaded, vocab), before)
    assert reloaded.state_dict().keys() == model.state_dict().keys()
    assert all(torch.equal(value, reloaded.state_dict()[key]) for key, value in model.state_dict().items())
    assert reloaded.config.nlue_preset == preset
    assert bool(getattr(reloaded.config, "nlue_extra_fc", False)) == (preset in WITH_EXTRA_FC)


def test_plain_from_pretrained_drops_the_extra_fc(fresh, tmp_path: Path) -> None:
    model = fresh("roberta")
    apply_preset(model, "IV")
    before = logits(model, model.config.vocab_size)
    model.save_pretrained(tmp_path)
    plain = transformers.AutoModelForSequenceClassification.from_pretrained(tmp_path)
    assert not torch.equal(logits(plain, model.config.vocab_size), before)
    _, info = load_sequence_classifier(tmp_path, output_loading_info=True)
    assert not info["unexpected_keys"] and not info["missing_keys"]


def test_reload_refuses_a_checkpoint_without_the_extra_fc_weights(fresh, tmp_path: Path) -> None:
    model = fresh("bert")
    apply_preset(model, "III")
    model.save_pretrained(tmp_path)
    config_path = tmp_path / "config.json"
    config = json.loads(config_path.read_text(encoding="utf-8"))
    config_path.write_text(json.dumps({**config, "nlue_extra_fc": True}), encoding="utf-8")
    with pytest.raises(ValueError, match=r"extra_fc"):
        load_sequence_classifier(tmp_path)


def test_reapplying_keeps_the_existing_extra_fc(fresh, tmp_path: Path) -> None:
    model = fresh("deberta-v2")
    apply_preset(model, "IV")
    model.save_pretrained(tmp_path)
    reloaded = load_sequence_classifier(tmp_path)
    extra = reloaded.classifier.extra_fc
    apply_preset(reloaded, "VIII")
    assert reloaded.classifier.extra_fc is extra
    with pytest.raises(ValueError, match="extra FC"):
        apply_preset(reloaded, "III")


def test_unknown_preset(fresh) -> None:
    with pytest.raises(ValueError, match=r"'IX'.*I, II, III, IV, V, VI, VII, VIII"):
        apply_preset(fresh("bert"), "IX")
    assert get_preset("iv") is PRESETS["IV"]


def test_layer_counts_for_12_and_6_layers() -> None:
    top_of_12 = {"I": 0, "II": 3, "III": 6, "IV": 6, "V": 9, "VI": 12, "VII": 12, "VIII": 12}
    top_of_6 = {"I": 0, "II": 2, "III": 3, "IV": 3, "V": 5, "VI": 6, "VII": 6, "VIII": 6}
    assert tuple(PRESETS) == ALL_PRESETS
    for name, spec in PRESETS.items():
        assert spec.layers(12) == tuple(range(12 - top_of_12[name], 12))
        assert spec.layers(6) == tuple(range(6 - top_of_6[name], 6))
        assert spec.train_embeddings == (name in WITH_EMBEDDINGS)
        assert spec.extra_fc == (name in WITH_EXTRA_FC)


def test_summary_line_is_logged(fresh, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="nlue.training.presets"):
        summary = apply_preset(fresh("bert"), "VI")
    assert re.fullmatch(r"preset VI: [\d.]+K of [\d.]+K parameters train \(layers 0-3, head\)", summary.describe())
    assert summary.describe() in caplog.messages


def test_generic_fallback_and_unsupported_architecture() -> None:
    sizes = {"vocab_size": 100, "hidden_size": 32, "num_hidden_layers": 4, "num_attention_heads": 2}
    auto = transformers.AutoModelForSequenceClassification
    mpnet = auto.from_config(transformers.AutoConfig.for_model("mpnet", intermediate_size=64, **sizes))
    summary = apply_preset(mpnet, "IV")
    assert summary.family == "generic:mpnet"
    assert {n for n in trainable(mpnet) if not n.startswith("classifier.")} == {
        n for n, _ in mpnet.named_parameters() if re.match(r"mpnet\.encoder\.layer\.[23]\.", n)
    }
    assert mpnet.classifier.out_proj.extra_fc is not None
    albert = auto.from_config(transformers.AutoConfig.for_model("albert", embedding_size=16, **sizes))
    with pytest.raises(ValueError, match=r"'albert'.*Supported families: bert"):
        apply_preset(albert, "I")


def test_markdown_table() -> None:
    table = presets_markdown_table()
    for name in ALL_PRESETS:
        assert f"\n| {name} |" in table
    assert "| II | head + top ⌈L/4⌉ layers | 9–11 (top 3) | 4–5 (top 2) | no |" in table
    assert "`classifier`, `bert.pooler`" in table and "`pre_classifier`, `classifier`" in table
    assert "our definition" in table
