"""The dataset card: YAML that round-trips through both libraries, a body from the registry."""

from __future__ import annotations

import yaml
from datasets.info import DatasetInfosDict
from datasets.utils.metadata import MetadataConfigs
from huggingface_hub import DatasetCard

from nlue.data.card import SAMPLE_BANNER, size_category
from nlue.registry.tasks import TASK_NAMES, TASKS


def _card(sample_build) -> DatasetCard:
    return DatasetCard.load(sample_build.repo_dir / "README.md")


def test_yaml_round_trips_through_huggingface_hub(sample_build) -> None:
    card = _card(sample_build)
    data = card.data
    assert data.language == ["ne"] and data.license == "apache-2.0"
    assert data.size_categories == ["n<1K"]
    assert set(data.task_categories) == {"text-classification", "fill-mask"}
    assert set(data.task_ids) == {TASKS[n].hub_task_id for n in TASK_NAMES}
    assert "sample data" in data.pretty_name
    again = DatasetCard(f"---\n{data.to_yaml()}\n---\n{card.text}")
    assert yaml.safe_load(again.data.to_yaml()) == yaml.safe_load(data.to_yaml())


def test_yaml_round_trips_through_datasets(sample_build) -> None:
    data = _card(sample_build).data
    configs = MetadataConfigs.from_dataset_card_data(data)
    assert sorted(configs) == sorted(TASK_NAMES)
    assert [name for name, cfg in configs.items() if cfg.get("default")] == ["sa"]
    infos = DatasetInfosDict.from_dataset_card_data(data)
    for name, task in ((n, TASKS[n]) for n in TASK_NAMES):
        info = infos[name]
        assert tuple(info.splits) == task.splits
        if task.label_names:
            assert tuple(info.features[task.label_field].names) == task.label_names
        report = sample_build.configs[name]
        for split, split_info in info.splits.items():
            assert split_info.num_examples == report.splits[split].kept


def test_body_is_generated_from_registry_and_measurements(sample_build) -> None:
    text = _card(sample_build).text
    assert SAMPLE_BANNER in text
    for name, task in ((n, TASKS[n]) for n in TASK_NAMES):
        assert f"### `{name}`: {task.title}" in text
        assert task.description in text
        assert f"{task.paper_test_size:,}" in text
    assert "negative 15 (50.0%), positive 15 (50.0%)" in text  # measured sa train distribution
    assert "unacceptable 9 (30.0%), acceptable 21 (70.0%)" in text
    assert "arXiv:2411.19244" in text and "Unicode NFC" in text
    assert "More Information Needed" not in text
    assert "Items per thematic area:" in text


def test_size_category_bounds() -> None:
    assert size_category(999) == "n<1K"
    assert size_category(1000) == "1K<n<10K"
    assert size_category(2_000_000) == "1M<n<10M"


def test_card_shows_the_papers_numbers_with_flags_and_declares_our_conventions(sample_build) -> None:
    text = _card(sample_build).text
    # The paper's rows as printed, in its order, with the inconsistent cells flagged and explained.
    assert "| NepBERTa | 67.12 | 50.52 | accuracy and macro-F1 cannot both hold |" in text
    assert text.count("R² > Pearson²: columns probably swapped") == 9
    assert "implied σ below sampling noise" in text and "Best reported" not in text
    # Our conventions are named as ours.
    assert "The NLUE score (the mean of the tasks' primary metrics) is an nlue convention" in text
    assert "the mean of Pearson and Spearman, an nlue convention" in text
    assert "the paper's own headline score" in text
