"""Small encoders built locally, with no download: for tests, benchmarks and the offline main job.

A tokenizer is trained on the embedded sample corpus with `tokenizers`, and a model of
the requested architecture family is created from a small config with random weights.
Nothing here is a pretrained Nepali model: scores of these models are baselines only.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Literal

from nlue.data.sample import sample_records
from nlue.registry.tasks import TASKS

Family = Literal["bert", "roberta", "deberta-v2", "distilbert"]
FAMILIES: tuple[Family, ...] = ("bert", "roberta", "deberta-v2", "distilbert")


def sample_corpus() -> Iterator[str]:
    """Every text field and GMET answer of the embedded sample data."""
    for task, record in sample_records():
        for name in task.text_fields:
            yield record[name].replace("[MASK]", " ")
        yield from record.get("answers", [])


def train_tokenizer(family: Family, texts: Iterable[str] | None = None, vocab_size: int = 2000):
    """A fast tokenizer with the special tokens of ``family`` (WordPiece or byte-level BPE)."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    corpus = list(texts if texts is not None else sample_corpus())
    if family in ("bert", "distilbert"):
        specials = {"unk": "[UNK]", "sep": "[SEP]", "pad": "[PAD]", "cls": "[CLS]", "mask": "[MASK]"}
        tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
        tok.normalizer = normalizers.NFC()
        tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Punctuation()])
        trainer = trainers.WordPieceTrainer(
            vocab_size=vocab_size, special_tokens=list(specials.values()), show_progress=False
        )
        tok.train_from_iterator(corpus, trainer)
        cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
        tok.post_processor = processors.TemplateProcessing(
            single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1", special_tokens=[("[CLS]", cls), ("[SEP]", sep)]
        )
        tok.decoder = decoders.WordPiece()
    else:
        specials = {"bos": "<s>", "pad": "<pad>", "eos": "</s>", "unk": "<unk>", "mask": "<mask>"}
        tok = Tokenizer(models.BPE(unk_token="<unk>"))
        tok.normalizer = normalizers.NFC()
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=True)
        trainer = trainers.BpeTrainer(
            vocab_size=vocab_size,
            special_tokens=list(specials.values()),
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
            show_progress=False,  # its bar is three blank lines in a log
        )
        tok.train_from_iterator(corpus, trainer)
        tok.post_processor = processors.RobertaProcessing(
            ("</s>", tok.token_to_id("</s>")), ("<s>", tok.token_to_id("<s>"))
        )
        tok.decoder = decoders.ByteLevel()
        specials = {**specials, "cls": "<s>", "sep": "</s>"}
    return PreTrainedTokenizerFast(
        tokenizer_object=tok, **{f"{k}_token": v for k, v in specials.items()}, model_max_length=128
    )


def tiny_config(family: Family, vocab_size: int, tokenizer=None, **overrides):
    """A small config of ``family``: 4 layers, hidden size 32, so presets have layers to choose from."""
    from transformers import AutoConfig

    common = {"vocab_size": vocab_size, **overrides}
    model_type = {"bert": "bert", "roberta": "roberta", "deberta-v2": "deberta-v2", "distilbert": "distilbert"}[family]
    if family == "distilbert":
        sizes = {"dim": 32, "n_layers": 4, "n_heads": 2, "hidden_dim": 64, "max_position_embeddings": 130}
    else:
        sizes = {
            "hidden_size": 32,
            "num_hidden_layers": 4,
            "num_attention_heads": 2,
            "intermediate_size": 64,
            "max_position_embeddings": 130,
        }
    if tokenizer is not None:
        common["pad_token_id"] = tokenizer.pad_token_id
        if family == "roberta":
            common.update(bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id)
    if family == "deberta-v2":
        sizes.update(relative_attention=True, pos_att_type=["p2c", "c2p"], position_biased_input=False)
    if family == "roberta":
        sizes["type_vocab_size"] = 1
    return AutoConfig.for_model(model_type, **sizes, **common)


def _save_random_model(out: Path, auto_class: str, family: Family, seed: int, vocab_size: int, **overrides) -> Path:
    """Train a tokenizer, build ``auto_class`` from a tiny config with seeded random weights, save both."""
    import torch
    import transformers

    tokenizer = train_tokenizer(family, vocab_size=vocab_size)
    config = tiny_config(family, len(tokenizer), tokenizer, **overrides)
    torch.manual_seed(seed)
    model = getattr(transformers, auto_class).from_config(config)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


def save_tiny_classifier(
    out: Path, family: Family = "bert", task: str = "sa", seed: int = 0, vocab_size: int = 2000
) -> Path:
    """Write a randomly initialised tiny classifier for ``task`` (with tokenizer) to ``out``."""
    from nlue.lm.modeling import classifier_config_kwargs

    kwargs = classifier_config_kwargs(TASKS[task])
    return _save_random_model(out, "AutoModelForSequenceClassification", family, seed, vocab_size, **kwargs)


def save_tiny_encoder(out: Path, family: Family = "bert", seed: int = 0, vocab_size: int = 2000) -> Path:
    """Write a randomly initialised tiny masked LM (a base checkpoint with no task head) to ``out``."""
    return _save_random_model(out, "AutoModelForMaskedLM", family, seed, vocab_size)


CausalFamily = Literal["gpt2", "llama"]
CAUSAL_FAMILIES: tuple[CausalFamily, ...] = ("gpt2", "llama")

# A small ChatML-style template, so that the tiny "instruct" model exercises chat formatting.
TINY_CHAT_TEMPLATE = (
    "{% for message in messages %}<|{{ message['role'] }}|>\n{{ message['content'] }}</s>\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)


def train_causal_tokenizer(family: CausalFamily, texts: Iterable[str] | None = None, vocab_size: int = 2000):
    """A byte-level BPE tokenizer for a causal LM: GPT-2 style adds no special token, Llama style a leading BOS."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    corpus = list(texts if texts is not None else sample_corpus())
    specials = {"bos": "<s>", "eos": "</s>", "unk": "<unk>", "pad": "<pad>"}
    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=list(specials.values()),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(corpus, trainer)
    tok.decoder = decoders.ByteLevel()
    if family == "llama":  # Llama tokenizers put BOS before every text they encode
        tok.post_processor = processors.TemplateProcessing(
            single="<s> $A", special_tokens=[("<s>", tok.token_to_id("<s>"))]
        )
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=tok, **{f"{k}_token": v for k, v in specials.items()}, model_max_length=256
    )
    if family == "llama":
        tokenizer.chat_template = TINY_CHAT_TEMPLATE
    return tokenizer


def tiny_causal_config(family: CausalFamily, tokenizer, **overrides):
    """A small causal-LM config of ``family``: 2 layers, hidden size 32, 256 positions."""
    from transformers import AutoConfig

    ids = {
        "vocab_size": len(tokenizer),
        "bos_token_id": tokenizer.bos_token_id,
        "eos_token_id": tokenizer.eos_token_id,
        "pad_token_id": tokenizer.pad_token_id,
    }
    if family == "gpt2":
        sizes = {"n_embd": 32, "n_layer": 2, "n_head": 2, "n_inner": 64, "n_positions": 256}
    else:
        sizes = {
            "hidden_size": 32,
            "num_hidden_layers": 2,
            "num_attention_heads": 2,
            "num_key_value_heads": 1,
            "intermediate_size": 64,
            "max_position_embeddings": 256,
        }
    return AutoConfig.for_model(family, **{**sizes, **ids, **overrides})


def save_tiny_causal_lm(
    out: Path, family: CausalFamily = "gpt2", seed: int = 0, vocab_size: int = 2000, tokenizer=None, **overrides
) -> Path:
    """Write a randomly initialised tiny causal LM (with its tokenizer) to ``out``.

    ``family="llama"`` also gets a chat template, standing in for an instruct model.
    ``overrides`` change the config (e.g. ``n_layer=12, n_embd=768`` for a GPT-2-base shape).
    """
    import torch
    from transformers import AutoModelForCausalLM

    tokenizer = tokenizer if tokenizer is not None else train_causal_tokenizer(family, vocab_size=vocab_size)
    config = tiny_causal_config(family, tokenizer, **overrides)
    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_config(config)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out
