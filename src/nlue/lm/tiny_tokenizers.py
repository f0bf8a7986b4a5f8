"""Tiny causal LMs with the kinds of tokenizer real Nepali models ship, built locally from the sample text.

Generation code that works with one tokenizer can fail with another: each kind decodes a run
of tokens differently (bytes glued into characters, a leading space dropped, ``##`` pieces
joined), and transformers' own stop strings crash on a vocabulary with no Latin letters.
So the tests run the local backend against each kind here, all trained on
:func:`nlue.lm.tiny.sample_corpus` with no download:

* ``byte_level`` - GPT-2/Llama-3 style byte-level BPE (what :mod:`nlue.lm.tiny` makes);
* ``sentencepiece_bpe_fallback`` - Llama-2/Mistral style: Metaspace ``▁`` words, BPE, and
  ``<0x..>`` byte tokens for characters outside the vocabulary (Urdu and most Latin here);
* ``sentencepiece_bpe`` - the same without byte fallback: such characters become ``<unk>``;
* ``sentencepiece_unigram`` - XLM-R/mT5 style Unigram, no byte fallback;
* ``wordpiece`` - BERT style ``##`` continuations, joined with spaces on decoding;
* ``devanagari`` - only Devanagari letters, digits and punctuation, special tokens included
  (no Latin letter anywhere), as in some Nepali community models.

Kinds without byte fallback get the characters of the tests' stop strings in their alphabet
(:data:`STOP_ALPHABET`), so that a model can spell them; ``devanagari`` only those that are
not letters of another script.
"""

from __future__ import annotations

import json
import string
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from nlue.lm.tiny import CausalFamily, sample_corpus, save_tiny_causal_lm, train_causal_tokenizer

TokenizerKind = Literal[
    "byte_level", "sentencepiece_bpe_fallback", "sentencepiece_bpe", "sentencepiece_unigram", "wordpiece", "devanagari"
]
TOKENIZER_KINDS: tuple[TokenizerKind, ...] = (
    "byte_level",
    "sentencepiece_bpe_fallback",
    "sentencepiece_bpe",
    "sentencepiece_unigram",
    "wordpiece",
    "devanagari",
)

# Every character of the stop strings the tests use ("\nविषय:", "।", "\nمضمون:", "۔", "\nSubject:")
STOP_ALPHABET = "\n:।۔مضمون" + string.ascii_letters
SPECIALS = {"bos": "<s>", "eos": "</s>", "unk": "<unk>", "pad": "<pad>"}
WORDPIECE_SPECIALS = {"bos": "[BOS]", "eos": "[EOS]", "unk": "[UNK]", "pad": "[PAD]"}
DEVANAGARI_SPECIALS = {"bos": "<आरम्भ>", "eos": "<अन्त्य>", "unk": "<अज्ञात>", "pad": "<रिक्त>"}


def is_devanagari(ch: str) -> bool:
    return "\u0900" <= ch <= "\u097f"


def devanagari_only(text: str) -> str:
    """``text`` without letters of any other script (digits, spaces and punctuation stay)."""
    return "".join(ch for ch in text if is_devanagari(ch) or not ch.isalpha())


def _with_bos(tok: Any, bos: str) -> None:
    """Llama-style: BOS before every text the tokenizer encodes."""
    from tokenizers import processors

    tok.post_processor = processors.TemplateProcessing(single=f"{bos} $A", special_tokens=[(bos, tok.token_to_id(bos))])


def _sentencepiece(
    corpus: list[str],
    vocab_size: int,
    model: str,
    byte_fallback: bool,
    alphabet: str,
    specials: dict[str, str] = SPECIALS,
    llama_decoder: bool = True,
) -> Any:
    """A Metaspace (``▁``) tokenizer: BPE or Unigram, with or without ``<0x..>`` byte tokens.

    ``llama_decoder``: Llama-2's decoder chain (replace ``▁``, glue bytes, fuse, strip one
    leading space); otherwise the Metaspace decoder (XLM-R, mT5), which cannot glue bytes.
    """
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

    names = list(specials.values())
    if model == "unigram":
        tok = Tokenizer(models.Unigram())
        trainer: Any = trainers.UnigramTrainer(
            vocab_size=vocab_size,
            special_tokens=names,
            unk_token=specials["unk"],
            initial_alphabet=list(alphabet),
            show_progress=False,
        )
    else:
        tok = Tokenizer(models.BPE(unk_token=specials["unk"]))
        trainer = trainers.BpeTrainer(
            vocab_size=vocab_size, special_tokens=names, initial_alphabet=list(alphabet), show_progress=False
        )
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")
    tok.train_from_iterator(corpus, trainer)
    if byte_fallback:  # the 256 byte tokens join the model's own vocabulary, where BPE looks them up
        data = json.loads(tok.to_str())
        vocab = data["model"]["vocab"]
        for byte in range(256):
            vocab.setdefault(f"<0x{byte:02X}>", len(vocab))
        data["model"]["byte_fallback"] = True
        tok = Tokenizer.from_str(json.dumps(data))
    if llama_decoder:  # ByteFallback has nothing to do where there are no byte tokens, as in Llama's own chain
        glue = [decoders.ByteFallback()] if byte_fallback else []
        tok.decoder = decoders.Sequence([decoders.Replace("▁", " "), *glue, decoders.Fuse(), decoders.Strip(" ", 1, 0)])
    else:
        tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always")
    return tok


def _wordpiece(corpus: list[str], vocab_size: int) -> Any:
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

    tok = Tokenizer(models.WordPiece(unk_token=WORDPIECE_SPECIALS["unk"]))
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Punctuation()])
    trainer = trainers.WordPieceTrainer(
        vocab_size=vocab_size,
        special_tokens=list(WORDPIECE_SPECIALS.values()),
        initial_alphabet=list(STOP_ALPHABET),
        show_progress=False,
    )
    tok.train_from_iterator(corpus, trainer)
    tok.decoder = decoders.WordPiece(prefix="##", cleanup=True)
    return tok


def train_tokenizer_of_kind(kind: TokenizerKind, texts: Iterable[str] | None = None, vocab_size: int = 1000) -> Any:
    """A ``PreTrainedTokenizerFast`` of ``kind`` with BOS/EOS/UNK/PAD, adding BOS before each text."""
    from transformers import PreTrainedTokenizerFast

    corpus = list(texts if texts is not None else sample_corpus())
    specials = SPECIALS
    if kind == "byte_level":
        tokenizer = train_causal_tokenizer("llama", corpus, vocab_size=vocab_size)
        tokenizer.chat_template = None  # plain prompts, like every other kind here
        return tokenizer
    if kind == "sentencepiece_bpe_fallback":  # no extra alphabet: what the corpus lacks comes as bytes
        tok = _sentencepiece(corpus, vocab_size, "bpe", True, "")
    elif kind == "sentencepiece_bpe":
        tok = _sentencepiece(corpus, vocab_size, "bpe", False, STOP_ALPHABET)
    elif kind == "sentencepiece_unigram":
        tok = _sentencepiece(corpus, vocab_size, "unigram", False, STOP_ALPHABET, llama_decoder=False)
    elif kind == "wordpiece":
        specials = WORDPIECE_SPECIALS  # the decoder cleans each token; the text-wide clean-up stays off
        tok = _wordpiece(corpus, vocab_size)
    elif kind == "devanagari":
        specials = DEVANAGARI_SPECIALS
        nepali, alphabet = [devanagari_only(t) for t in corpus], devanagari_only(STOP_ALPHABET)
        tok = _sentencepiece(nepali, vocab_size, "bpe", False, alphabet, specials, llama_decoder=False)
    else:
        raise ValueError(f"unknown tokenizer kind {kind!r}; one of {', '.join(TOKENIZER_KINDS)}")
    _with_bos(tok, specials["bos"])
    return PreTrainedTokenizerFast(
        tokenizer_object=tok, **{f"{k}_token": v for k, v in specials.items()}, model_max_length=256
    )


def save_tiny_lm_of_kind(
    out: Path,
    kind: TokenizerKind,
    family: CausalFamily = "llama",
    seed: int = 0,
    vocab_size: int = 1000,
    tokenizer: Any = None,
    **overrides: Any,
) -> Path:
    """Write a randomly initialised tiny causal LM with a ``kind`` tokenizer to ``out``.

    ``tokenizer``: one :func:`train_tokenizer_of_kind` made already (training takes a second
    or two). ``overrides`` change the config (e.g. ``tie_word_embeddings=False`` for a model
    whose output layer a test sets by hand).
    """
    tokenizer = tokenizer if tokenizer is not None else train_tokenizer_of_kind(kind, vocab_size=vocab_size)
    return save_tiny_causal_lm(out, family, seed, vocab_size, tokenizer, **overrides)
