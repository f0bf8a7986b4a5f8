"""`nlue translate --mt-model`: a local transformers translation model, batched, its answers cached.

The model is a tiny Marian encoder-decoder with random weights and a tokenizer trained
here on English and Nepali text: its output is gibberish, which is the point: whatever
it writes ends as a row or a counted reject, never a crash, and a second run reads every
translation back from the answer cache.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nlue.errors import NlueError
from nlue.registry.tasks import get_task
from nlue.text.normalize import normalize_text
from nlue.translate.cli import main as translate_main
from nlue.translate.readers import read_source
from tests.answer_store import count_answers

GLUE = Path(__file__).parent / "data" / "glue"


@pytest.fixture(scope="module")
def tiny_marian(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import torch
    from transformers import MarianConfig, MarianMTModel

    from nlue.lm.tiny import sample_corpus, train_tokenizer

    english = [line for path in GLUE.iterdir() for line in path.read_text(encoding="utf-8").splitlines()]
    tokenizer = train_tokenizer("roberta", [*english, *sample_corpus()], vocab_size=600)
    tokenizer.add_special_tokens({"additional_special_tokens": ["__ne__"]})
    config = MarianConfig(
        vocab_size=len(tokenizer), d_model=16, encoder_layers=1, decoder_layers=1, encoder_attention_heads=2,
        decoder_attention_heads=2, encoder_ffn_dim=32, decoder_ffn_dim=32, max_position_embeddings=128,
        pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id,
        decoder_start_token_id=tokenizer.pad_token_id, forced_eos_token_id=tokenizer.eos_token_id,
    )  # fmt: skip
    torch.manual_seed(0)
    out = tmp_path_factory.mktemp("marian") / "tiny-marian-en-ne"
    MarianMTModel(config).save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_local_model_translates_every_row_or_rejects_it_and_resumes_from_the_cache(
    tiny_marian: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, one_torch_thread, answer_cache: Path
) -> None:
    from nlue.lm.seq2seq import Seq2SeqLM as Seq2SeqTranslator

    source = GLUE / "QNLI.train.tsv"
    out = tmp_path / "work"
    argv = ["--task", "qnli", "--source", str(source), "--mt-model", str(tiny_marian), "--out", str(out),
            "--mt-batch-size", "3", "--mt-max-new-tokens", "6", "--device", "cpu", "--min-devanagari", "0", "-q"]  # fmt: skip
    assert translate_main(argv) == 0
    output = out / "qnli" / "train.translated.jsonl"
    written = _rows(output)
    work = out / "_translate" / "qnli-train"
    rejects = _rows(work / "rejects.jsonl")
    assert len(written) + len(rejects) == 4 and all(r["stage"] in ("translate", "check", "quality") for r in rejects)
    report = json.loads((work / "report.json").read_text())
    assert report["translator"]["backend"] == "seq2seq"
    usage = report["translator"]["usage"]
    assert usage["prompt_tokens"] > 0 and 0 < usage["completion_tokens"] <= 8 * 6 + 8
    # what was written is what the model says for those texts, batched the same way
    rows = read_source(get_task("qnli"), source).rows
    texts = [row.fields[name] for row in rows for name in ("question", "sentence")]
    fresh = Seq2SeqTranslator(tiny_marian, batch_size=3, max_new_tokens=6, device="cpu", show_progress=False)
    expected = fresh.translate_texts(texts)
    by_id = {r["provenance"]["source_id"]: r for r in written}
    for row, question in zip(rows, expected[::2], strict=True):
        if row.source_id in by_id:
            # translations pass the builder's row rules: normalize_text (whitespace, controls, joiners)
            assert by_id[row.source_id]["question"] == normalize_text(question)
            assert by_id[row.source_id]["label"] == get_task("qnli").label_names[row.label]
            assert by_id[row.source_id]["provenance"]["model"] == f"mt:{tiny_marian}"
    assert count_answers(answer_cache) == len(set(texts))
    # a second run translates nothing: every text comes from the answer cache
    monkeypatch.setattr(Seq2SeqTranslator, "_generate", lambda self, texts: pytest.fail("asked again"))
    first = output.read_bytes()
    assert translate_main(argv) == 0
    assert output.read_bytes() == first


def test_target_language_token_must_exist(tiny_marian: Path, one_torch_thread) -> None:
    from nlue.lm.seq2seq import Seq2SeqLM as Seq2SeqTranslator

    translator = Seq2SeqTranslator(tiny_marian, tgt_lang="__ne__", device="cpu", show_progress=False)
    assert translator.forced_bos == translator.tokenizer.convert_tokens_to_ids("__ne__")
    with pytest.raises(NlueError, match="no token 'npi_Deva'"):
        Seq2SeqTranslator(tiny_marian, tgt_lang="npi_Deva", device="cpu", show_progress=False)
    with pytest.raises(NlueError, match="not a sequence-to-sequence checkpoint"):
        Seq2SeqTranslator(GLUE, device="cpu", show_progress=False)


def test_backtranslation_through_a_local_model(tiny_marian: Path, tmp_path: Path, one_torch_thread) -> None:
    out = tmp_path / "work"
    common = ["--task", "qnli", "--out", str(out), "--device", "cpu", "--mt-model", str(tiny_marian), "-q"]
    assert translate_main([*common, "--source", str(GLUE / "QNLI.train.tsv"), "--min-devanagari", "0"]) == 0
    written = _rows(out / "qnli" / "train.translated.jsonl")
    assert translate_main(["backtranslate", *common, "--min-rows", "2"]) == 0
    report = json.loads((out / "_translate" / "qnli-train" / "backtranslation" / "report.json").read_text())
    assert report["system"] == f"mt:{tiny_marian}" and report["rows"] == min(2, len(written))
    assert report["scores"]["texts"] == 2 * report["rows"] and 0 <= report["scores"]["chrf"] < 50  # gibberish
