"""The Space's "Ask a language model": one exam or NLUE item to a listed local causal LM, raw output and parse."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nlue.errors import NlueError
from nlue.lm.base import GenerationRequest
from nlue.registry.tasks import get_task
from nlue.space.llm_try import LlmTry, llm_tasks, prompt_languages
from nlue.space.models import ModelCatalog, describe_checkpoint, scan_folder
from nlue.space.service import SpaceService
from nlue.space.settings import SpaceSettings


@pytest.fixture(scope="module")
def llm_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from nlue.lm.tiny import save_tiny_causal_lm

    root = tmp_path_factory.mktemp("space-llms")
    save_tiny_causal_lm(root / "tiny-llama", "llama")  # has a chat template: the exams go as chat messages
    save_tiny_causal_lm(root / "tiny-gpt2", "gpt2")  # plain text
    return root


def test_causal_lm_folders_are_listed_as_such(llm_folder: Path) -> None:
    assert describe_checkpoint(llm_folder / "tiny-gpt2") == ("causal-lm", ())
    catalog = ModelCatalog(scan_folder(llm_folder))
    assert sorted(catalog.causal_lms()) == [f"{llm_folder.name}/tiny-gpt2", f"{llm_folder.name}/tiny-llama"]
    assert {"mcq_ne", "mcq_ur", "sa", "mnli"} <= set(llm_tasks()) and "gmet" not in llm_tasks()
    assert prompt_languages("mcq_ur") == ["en", "native"] and "ne" in prompt_languages("sa")


def test_an_exam_item_is_answered_and_parsed_as_the_exam_command_does(llm_folder: Path, one_torch_thread) -> None:
    catalog = ModelCatalog(scan_folder(llm_folder))
    asker = LlmTry(catalog)
    service = SpaceService(SpaceSettings(models=llm_folder, results_dir=llm_folder / "none"), catalog=catalog)
    item = service.data.split("mcq_ne", "test")[0]
    name = f"{llm_folder.name}/tiny-llama"
    answer = asker.ask(name, "mcq_ne", item, "native")
    model = asker.model(name)
    # The prompt shown is the chat the model got; its raw output is what greedy generation gives for it.
    assert answer.prompt.startswith("[system]") and item["question"] in answer.prompt
    assert "Answer key: " + "ABCD"[item["correct_key"]] not in answer.prompt  # the gold never reaches the model
    again = model.generate([GenerationRequest(messages=_messages(answer.prompt), max_new_tokens=64, stop=_stop())])
    assert answer.raw_output == again[0].text
    assert answer.verdict in {"correct", "wrong", "invalid"}
    strict = answer.parse["strict"]
    assert (answer.verdict == "invalid") == (not strict["valid"]) and answer.parse["gold key"] in "ABCD"


def test_an_nlue_item_is_scored_by_label_log_likelihood(llm_folder: Path, one_torch_thread) -> None:
    catalog = ModelCatalog(scan_folder(llm_folder))
    service = SpaceService(SpaceSettings(models=llm_folder, results_dir=llm_folder / "none"), catalog=catalog)
    item = service.data.split("sa", "test")[0]
    answer = LlmTry(catalog).ask(f"{llm_folder.name}/tiny-gpt2", "sa", item, "ne")
    scores = answer.parse["log-likelihood per label"]
    assert len(scores) == len(get_task("sa").label_names)
    words = list(scores)  # the verbalised labels, in label-id order
    assert answer.parse["predicted"] == get_task("sa").label_names[words.index(max(scores, key=scores.get))]
    assert answer.verdict == ("correct" if answer.parse["predicted"] == answer.parse["gold"] else "wrong")
    assert item["text"] in answer.prompt


def test_an_stsb_item_is_answered_with_a_number_the_strict_parser_reads(llm_folder: Path, one_torch_thread) -> None:
    """issue 29, item 25: STS-B is on the Space's list of tasks too, asked for a number as `--mode generate` does."""
    from nlue.evals.llm.number_generation import parse_number

    catalog = ModelCatalog(scan_folder(llm_folder))
    service = SpaceService(SpaceSettings(models=llm_folder, results_dir=llm_folder / "none"), catalog=catalog)
    item = service.data.split("stsb", "test")[0]
    assert "stsb" in llm_tasks() and prompt_languages("stsb") == ["en", "ne"]
    answer = LlmTry(catalog).ask(f"{llm_folder.name}/tiny-gpt2", "stsb", item, "ne")
    assert answer.prompt.splitlines()[-2].startswith("० देखि ५ सम्मको") and item["sentence1"] in answer.prompt
    assert str(item["label"]) not in answer.prompt.split("\n", 1)[1]  # the gold never reaches the model
    assert answer.parse["strict"] == parse_number(answer.raw_output, (0.0, 5.0)).to_dict()
    assert answer.parse["gold score"] == item["label"]
    assert (
        answer.verdict == "invalid" if answer.parse["strict"]["score"] is None else answer.verdict.startswith("scored")
    )


def test_only_listed_causal_lms_are_loaded(llm_folder: Path) -> None:
    asker = LlmTry(ModelCatalog(scan_folder(llm_folder)))
    with pytest.raises(NlueError, match="not a causal language model this Space offers"):
        asker.model(str(llm_folder / "tiny-gpt2"))  # a path typed by a visitor is never loaded


def _messages(shown: str) -> tuple[dict[str, str], ...]:
    parts = [block.split("\n", 1) for block in shown.split("\n\n[")]
    return tuple({"role": head.strip("[]"), "content": body} for head, body in parts)


def _stop() -> tuple[str, ...]:
    from nlue.evals.mcq.run import stop_sequences

    return stop_sequences("ne")


def test_the_page_has_the_llm_section_and_the_benchmark_tabs(llm_folder: Path) -> None:
    from nlue.space.ui import build_demo

    settings = SpaceSettings(models=llm_folder, results_dir=llm_folder / "none")
    demo = build_demo(settings, SpaceService(settings))
    ids = {getattr(block, "elem_id", None) for block in demo.blocks.values()}
    assert {"llm-model", "llm-ask", "llm-prompt", "llm-raw", "llm-parse", "exam-table", "nediom-table"} <= ids
    events = {fn.api_name: fn for fn in demo.fns.values() if fn.api_name}
    assert events["ask_llm"].concurrency_id == events["fill_blank"].concurrency_id  # model calls share one pool


def _config_only(folder: Path, **config: object) -> Path:
    """A checkpoint folder as the scan sees it: only its config.json is read."""
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    return folder


def test_causal_lms_are_found_by_the_class_transformers_builds_for_them(tmp_path: Path, caplog) -> None:
    """issue 29, item 29: a causal LM in the models folder is offered under "Ask a language model", whatever
    name its architecture has (Gemma 3 is Gemma3ForConditionalGeneration; an export may record none); the
    folders the scan cannot serve are named in the log, and the empty section says which folder was read."""
    import logging

    from nlue.space.llm_try import NO_LLM

    root = tmp_path / "models"
    _config_only(root / "gemma", architectures=["Gemma3ForConditionalGeneration"], model_type="gemma3")
    _config_only(root / "exported", model_type="llama")  # no architectures recorded
    _config_only(root / "t5", architectures=["T5ForConditionalGeneration"], model_type="t5")  # seq2seq
    _config_only(root / "bart", architectures=["BartForConditionalGeneration"], model_type="bart")
    _config_only(root / "bert", model_type="bert")  # a masked LM's type too: not taken for a causal LM
    caplog.set_level(logging.INFO, logger="nlue.space.models")
    catalog = ModelCatalog(scan_folder(root))
    assert sorted(catalog.causal_lms()) == ["models/exported", "models/gemma"]
    skipped = [r.getMessage() for r in caplog.records if "cannot serve" in r.getMessage()]
    assert any(
        "t5" in m and "T5ForConditionalGeneration: not a classifier, masked LM or causal LM" in m for m in skipped
    )
    assert len(skipped) == 3
    assert "read from build/models." in NO_LLM.format(source="build/models")
