"""Stop sequences that do not depend on the vocabulary probe: :mod:`nlue.lm.stops` on six kinds of tokenizer.

* why: transformers' ``StopStringCriteria`` raises "substring not found" on a vocabulary with
  no Latin letters (and on a small WordPiece), so such a model could not generate at all;
* the windowed check ends a row at exactly the step where the full decoded text first holds a
  stop: random token sequences (hypothesis) and every short sequence of tricky tokens
  (byte tokens of one Devanagari letter, specials, ``▁``, ``##``) per tokenizer kind;
* ``LocalCausalLM.generate`` with Nepali, Urdu and English stops on every kind: random tiny
  models, and GPT-2s whose weights are set so that greedy decoding must spell a given token
  script (a test that would fail if stops were ignored), batched rows, pad equal to EOS or UNK;
* ``nlue llm mcq`` on a model whose vocabulary has no Latin letter generates and is scored.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nlue.lm.base import GenerationRequest, cut_at_stop
from nlue.lm.tiny_tokenizers import TOKENIZER_KINDS, save_tiny_lm_of_kind, train_tokenizer_of_kind

pytestmark = pytest.mark.usefixtures("one_torch_thread")

NEPALI = ("\nविषय:", "।")
URDU = ("\nمضمون:", "۔")
ENGLISH = ("\nSubject:",)
STOPS = (*NEPALI, *URDU, ENGLISH[0], "विषय")
# What each kind cannot spell: WordPiece puts a space between words and punctuation and drops
# new lines; the Devanagari-only vocabulary has no Urdu or Latin letters. Everything else can.
UNREACHABLE = {"wordpiece": {"\nविषय:", "\nمضمون:", "\nSubject:"}, "devanagari": {"\nمضمون:", "\nSubject:"}}
FORCED_WIDTH = 96  # the forced GPT-2's hidden size: one direction per position


@pytest.fixture(scope="module")
def tokenizers() -> dict:
    """One tokenizer of each kind, and a WordPiece with transformers' text-wide clean-up on, as BERT's have."""
    made = {kind: train_tokenizer_of_kind(kind) for kind in TOKENIZER_KINDS}
    made["wordpiece_cleanup"] = train_tokenizer_of_kind("wordpiece")
    made["wordpiece_cleanup"].clean_up_tokenization_spaces = True
    return made


@pytest.fixture(scope="module")
def random_lms(tokenizers: dict, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("kinds")
    return {kind: save_tiny_lm_of_kind(root / kind, kind, tokenizer=tokenizers[kind]) for kind in TOKENIZER_KINDS}


@pytest.fixture(scope="module")
def forced_lms(tokenizers: dict, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("forced")
    return {
        kind: save_tiny_lm_of_kind(
            root / kind, kind, "gpt2", tokenizer=tokenizers[kind], n_embd=FORCED_WIDTH, tie_word_embeddings=False
        )
        for kind in TOKENIZER_KINDS
    }


def _window(tokenizer):
    from nlue.lm.stops import DecodeWindow

    return DecodeWindow(tokenizer)


def _decode(tokenizer, tokens) -> str:
    return tokenizer.decode(list(tokens), skip_special_tokens=True)


def _first_hit(tokenizer, tokens, stops) -> int | None:
    """The fewest leading tokens whose full decoded text holds a stop: where a row must end."""
    return next((n for n in range(1, len(tokens) + 1) if any(s in _decode(tokenizer, tokens[:n]) for s in stops)), None)


def _tricky(tokenizer) -> list[int]:
    """Tokens that decode oddly: one character or byte, ``▁`` and ``##`` pieces, specials."""
    vocab = tokenizer.get_vocab()
    short = [i for t, i in vocab.items() if len(t.removeprefix("##").removeprefix("▁")) <= 1 or t.startswith("<0x")]
    return sorted(set(short) | set(tokenizer.all_special_ids))


def _byte_level_chars() -> dict[int, str]:
    """GPT-2's byte-to-character table, which byte-level BPE vocabularies are written in."""
    kept = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    moved = [b for b in range(256) if b not in kept]
    return {**{b: chr(b) for b in kept}, **{b: chr(256 + n) for n, b in enumerate(moved)}}


def _in_bytes(tokenizer, text: str) -> list[int]:
    """``text`` one token per UTF-8 byte where the vocabulary has byte tokens, else as the tokenizer encodes it."""
    vocab, data = tokenizer.get_vocab(), text.encode("utf-8")
    for names in ([f"<0x{b:02X}>" for b in data], [_byte_level_chars()[b] for b in data]):
        if all(name in vocab for name in names):
            return [vocab[name] for name in names]
    return tokenizer.encode(text, add_special_tokens=False)


# Texts the random sequences are made of, whole, in bytes or cut part-way: Devanagari, Urdu,
# Latin, a 4-byte character, WordPiece clean-up bait
TEXTS = ("क", "विषय", " कख", "\nविषय:", "।", "۔", "\nمضمون:", "\nSubject:", "a", "😀", "?", "'s", " .")


# -- why: transformers' own stop strings -------------------------------------------------------------


def test_the_devanagari_vocabulary_has_no_latin_letter(tokenizers: dict) -> None:
    vocab = tokenizers["devanagari"].get_vocab()
    assert not any(ch.isascii() and ch.isalpha() for token in vocab for ch in token)
    assert any(token.startswith("<0x") for token in tokenizers["sentencepiece_bpe_fallback"].get_vocab())


@pytest.mark.parametrize("kind", ["devanagari", "wordpiece"])
def test_transformers_stop_strings_cannot_read_these_vocabularies(tokenizers: dict, kind: str) -> None:
    """StopStringCriteria decodes each token after the probe "abcdef" and looks for the probe: it is not there."""
    from transformers import StopStringCriteria

    with pytest.raises(ValueError, match="substring not found"):
        StopStringCriteria(tokenizers[kind], list(NEPALI))


def test_so_a_devanagari_model_could_not_generate_with_stop_strings(random_lms: dict[str, Path]) -> None:
    from nlue.lm.local import LocalCausalLM

    lm = LocalCausalLM(random_lms["devanagari"], show_progress=False)
    ids = lm.tokenizer("नेपाल", return_tensors="pt")
    with pytest.raises(ValueError, match="substring not found"):
        lm.model.generate(**ids, max_new_tokens=2, stop_strings=list(NEPALI), tokenizer=lm.tokenizer)
    made = lm.generate([GenerationRequest(prompt="नेपाल", stop=NEPALI, max_new_tokens=4)])[0]
    assert made.completion_tokens and made.finish_reason in ("stop", "length")


# -- the window against full decoding -----------------------------------------------------------------


def _segments(tokenizer) -> st.SearchStrategy[list[int]]:
    text = st.sampled_from(TEXTS)
    cut = st.tuples(text, st.integers(0, 3), st.integers(1, 4)).map(lambda t: _in_bytes(tokenizer, t[0])[t[1] : t[2]])
    return st.one_of(
        st.integers(0, len(tokenizer) - 1).map(lambda i: [i]),
        st.sampled_from(_tricky(tokenizer)).map(lambda i: [i]),
        text.map(lambda t: tokenizer.encode(t, add_special_tokens=False)),
        text.map(lambda t: _in_bytes(tokenizer, t)),
        cut,
    )


@pytest.mark.parametrize("kind", [*TOKENIZER_KINDS, "wordpiece_cleanup"])
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_row_ends_exactly_where_its_full_text_first_holds_a_stop(tokenizers: dict, kind: str, data) -> None:
    from nlue.lm.stops import StopSequenceCriteria

    tokenizer = tokenizers[kind]
    segments = data.draw(st.lists(_segments(tokenizer), min_size=1, max_size=12), label="segments")
    tokens = [token for segment in segments for token in segment][:48] or [tokenizer.bos_token_id]
    full = _decode(tokenizer, tokens)
    ends = st.integers(1, len(full)) if full else st.just(0)
    pieces = st.tuples(ends, st.integers(1, 6)).map(lambda p: full[max(p[0] - p[1], 0) : p[0]])
    stop = st.one_of(st.sampled_from(STOPS), pieces.filter(bool)) if full else st.sampled_from(STOPS)
    stops = tuple(data.draw(st.lists(stop, min_size=1, max_size=3), label="stops"))

    criterion = StopSequenceCriteria(_window(tokenizer), stops, prompt_width=0)
    fired = [criterion.update([[token]])[0] for token in tokens]
    first = _first_hit(tokenizer, tokens, stops)
    assert criterion.stopped_at[0] == first
    assert fired == [first is not None and n >= first for n in range(1, len(tokens) + 1)]  # stopped stays stopped
    window, need = criterion.window, criterion.need
    if need is not None and first is not None:  # and the window alone, before any confirming decode, saw it
        assert any(s in _decode(tokenizer, tokens[window.start(tokens[:first], need) : first]) for s in stops)


@pytest.mark.parametrize("kind", TOKENIZER_KINDS)
def test_the_window_sees_every_new_stop_in_every_short_sequence_of_tricky_pieces(tokenizers: dict, kind: str) -> None:
    """Every sequence of up to 4 pieces: "क" in bytes, whole or cut; a 4-byte character; "क" as
    pieces, ``▁``, ``##``; "?" and "।"; BOS and UNK. Each stop a token brings must be in its window."""
    tokenizer = tokenizers[kind]
    window = _window(tokenizer)
    vocab = tokenizer.get_vocab()
    ka = _in_bytes(tokenizer, "क")
    pieces = {(*ka,), (*ka[:2],), (*ka[2:],), (*_in_bytes(tokenizer, "😀"),), (tokenizer.bos_token_id,)}
    pieces |= {(tokenizer.unk_token_id,)} | {(i,) for i in tokenizer.encode("क ?।", add_special_tokens=False)}
    pieces |= {(vocab[t],) for t in ("▁", "##क") if t in vocab}
    stops = ("क", "कक", " क", "।", "क।", "क?", "?", "😀क", "क😀", "😀")
    checked = 0

    def grow(tokens: tuple[int, ...], depth: int) -> None:
        nonlocal checked
        for piece in sorted(pieces):
            longer = tokens
            for token in piece:
                before, longer = _decode(tokenizer, longer), (*longer, token)
                text = _decode(tokenizer, longer)
                for stop in stops:
                    if stop in text and stop not in before:  # a stop this token brought: the window must see it
                        start = window.start(longer, len(stop.encode("utf-8")))
                        assert stop in _decode(tokenizer, longer[start:]), (longer, start, stop, text)
                        checked += 1
            if depth > 1:
                grow(longer, depth - 1)

    grow((), 4)
    assert checked > 100


def test_one_byte_can_bring_a_stop_from_the_start_of_its_run(tokenizers: dict) -> None:
    """Byte fallback decodes a run of bytes whole or not at all: completing "ख" brings in "विषय" 15 bytes back."""
    tokenizer = tokenizers["sentencepiece_bpe_fallback"]
    tokens = tokenizer.encode("नेपालको राजधानी", add_special_tokens=False) + _in_bytes(tokenizer, "विषयकख")
    assert "विषय" not in _decode(tokenizer, tokens[:-1]) and "विषय" in _decode(tokenizer, tokens)
    window = _window(tokenizer)
    assert "विषय" in _decode(tokenizer, tokens[window.start(tokens, len("विषय".encode())) :])
    assert window.start(tokens, 3) > 0  # and a stop of one letter still decodes a window, not the whole row


def test_a_tokenizer_that_cleans_the_whole_text_is_decoded_whole(tokenizers: dict) -> None:
    """transformers' clean-up turns " ' " into "'" across the text: a new token can take out the space before it."""
    tokenizer = tokenizers["wordpiece_cleanup"]
    tokens = tokenizer.encode("क ' s ' s", add_special_tokens=False)
    assert _decode(tokenizer, tokens[:-1]) == "क's '" and _decode(tokenizer, tokens) == "क's's"
    assert _decode(tokenizer, tokens[1:]) == "' s's"  # a window from the first apostrophe misses the new "'s'"
    assert not _window(tokenizer).windowed and _window(tokenizers["wordpiece"]).windowed
    assert _window(tokenizer).start(tokens, 3) == 0


def test_the_criterion_reads_only_generated_tokens_and_returns_one_flag_per_row(tokenizers: dict) -> None:
    import torch

    from nlue.lm.stops import StopSequenceCriteria

    tokenizer = tokenizers["sentencepiece_bpe"]
    prompt = tokenizer.encode("विषय", add_special_tokens=False)
    word = tokenizer.encode("क विषय", add_special_tokens=False)
    criterion = StopSequenceCriteria(_window(tokenizer), ("विषय",), prompt_width=len(prompt))
    rows = torch.tensor([prompt, prompt])
    for step, token in enumerate(word):
        rows = torch.cat([rows, torch.tensor([[token], [word[0]]])], dim=1)
        flags = criterion(rows, None)
        assert flags.dtype == torch.bool and flags.shape == (2,)
        assert flags.tolist() == [step == len(word) - 1, False]  # the stop in the prompt ends nothing
    rows = torch.cat([rows, torch.tensor([[word[0]], [word[0]]])], dim=1)
    assert criterion(rows, None).tolist() == [True, False] and criterion.stopped_at == [len(word), None]


def test_importing_the_module_loads_neither_torch_nor_transformers() -> None:
    code = "import sys, nlue.lm.stops; print(sorted({'torch', 'transformers'} & set(sys.modules)))"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout == "[]\n"


# -- generation on every kind -------------------------------------------------------------------------


@pytest.mark.parametrize("kind", TOKENIZER_KINDS)
def test_generation_with_stops_works_on_every_kind(random_lms: dict[str, Path], kind: str) -> None:
    from nlue.lm.local import LocalCausalLM

    lm = LocalCausalLM(random_lms[kind], batch_size=3, show_progress=False)
    prompts = ["प्रश्न: नेपालको राजधानी कहाँ हो?\nउत्तर:", "سوال: پاکستان کا دارالحکومت؟\nجواب:", "Question: capital?"]
    free = lm.generate([GenerationRequest(prompt=p, max_new_tokens=24) for p in prompts])
    for stops in (NEPALI, URDU, ENGLISH, NEPALI + URDU + ENGLISH):
        made = lm.generate([GenerationRequest(prompt=p, stop=stops, max_new_tokens=24) for p in prompts])
        for whole, cut in zip(free, made, strict=True):
            assert not any(s in cut.text for s in stops)
            assert cut.text == cut_at_stop(whole.text, stops)[0]
            hit = any(s in whole.text for s in stops)
            assert cut.finish_reason == ("stop" if hit else whole.finish_reason)
            assert cut.completion_tokens <= whole.completion_tokens if hit else cut == whole
    for whole in free:  # a stop the model does write: a piece of its own free text
        if len(whole.text.strip()) < 6:
            continue
        stop = whole.text[len(whole.text) // 2 :][:2]
        cut = lm.generate([GenerationRequest(prompt=prompts[free.index(whole)], stop=(stop,), max_new_tokens=24)])[0]
        assert cut.text == whole.text[: whole.text.index(stop)] and cut.finish_reason == "stop"
        assert cut.completion_tokens <= whole.completion_tokens


def _force(lm, prompt: str, script: list[int], filler: int) -> None:
    """Set a GPT-2's weights so that greedy decoding after ``prompt`` writes ``script``, then ``filler`` for ever.

    Blocks add nothing (zero output projections), tokens embed to zero and position p to a
    one-hot direction, so the output layer reads the position alone: its row for the token
    due at p + 1 points along p. Left-padded rows keep their positions, so every prompt
    continues the same script from its own length.
    """
    import torch

    model, start = lm.model, len(lm.tokenizer.encode(prompt))
    assert start + len(script) < FORCED_WIDTH
    with torch.no_grad():
        model.transformer.wte.weight.zero_()
        model.transformer.wpe.weight.zero_()
        model.lm_head.weight.zero_()
        for block in model.transformer.h:
            for layer in (block.attn.c_proj, block.mlp.c_proj):
                layer.weight.zero_()
                layer.bias.zero_()
        for position in range(FORCED_WIDTH):
            model.transformer.wpe.weight[position, position] = 10.0
            due = position + 1 - start
            model.lm_head.weight[script[due] if 0 <= due < len(script) else filler, position] = 10.0


def _script(tokenizer, stop: str, by_bytes: bool = False) -> list[int]:
    """Tokens for "क ख<stop> ग घ"; ``by_bytes``: the stop spelled in ``<0x..>`` byte tokens."""
    head, tail = tokenizer.encode("क ख", add_special_tokens=False), tokenizer.encode(" ग घ", add_special_tokens=False)
    if by_bytes:
        return head + tokenizer.convert_tokens_to_ids([f"<0x{b:02X}>" for b in stop.encode("utf-8")]) + tail
    return tokenizer.encode(f"क ख{stop} ग घ", add_special_tokens=False)


@pytest.mark.parametrize("kind", TOKENIZER_KINDS)
def test_a_stop_the_model_must_write_ends_the_row_on_every_kind(forced_lms: dict[str, Path], kind: str) -> None:
    from nlue.lm.local import LocalCausalLM

    lm = LocalCausalLM(forced_lms[kind], show_progress=False)
    tokenizer, cap, prompt = lm.tokenizer, 40, "नेपाल"
    filler = tokenizer.encode("क", add_special_tokens=False)[-1]
    cases = [(stop, _script(tokenizer, stop)) for stop in STOPS]
    if kind == "sentencepiece_bpe_fallback":
        cases += [(stop, _script(tokenizer, stop, by_bytes=True)) for stop in (*NEPALI, *URDU)]
    unreachable = set()
    for stop, script in cases:
        _force(lm, prompt, script, filler)
        whole = lm.generate([GenerationRequest(prompt=prompt, max_new_tokens=cap)])[0]
        made = lm.generate([GenerationRequest(prompt=prompt, stop=(stop, *ENGLISH), max_new_tokens=cap)])[0]
        hit = _first_hit(tokenizer, script, (stop, *ENGLISH))
        if hit is None:  # this kind cannot spell it: nothing to stop at, and nothing goes wrong
            unreachable.add(stop)
            assert made == whole and whole.finish_reason == "length" and stop not in whole.text
            continue
        assert stop in whole.text and whole.completion_tokens == cap  # the model does write it ...
        assert made.finish_reason == "stop" and made.completion_tokens == hit < cap  # ... and the row ends there
        assert made.text == cut_at_stop(_decode(tokenizer, script[:hit]), (stop,))[0]
        assert stop not in made.text and whole.text.startswith(made.text)
    assert unreachable == UNREACHABLE.get(kind, set())


def test_one_row_stops_while_the_next_runs_to_the_cap(forced_lms: dict[str, Path]) -> None:
    from nlue.lm.local import LocalCausalLM

    lm = LocalCausalLM(forced_lms["sentencepiece_bpe_fallback"], batch_size=4, show_progress=False)
    tokenizer = lm.tokenizer
    script = _script(tokenizer, URDU[0], by_bytes=True)
    _force(lm, "क", script, tokenizer.encode("क", add_special_tokens=False)[-1])
    late = "क " * 8  # starts writing inside the stop, so never writes it whole
    requests = [GenerationRequest(prompt=p, stop=URDU, max_new_tokens=30) for p in ("क", late, "क ख")]
    batched = lm.generate(requests)
    assert batched == [lm.generate([r])[0] for r in requests]
    assert [g.finish_reason for g in batched] == ["stop", "length", "stop"]
    assert batched[0].completion_tokens == _first_hit(tokenizer, script, URDU) and batched[1].completion_tokens == 30


@pytest.mark.parametrize("pad_as", ["eos", "unk"])
def test_the_token_count_holds_when_pad_is_eos_or_unk(forced_lms: dict[str, Path], pad_as: str) -> None:
    """A row is cut where its stop was seen, not at the first pad id: pad may be a token the model writes.

    The second prompt is a token ahead in the script, so its row stops a step before the first
    one's and gets a pad (here EOS) meanwhile; the first row writes UNK before its stop; the
    third starts past the stop and ends on the filler, EOS.
    """
    from nlue.lm.local import LocalCausalLM

    lm = LocalCausalLM(forced_lms["byte_level"], batch_size=3, show_progress=False)
    tokenizer = lm.tokenizer
    tokenizer.pad_token = getattr(tokenizer, f"{pad_as}_token")
    head = tokenizer.encode("क ख", add_special_tokens=False)
    script = [*head, tokenizer.unk_token_id, *tokenizer.encode(" ग\nविषय: घ", add_special_tokens=False)]
    _force(lm, "क", script, tokenizer.eos_token_id)
    prompts = ("क", "क ख", "क ख ग घ ङ च छ ज")
    made = lm.generate([GenerationRequest(prompt=p, stop=NEPALI, max_new_tokens=30) for p in prompts])
    hits = []
    for prompt, got in zip(prompts, made, strict=True):
        rest = script[len(tokenizer.encode(prompt)) - len(tokenizer.encode("क")) :]
        hits.append(_first_hit(tokenizer, rest, NEPALI))
        assert got.completion_tokens == (hits[-1] or len(rest) + 1)  # a stop, or the script and its EOS
        assert got.text == cut_at_stop(_decode(tokenizer, rest[: hits[-1]]), NEPALI)[0]  # past the UNK written
        assert got.finish_reason == "stop"
    assert hits[0] == hits[1] + 1 and hits[2] is None


# -- the command line ---------------------------------------------------------------------------------


def test_nlue_llm_mcq_runs_a_model_with_no_latin_letter(
    exam_build, random_lms: dict[str, Path], tmp_path: Path
) -> None:
    from nlue.cli import main

    results = tmp_path / "results"
    argv = ["llm", "mcq", "--model", str(random_lms["devanagari"]), "--dataset", str(exam_build.repo_dir),
            "--task", "mcq_ne", "--prompt-language", "native", "--limit", "4", "--max-new-tokens", "8",
            "--bootstrap-resamples", "20", "--results-dir", str(results), "--device", "cpu", "--no-chart", "-q"]  # fmt: skip
    assert main(argv) == 0
    saved = json.loads((results / "devanagari__ne-0shot-limit4" / "mcq_ne.json").read_text(encoding="utf-8"))
    assert saved["hyperparameters"]["max_new_tokens"] == 8 and "accuracy_all_items" in saved["metrics"]
    raw = (results / "devanagari__ne-0shot-limit4" / "mcq_ne" / "raw_outputs.jsonl").read_text(encoding="utf-8")
    rows = [json.loads(line) for line in raw.splitlines()]
    assert len(rows) == 4 and all(r["verdict"] in ("correct", "wrong", "invalid") for r in rows)
