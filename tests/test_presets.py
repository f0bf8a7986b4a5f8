"""Presets I–VIII: trainable subsets per family, agreement with the paper, the extra FC option, save and reload."""

from __future__ import annotations

import copy
import dataclasses
import itertools
import json
import logging
import re
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from nlue.lm.checkpoints import load_sequence_classifier  # noqa: E402
from nlue.lm.tiny import FAMILIES, save_tiny_classifier  # noqa: E402
from nlue.registry.tasks import TASKS  # noqa: E402
from nlue.training.preset_docs import presets_markdown_table  # noqa: E402
from nlue.training.presets import (  # noqa: E402
    PRESET_SCHEME,
    PRESETS,
    PresetSpec,
    apply_preset,
    get_preset,
    neighbouring_presets,
)

ALL_PRESETS = ("I", "II", "III", "IV", "V", "VI", "VII", "VIII")

# The definition, restated independently of the module: trained top layers of the 4-layer tiny models
# (I: all + embeddings, II: all, III: ⌈5·4/6⌉, IV: ⌈2·4/3⌉, V: 4/2, VI: ⌈4/3⌉, VII: ⌈4/6⌉, VIII: none).
TOP_LAYERS_OF_4 = {"I": 4, "II": 4, "III": 4, "IV": 3, "V": 2, "VI": 2, "VII": 1, "VIII": 0}
WITH_EMBEDDINGS = {"I"}

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


def expected_trainable(names: list[str], family: str, preset: str, extra_fc: bool = False) -> set[str]:
    """The trainable names of a 4-layer model by the definition, from the names alone."""
    layer_rule, head_rule, embeddings_rule = RULES[family]
    first_trained = 4 - TOP_LAYERS_OF_4[preset]
    expected = set()
    for name in names:
        layer = re.match(layer_rule, name)
        groups = [bool(layer), bool(re.match(head_rule, name)), bool(re.match(embeddings_rule, name))]
        assert sum(groups) == 1, f"{name} is in {sum(groups)} groups"
        if EXTRA_FC.search(name):
            assert extra_fc, name
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
    assert not any(EXTRA_FC.search(name) for name in names) and not summary.extra_fc
    assert model.config.nlue_preset == preset and model.config.nlue_preset_scheme == PRESET_SCHEME == 2


@pytest.mark.parametrize("preset", ALL_PRESETS)
def test_electra_family(preset: str) -> None:
    model = tiny_electra()
    apply_preset(model, preset, extra_fc=True)
    names = [name for name, _ in model.named_parameters()]
    assert trainable(model) == expected_trainable(names, "electra", preset, extra_fc=True)


@pytest.mark.parametrize("preset", ["I", "IV", "VIII"])
@pytest.mark.parametrize("family", FAMILIES)
def test_extra_fc_is_an_option_of_any_preset(fresh, family: str, preset: str) -> None:
    plain, extra = fresh(family), fresh(family)
    apply_preset(plain, preset)
    summary = apply_preset(extra, preset, extra_fc=True)
    difference = trainable(extra) ^ trainable(plain)
    assert difference and all(EXTRA_FC.search(name) for name in difference)
    assert difference <= trainable(extra)
    assert {n for n, _ in extra.named_parameters()} - {n for n, _ in plain.named_parameters()} == difference
    names = [name for name, _ in extra.named_parameters()]
    assert trainable(extra) == expected_trainable(names, family, preset, extra_fc=True)
    assert summary.extra_fc and "extra FC" in summary.describe() and extra.config.nlue_extra_fc is True


@pytest.mark.parametrize("extra_fc", [False, True])
@pytest.mark.parametrize("family", FAMILIES)
def test_full_fine_tuning_trains_everything(fresh, family: str, extra_fc: bool) -> None:
    model = fresh(family)
    summary = apply_preset(model, "I", extra_fc=extra_fc)
    assert all(param.requires_grad for param in model.parameters())
    assert summary.trainable_params == summary.total_params


@pytest.mark.parametrize("preset", ["IV", "VIII"])
@pytest.mark.parametrize("family", FAMILIES)
def test_forward_and_backward_with_the_extra_fc(fresh, family: str, preset: str) -> None:
    model = fresh(family)
    apply_preset(model, preset, extra_fc=True)
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


@pytest.mark.parametrize(("preset", "extra_fc"), [("VIII", False), ("IV", True), ("I", True)])
@pytest.mark.parametrize("family", FAMILIES)
def test_reload_gives_identical_predictions(fresh, tmp_path: Path, family: str, preset: str, extra_fc: bool) -> None:
    model = fresh(family)
    apply_preset(model, preset, extra_fc=extra_fc)
    vocab = model.config.vocab_size
    before = logits(model, vocab)
    model.save_pretrained(tmp_path)
    reloaded = load_sequence_classifier(tmp_path)
    assert torch.equal(logits(reloaded, vocab), before)
    assert reloaded.state_dict().keys() == model.state_dict().keys()
    assert all(torch.equal(value, reloaded.state_dict()[key]) for key, value in model.state_dict().items())
    assert reloaded.config.nlue_preset == preset and reloaded.config.nlue_preset_scheme == PRESET_SCHEME
    assert bool(getattr(reloaded.config, "nlue_extra_fc", False)) == extra_fc


def test_checkpoint_of_the_old_numbering_still_loads(fresh, tmp_path: Path) -> None:
    # Before the numbering was reversed, IV and VIII implied the extra layer and the scheme was not stored.
    model = fresh("bert")
    apply_preset(model, "IV", extra_fc=True)
    before = logits(model, model.config.vocab_size)
    model.save_pretrained(tmp_path)
    config_path = tmp_path / "config.json"
    config = json.loads(config_path.read_text(encoding="utf-8"))
    del config["nlue_preset_scheme"]
    config_path.write_text(json.dumps({**config, "nlue_preset": "VIII"}), encoding="utf-8")
    reloaded = load_sequence_classifier(tmp_path)
    assert torch.equal(logits(reloaded, model.config.vocab_size), before)
    assert not hasattr(reloaded.config, "nlue_preset_scheme")


def test_plain_from_pretrained_drops_the_extra_fc(fresh, tmp_path: Path) -> None:
    model = fresh("roberta")
    apply_preset(model, "IV", extra_fc=True)
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
    apply_preset(model, "IV", extra_fc=True)
    model.save_pretrained(tmp_path)
    reloaded = load_sequence_classifier(tmp_path)
    extra = reloaded.classifier.extra_fc
    apply_preset(reloaded, "VI", extra_fc=True)
    assert reloaded.classifier.extra_fc is extra
    with pytest.raises(ValueError, match="extra FC"):
        apply_preset(reloaded, "IV")


def test_unknown_preset(fresh) -> None:
    with pytest.raises(ValueError, match=r"'IX'.*I, II, III, IV, V, VI, VII, VIII"):
        apply_preset(fresh("bert"), "IX")
    assert get_preset("iv") is PRESETS["IV"]
    assert neighbouring_presets("I") == ("I", "II") and neighbouring_presets("viii") == ("VII", "VIII")
    assert neighbouring_presets("V") == ("IV", "V", "VI")


# Layers trained (top k) and whether embeddings train, per preset, for 6-, 12- and 24-layer encoders.
TOP_LAYERS = {
    6: {"I": 6, "II": 6, "III": 5, "IV": 4, "V": 3, "VI": 2, "VII": 1, "VIII": 0},
    12: {"I": 12, "II": 12, "III": 10, "IV": 8, "V": 6, "VI": 4, "VII": 2, "VIII": 0},
    24: {"I": 24, "II": 24, "III": 20, "IV": 16, "V": 12, "VI": 8, "VII": 4, "VIII": 0},
}


def trained_groups(name: str, total: int) -> frozenset[object]:
    spec = PRESETS[name]
    return frozenset(spec.layers(total)) | ({"embeddings"} if spec.train_embeddings else set())


@pytest.mark.parametrize("total", sorted(TOP_LAYERS))
def test_layer_counts_distinct_and_nested(total: int) -> None:
    assert tuple(PRESETS) == ALL_PRESETS
    for name, spec in PRESETS.items():
        assert spec.layers(total) == tuple(range(total - TOP_LAYERS[total][name], total))
        assert spec.train_embeddings == (name in WITH_EMBEDDINGS)
    subsets = [trained_groups(name, total) for name in ALL_PRESETS]
    assert len(set(subsets)) == 8
    assert all(wider > narrower for wider, narrower in itertools.pairwise(subsets))


def paper_best(task: str) -> set[str]:
    return {hp.preset for hp in TASKS[task].paper_best_hparams.values()}


@pytest.mark.parametrize("total", sorted(TOP_LAYERS))
def test_presets_agree_with_every_statement_of_the_paper(total: int) -> None:
    """Each statement of the paper about configurations I–VIII, as a check on PRESETS."""

    def head_only(name: str) -> bool:
        return not trained_groups(name, total)

    def everything(name: str) -> bool:
        return trained_groups(name, total) == frozenset(range(total)) | {"embeddings"}

    # The range runs from the classification layer alone to all layers: both ends exist.
    first, last = ALL_PRESETS[0], ALL_PRESETS[-1]
    assert everything(first) and head_only(last)
    # Appendix E: I is SA's best for all ten models (and STS-B's best reaching 0.90), while the text says
    # training only the classification layer was insufficient for SA: I cannot be head only.
    assert paper_best("sa") == {"I"} and "I" in paper_best("stsb")
    assert TASKS["stsb"].paper_results["m-DeBERTa-v3"]["spearman"] >= 0.90
    assert not head_only("I")
    # Head only was insufficient for the largest datasets, SA and QADSM: none of their best presets is head only.
    assert TASKS["sa"].paper_train_size > 50_000 and TASKS["qadsm"].paper_train_size > 50_000
    assert not any(head_only(name) for name in paper_best("sa") | paper_best("qadsm"))
    # "Progressively unfreezing upper, intermediate and lower layers": each preset trains a top block of
    # layers, and the eight subsets are distinct and nested in numeral order.
    for name in ALL_PRESETS:
        layers = PRESETS[name].layers(total)
        assert layers == tuple(range(total - len(layers), total))
    subsets = [trained_groups(name, total) for name in ALL_PRESETS]
    assert len(set(subsets)) == len(ALL_PRESETS)
    assert all(wider > narrower for wider, narrower in itertools.pairwise(subsets))
    # IV was tried with and without an extra fully connected layer: no preset implies that layer.
    assert "extra_fc" not in {f.name for f in dataclasses.fields(PresetSpec)}


def test_iv_does_not_imply_the_extra_fc(fresh) -> None:
    without, with_extra = fresh("bert"), fresh("bert")
    assert not apply_preset(without, "IV").extra_fc and not hasattr(without.config, "nlue_extra_fc")
    assert apply_preset(with_extra, "IV", extra_fc=True).extra_fc


def test_summary_line_is_logged(fresh, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="nlue.training.presets"):
        summary = apply_preset(fresh("bert"), "VI")
    assert re.fullmatch(r"preset VI: [\d.]+K of [\d.]+K parameters train \(layers 2-3 of 4, head\)", summary.describe())
    assert summary.describe() in caplog.messages


def test_generic_fallback_and_unsupported_architecture() -> None:
    sizes = {"vocab_size": 100, "hidden_size": 32, "num_hidden_layers": 4, "num_attention_heads": 2}
    auto = transformers.AutoModelForSequenceClassification
    mpnet = auto.from_config(transformers.AutoConfig.for_model("mpnet", intermediate_size=64, **sizes))
    summary = apply_preset(mpnet, "IV", extra_fc=True)
    assert summary.family == "generic:mpnet"
    assert {n for n in trainable(mpnet) if not n.startswith("classifier.")} == {
        n for n, _ in mpnet.named_parameters() if re.match(r"mpnet\.encoder\.layer\.[123]\.", n)
    }
    assert mpnet.classifier.out_proj.extra_fc is not None
    albert = auto.from_config(transformers.AutoConfig.for_model("albert", embedding_size=16, **sizes))
    with pytest.raises(ValueError, match=r"'albert'.*Supported families: bert"):
        apply_preset(albert, "I")


def test_markdown_table() -> None:
    table = presets_markdown_table()
    for name in ALL_PRESETS:
        assert f"\n| {name} |" in table
    assert "| VI | head + top ⌈L/3⌉ layers (upper third) | 8–11 (top 4) | 4–5 (top 2) | 16–23 (top 8) |" in table
    assert "| I | everything: embeddings, all L layers, head (full fine-tuning) | 0–11 (all 12) + embeddings" in table
    assert "| VIII | classification head only | none | none | none |" in table
    assert "`classifier`, `bert.pooler`" in table and "`pre_classifier`, `classifier`" in table
    assert "our reading" in table and "`--extra_fc`" in table
