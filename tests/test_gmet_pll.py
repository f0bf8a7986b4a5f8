"""The GMET masked-LM scorer: PLL-word-l2r values, a planted multi-piece word, mask tokens, batching."""

from __future__ import annotations

import itertools
from pathlib import Path
from types import SimpleNamespace

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from nlue.errors import NlueError  # noqa: E402
from nlue.gmet.items import GmetItem  # noqa: E402
from nlue.lm.baselines.ngram import corpus_texts  # noqa: E402
from nlue.lm.masked.pieces import masked_text, vocabulary_classes  # noqa: E402
from nlue.lm.masked.predictor import MaskedLMPredictor  # noqa: E402
from nlue.lm.tiny import save_tiny_encoder, train_tokenizer  # noqa: E402

PLANTED = "चन्द्रमा"
LEFT, RIGHT = "आज राति आकाशमा", "देखियो ।"
SENTENCE = f"{LEFT} [MASK] {RIGHT}"


pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def bert_tokenizer():
    return train_tokenizer("bert", list(corpus_texts()))


class ChainMLM(torch.nn.Module):
    """A fake masked LM: logits at position t = W[token at t-1] + U[token at t+1].

    So the PLL-word-l2r factors of a word are known in closed form, and a word can be
    planted by raising the right entries of W and U.
    """

    def __init__(self, vocab: int) -> None:
        super().__init__()
        generator = torch.Generator().manual_seed(0)
        self.W = torch.nn.Parameter(torch.randn(vocab, vocab, generator=generator) * 0.5, requires_grad=False)
        self.U = torch.nn.Parameter(torch.randn(vocab, vocab, generator=generator) * 0.5, requires_grad=False)
        self.config = SimpleNamespace(vocab_size=vocab, max_position_embeddings=130)

    def get_output_embeddings(self):  # no projection to slice: the scorer must take the full-logits path
        return None

    def forward(self, input_ids, attention_mask=None):
        prev = torch.roll(input_ids, 1, dims=1)
        nxt = torch.roll(input_ids, -1, dims=1)
        return SimpleNamespace(logits=self.W[prev] + self.U[nxt])


def _expected_score(model: ChainMLM, tok, pieces: list[int], left: int, right: int, alpha: float = 1.0) -> float:
    """The PLL-word-l2r score computed by hand from the fake model's closed form."""
    total = 0.0
    for i, piece in enumerate(pieces):
        prev = left if i == 0 else pieces[i - 1]
        nxt = right if i == len(pieces) - 1 else tok.mask_token_id
        total += torch.log_softmax(model.W[prev] + model.U[nxt], dim=-1)[piece].item()
    return total / len(pieces) ** alpha


def _planted_model(tok):
    model = ChainMLM(len(tok))
    pieces = tok.convert_tokens_to_ids(tok.tokenize(PLANTED))
    left = tok.convert_tokens_to_ids(tok.tokenize(LEFT))[-1]
    right = tok.convert_tokens_to_ids(tok.tokenize(RIGHT))[0]
    mask = tok.mask_token_id
    with torch.no_grad():
        model.W[left, pieces[0]] += 6.0
        for a, b in itertools.pairwise(pieces):
            model.W[a, b] += 6.0
        model.U[mask, pieces[0]] += 3.0  # the first piece is followed by more masks...
        for piece in pieces[:-1]:
            model.U[right, piece] -= 3.0  # ...no shorter prefix is a word on its own
        model.U[right, pieces[-1]] += 3.0  # the last piece ends the word
    return model, pieces, left, right


def test_planted_multi_piece_word_ranks_first(bert_tokenizer):
    tok = bert_tokenizer
    model, pieces, left, right = _planted_model(tok)
    assert len(pieces) >= 3, "the test needs a word the tokenizer splits into several pieces"
    item = GmetItem(7, SENTENCE, "Sky", "Nature & Environment", ("घाम", PLANTED))
    for answers in (True, False):  # with the answers as candidates, and from the model's own greedy completion
        predictor = MaskedLMPredictor(model, tok, "chain", answer_candidates=answers, show_progress=False)
        [prediction] = predictor.predict([item])
        assert prediction.id == 7
        assert prediction.prediction == PLANTED
        assert prediction.pieces[0] == len(pieces)
        assert prediction.scores[0] == pytest.approx(_expected_score(model, tok, pieces, left, right), abs=1e-4)
        assert prediction.log_likelihoods[0] == pytest.approx(prediction.scores[0] * len(pieces), abs=1e-4)
        assert predictor.last_pass_sliced is False  # the fake has no output embeddings: full logits
    # Every other candidate's score is its own closed-form PLL too.
    predictor = MaskedLMPredictor(model, tok, "chain", length_alpha=0.0, show_progress=False)
    [prediction] = predictor.predict([item])
    for word, score in zip(prediction.top_k, prediction.scores, strict=True):
        ids = tok.convert_tokens_to_ids(tok.tokenize(word))
        assert score == pytest.approx(_expected_score(model, tok, ids, left, right, alpha=0.0), abs=1e-4)
    assert len(prediction.top_k) == len({w for w in prediction.top_k}) <= predictor.top_k


def test_length_alpha_changes_the_ranking_as_documented(bert_tokenizer):
    tok = bert_tokenizer
    model, pieces, *_ = _planted_model(tok)
    item = GmetItem(0, SENTENCE, "Sky", "Nature & Environment", (PLANTED,))
    mean = MaskedLMPredictor(model, tok, "chain", length_alpha=1.0, show_progress=False).predict([item])[0]
    total = MaskedLMPredictor(model, tok, "chain", length_alpha=0.0, show_progress=False).predict([item])[0]
    position = total.top_k.index(PLANTED)
    assert total.scores[position] == pytest.approx(mean.scores[0] * len(pieces), abs=1e-4)


def test_batching_does_not_change_scores(bert_tokenizer):
    tok = bert_tokenizer
    model, *_ = _planted_model(tok)
    items = [
        GmetItem(0, SENTENCE, "Sky", "Nature & Environment", (PLANTED,)),
        GmetItem(1, "हामी बिहान [MASK] खायौं ।", "Food", "Daily Life & Home", ("भात", "खाजा")),
        GmetItem(2, "[MASK] बगिरहेको छ", "River", "Nature & Environment", ("नदी",)),
    ]
    one = MaskedLMPredictor(model, tok, "chain", batch_size=1, show_progress=False).predict(items)
    many = MaskedLMPredictor(model, tok, "chain", batch_size=64, show_progress=False).predict(items)
    for a, b in zip(one, many, strict=True):
        assert a.top_k == b.top_k
        assert a.scores == pytest.approx(b.scores, abs=1e-5)


@pytest.mark.parametrize(
    ("family", "attention"),
    [
        ("bert", "sdpa"),
        ("bert", "eager"),
        ("roberta", "sdpa"),
        ("roberta", "eager"),
        ("deberta-v2", None),
        ("distilbert", None),
    ],
)
def test_projecting_only_masked_positions_equals_full_logits(tmp_path: Path, family, attention):
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    path = save_tiny_encoder(tmp_path / family, family)
    tok = AutoTokenizer.from_pretrained(path)
    model = AutoModelForMaskedLM.from_pretrained(path, **({"attn_implementation": attention} if attention else {}))
    predictor = MaskedLMPredictor(model, tok, family, show_progress=False)
    enc = tok(["आज राति आकाशमा चन्द्रमा देखियो ।", "भात"], padding=True, return_tensors="pt")
    rows, cols = [0, 0, 1], [2, 4, 1]
    got = predictor._log_probs(enc["input_ids"], enc["attention_mask"], rows, cols)
    assert predictor.last_pass_sliced, f"{family}: the output projection should see only the masked positions"
    # BERT-layout models also run their last layer only there (mlm_trim); the others run it whole
    assert predictor.last_pass_trimmed == (family in ("bert", "roberta")), family
    with torch.inference_mode():
        full = model(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"]).logits
    expected = torch.log_softmax(full[rows, cols].float(), dim=-1)
    assert torch.allclose(got, expected, atol=1e-5)


def test_mask_placeholder_maps_to_each_tokenizers_mask(bert_tokenizer):
    roberta = train_tokenizer("roberta", list(corpus_texts()))
    assert masked_text(SENTENCE, bert_tokenizer) == SENTENCE
    assert masked_text(SENTENCE, roberta) == f"{LEFT} <mask> {RIGHT}"


def test_word_pieces_include_the_space_marker_of_byte_level_bpe():
    from transformers import AutoModelForMaskedLM

    from nlue.lm.tiny import tiny_config

    tok = train_tokenizer("roberta", list(corpus_texts()))
    model = AutoModelForMaskedLM.from_config(tiny_config("roberta", len(tok), tok))
    predictor = MaskedLMPredictor(model, tok, "tiny-roberta", show_progress=False)
    item = GmetItem(0, SENTENCE, "Sky", "Nature & Environment", (PLANTED,))
    [encoded] = predictor.encode([item], [PLANTED])
    assert encoded is not None
    pieces = tok.convert_ids_to_tokens(list(encoded.pieces))
    assert pieces[0].startswith("Ġ") and len(pieces) >= 2
    assert tok.decode(list(encoded.pieces)).strip() == PLANTED
    whole = tok.decode(list(encoded.left + encoded.pieces + encoded.right), skip_special_tokens=True)
    assert whole.strip() == SENTENCE.replace("[MASK]", PLANTED)
    starts, continues = vocabulary_classes(tok, len(tok))
    assert starts[encoded.pieces[0]] and not continues[encoded.pieces[0]]
    assert all(continues[p] for p in encoded.pieces[1:])


def test_model_without_a_mask_token_is_refused(tmp_path: Path, bert_tokenizer):
    from transformers import AutoModelForMaskedLM, PreTrainedTokenizerFast

    from nlue.lm.tiny import tiny_config

    no_mask = PreTrainedTokenizerFast(tokenizer_object=bert_tokenizer.backend_tokenizer, pad_token="[PAD]")
    assert no_mask.mask_token is None
    model = AutoModelForMaskedLM.from_config(tiny_config("bert", len(bert_tokenizer), bert_tokenizer))
    with pytest.raises(NlueError, match=r"my-causal-model: its tokenizer has no mask token"):
        MaskedLMPredictor(model, no_mask, "my-causal-model")
    folder = tmp_path / "no-mask-model"
    model.save_pretrained(folder)
    no_mask.save_pretrained(folder)
    with pytest.raises(NlueError, match=f"{folder}: its tokenizer has no mask token"):
        MaskedLMPredictor.from_pretrained(str(folder))


def test_exact_ties_never_favour_a_listed_answer(bert_tokenizer):
    tok = bert_tokenizer
    model = ChainMLM(len(tok))
    with torch.no_grad():  # uniform logits: every word of every length scores log(1 / V) per piece
        model.W.zero_()
        model.U.zero_()
    item = GmetItem(0, SENTENCE, "Sky", "Nature & Environment", (PLANTED, "भान्साकोठा"))  # multi-piece words
    [prediction] = MaskedLMPredictor(model, tok, "uniform", show_progress=False).predict([item])
    assert len(set(prediction.scores)) == 1
    assert prediction.prediction not in item.answers


def test_the_trimmed_last_layer_follows_a_deep_copy_and_leaves_a_wrapped_layer_alone(tmp_path: Path):
    import copy

    from transformers import AutoModelForMaskedLM, AutoTokenizer

    from nlue.lm.masked import trim as mlm_trim

    path = save_tiny_encoder(tmp_path / "bert", "bert")
    tok = AutoTokenizer.from_pretrained(path)
    model = AutoModelForMaskedLM.from_pretrained(path)
    assert MaskedLMPredictor(model, tok, "bert", show_progress=False).trim_last_layer
    twin = copy.deepcopy(model)
    assert twin.bert.encoder.layer[-1].forward.__self__ is twin.bert.encoder.layer[-1]  # not the original's layer
    with torch.no_grad():  # the copy's own weights: changing them changes its output, not the original's
        twin.bert.encoder.layer[-1].output.dense.weight.zero_()
    enc = tok(["आज राति आकाशमा चन्द्रमा देखियो ।"], return_tensors="pt")
    rows, cols = torch.tensor([0]), torch.tensor([2])
    with torch.inference_mode(), mlm_trim.reading_only(rows, cols) as state:
        trimmed = twin(**enc).logits[0, 2]
    assert state["trimmed"]
    with torch.inference_mode():
        assert torch.allclose(trimmed, twin(**enc).logits[0, 2], atol=1e-5)
        assert not torch.allclose(trimmed, model(**enc).logits[0, 2], atol=1e-3)
    # a layer whose forward another library already wraps (accelerate's device hooks do) is left alone
    other = AutoModelForMaskedLM.from_pretrained(path)
    layer = other.bert.encoder.layer[-1]
    layer.forward = lambda *args, **kwargs: type(layer).forward(layer, *args, **kwargs)
    assert not mlm_trim.install(other) and not MaskedLMPredictor(other, tok, "b", show_progress=False).trim_last_layer
