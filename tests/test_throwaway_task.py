"""A task added here, in the test alone, goes through every part of the package with no other code touched.

The registry entry and a few rows below are all there is: it builds into a dataset repo,
loads with `datasets`, fine-tunes with the recipe, scores through `score_task` and the
`nlue` evaluate module, and appears in the Space's Try and Data tabs.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import MappingProxyType

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from nlue.data.build import build_repo
from nlue.data.report import BuildOptions, TaskSources
from nlue.registry.spec import InputSpec, TaskSpec
from nlue.registry.tasks import TASK_NAMES, TASKS, Benchmark, get_kind, registered
from nlue.scores import metric_path, score_task

KIND = get_kind("classification")
TOY = TaskSpec(
    name="toy_headlines",
    title="Toy headline-body agreement",
    category="throwaway",
    problem_type=KIND.name,
    description="Decide whether a news body matches its headline (a throwaway task of the tests).",
    input_fields=("headline", "body"),
    inputs=InputSpec(first=("headline",), second=("body",), joiner=" "),
    label_field="verdict",
    label_names=("mismatch", "match"),
    label_values=MappingProxyType({"no": 0, "yes": 1}),
    metrics=KIND.metrics,
    primary_metric=KIND.primary_metric,
    paper_train_size=None,
    paper_test_size=8,
    paper_total_size=32,
    class_balance=MappingProxyType({"mismatch": 0.5, "match": 0.5}),
    domains=("invented news",),
    sources=("written in this test",),
    label_notes="yes = the body is about the headline, no = it is not.",
    hub_task_id="text-classification-other",
    benchmark="toybench",
)
TOPICS = [
    ("बजेट पारित भयो", "संसदले आज आगामी वर्षको बजेट बहुमतले पारित गर्‍यो।"),
    ("हिमपात सुरु", "हिमाली जिल्लामा हिजो रातिदेखि हिउँ पर्न थालेको छ।"),
    ("क्रिकेटमा जित", "नेपाली टोलीले अन्तिम ओभरमा खेल जित्यो।"),
    ("नयाँ पुल खुल्यो", "नदी वारपार गर्न बनेको झोलुंगे पुल आजदेखि सञ्चालनमा आयो।"),
    ("धान रोपाइँ", "किसानहरू असारको पन्ध्रमा खेतमा धान रोप्न व्यस्त छन्।"),
    ("विद्यालय बन्द", "चिसोका कारण जिल्लाका विद्यालय एक हप्ता बन्द हुने भएका छन्।"),
    ("बाटो अवरुद्ध", "पहिरो खसेर राजमार्ग दुई दिनदेखि बन्द छ।"),
    ("चिया निर्यात", "पूर्वी पहाडको चिया यस वर्ष बढी मात्रामा विदेश पठाइयो।"),
]


def _rows(offset: int) -> list[dict[str, str]]:
    """A matching and a mismatching body for each headline (mismatches pair it with another topic)."""
    rows = []
    for i, (headline, body) in enumerate(TOPICS):
        other = TOPICS[(i + 1 + offset) % len(TOPICS)][1]
        rows += [
            {"headline": f"{headline} {offset}", "body": body, "verdict": "yes"},
            {"headline": f"{headline} {offset}", "body": other, "verdict": "no"},
        ]
    return rows


def _write(path: Path, rows: list[dict[str, str]]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def toybench():
    with registered(Benchmark("toybench", "A throwaway benchmark", "@misc{toy}", (TOY,))) as benchmark:
        yield benchmark
    assert TOY.name not in TASKS  # gone again once the test is over


def test_a_task_added_in_the_test_builds_loads_trains_scores_and_shows(toybench, tmp_path: Path) -> None:
    import datasets
    import evaluate

    from nlue.lm.tiny import save_tiny_encoder
    from nlue.space.service import SpaceService
    from nlue.space.settings import SpaceSettings
    from nlue.training.args import DataArguments, LoraArguments, ModelArguments, NlueTrainingArguments, RecipeArguments
    from nlue.training.run import run_training

    assert TOY.name in TASKS and TOY.name not in TASK_NAMES  # its own benchmark, not NLUE
    # Build: the declared label values (yes/no) map onto the registry's labels.
    train = _write(tmp_path / "train.jsonl", _rows(0) + _rows(2))
    test = _write(tmp_path / "test.jsonl", _rows(5))
    result = build_repo(
        [TaskSources(TOY, {"train": [train], "test": [test]})], tmp_path / "build", BuildOptions(name="toybench")
    )
    assert result.rejects == 0
    # Load.
    data = datasets.load_dataset(str(result.repo_dir), TOY.name)
    assert data["train"].features["verdict"].names == ["mismatch", "match"]
    assert set(data) == {"train", "validation", "test"} and data["test"].num_rows == 16
    # Train.
    encoder = save_tiny_encoder(tmp_path / "encoder", "bert")
    outcome = run_training(
        ModelArguments(model_name_or_path=str(encoder)),
        DataArguments(task=TOY.name, dataset=str(result.repo_dir)),
        LoraArguments(),
        RecipeArguments(results_dir=str(tmp_path / "results"), bootstrap_resamples=50),
        NlueTrainingArguments(
            output_dir=str(tmp_path / "models" / TOY.name), num_train_epochs=1, per_device_train_batch_size=8
        ),
    )
    assert outcome.result.task == TOY.name and 0.0 <= outcome.result.primary_score <= 1.0
    # Score: the shared scorer and the evaluate module agree.
    scores = score_task(TOY.name, [0, 1, 1, 0], [0, 1, 0, 0])
    module = evaluate.load(metric_path("nlue"), TOY.name)
    assert module.compute(predictions=[0, 1, 1, 0], references=[0, 1, 0, 0])["macro_f1"] == pytest.approx(
        scores["macro_f1"]
    )
    # The Space offers it: the Try tab's form and model list, a prediction, and the data browser.
    service = SpaceService(
        SpaceSettings(models=tmp_path / "models", results_dir=tmp_path / "results", dataset=str(result.repo_dir))
    )
    form = service.task_form(TOY.name)
    assert [f.label for f in form.fields if f.visible] == ["Headline", "Body"]
    assert form.models == (f"models/{TOY.name}",)
    output, _ = service.predict(TOY.name, form.models[0], "बजेट पारित भयो", "संसदले बजेट पारित गर्‍यो।")
    assert set(output) == {"mismatch", "match"}
    frame, _, _ = service.data_page(TOY.name, "test", 1, 5)
    assert set(frame["verdict"]) <= {"mismatch", "match"} and len(frame) == 5
