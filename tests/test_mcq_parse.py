"""The answer parsers: every invalid category, strict vs lenient, scores named apart, and two properties.

Properties (hypothesis): a parser never raises, whatever the output; and it never credits a
key the output did not commit to: the strict parser never credits a key without the exact
line ``Answer key: <key>``, the lenient one never credits a key whose letter and option text
are both absent from the output.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nlue.evals.mcq.parse import (
    API_ERROR,
    EMPTY,
    INVALID_CATEGORIES,
    KEY_NOT_IN_A_TO_D,
    KEY_TEXT_DISAGREE,
    MALFORMED,
    NO_KEY_LINE,
    REFUSAL_OR_ECHO,
    TEXT_MATCHES_NO_OPTION,
    parse_item_output,
    parse_lenient,
    parse_strict,
    strip_thinking,
)
from nlue.evals.mcq.prompts import render, show_prompt, system_prompt, user_prompt
from nlue.evals.mcq.score import score_answers

OPTIONS = {"A": "पोखरा", "B": "काठमाडौँ", "C": "विराटनगर", "D": "धनगढी"}
QUESTION = "नेपालको राजधानी कुन हो?"
ITEM = {"id": "q1", "question": QUESTION, **OPTIONS, "correct_key": 1, "domain": "Social Sciences",
        "subdomain": "social studies", "level": "Grade 8", "language": "ne"}  # fmt: skip


def strict(output: str | None, **kwargs) -> str | None:
    return parse_strict(output, OPTIONS, question=QUESTION, **kwargs).category


@pytest.mark.parametrize(
    "output",
    [
        "Answer key: B\nAnswer text: काठमाडौँ",
        "  Answer key: B  \n\n  Answer text: काठमाडौँ  \n",
        "- Answer key: B\n- Answer text: काठमाडौँ",
        "• Answer key: B\n• Answer text: काठमाडौँ",
        "Answer key:B\nAnswer text:काठमाडौँ",
        "<think>A or B? The capital is B.</think>\nAnswer key: B\nAnswer text: काठमाडौँ",
        "the template opened the trace</think>Answer key: B\nAnswer text: काठमाडौँ",
        "Answer key: B\nAnswer text: का\u200bठमाडौँ",  # equal after normalisation
    ],
)
def test_valid_outputs(output: str) -> None:
    result = parse_strict(output, OPTIONS)
    assert result.valid and result.key == "B" and result.prediction == 1 and result.category is None


@pytest.mark.parametrize(
    ("output", "category"),
    [
        ("", EMPTY),
        (None, EMPTY),
        ("  \n ", EMPTY),
        ("___", EMPTY),
        ("<think>Let me think about the capital...", EMPTY),  # a trace cut off before any answer
        ("Question: Question: Question:", REFUSAL_OR_ECHO),  # repetition collapse
        (user_prompt(ITEM, "ne"), REFUSAL_OR_ECHO),  # prompt echo
        (system_prompt("en"), REFUSAL_OR_ECHO),  # system-prompt echo
        (f"{QUESTION}\nकाठमाडौँ", REFUSAL_OR_ECHO),  # the question repeated
        ("Sorry, your question is not clear. Could you clarify?", REFUSAL_OR_ECHO),
        ("माफ गर्नुहोस्, प्रश्न स्पष्ट छैन।", REFUSAL_OR_ECHO),
        ("معذرت، آپ کا سوال واضح نہیں", REFUSAL_OR_ECHO),
        ("The answer is B", NO_KEY_LINE),
        ("B) काठमाडौँ", NO_KEY_LINE),
        ("**Answer key:** B\n**Answer text:** काठमाडौँ", NO_KEY_LINE),  # markdown is not the format
        ("Answer key: b\nAnswer text: काठमाडौँ", KEY_NOT_IN_A_TO_D),
        ("Answer key: B)\nAnswer text: काठमाडौँ", KEY_NOT_IN_A_TO_D),
        ("Answer key: E\nAnswer text: काठमाडौँ", KEY_NOT_IN_A_TO_D),
        ("Answer key: \nAnswer text: काठमाडौँ", KEY_NOT_IN_A_TO_D),
        ("Answer key: B", MALFORMED),
        ("Answer text: काठमाडौँ\nAnswer key: B", MALFORMED),
        ("Answer key: B\nAnswer text: काठमाडौँ\nBecause it is the capital.", MALFORMED),
        ("Answer key: A\nAnswer text: पोखरा\nAnswer key: B\nAnswer text: काठमाडौँ", MALFORMED),
        ("Answer key: B\nAnswer text: काठमाडौँ शहर", TEXT_MATCHES_NO_OPTION),
        ("Answer key: B\nAnswer text: काठमाडौँ।", TEXT_MATCHES_NO_OPTION),
        ("Answer key: B\nAnswer text:", TEXT_MATCHES_NO_OPTION),
        ("Answer key: A\nAnswer text: काठमाडौँ", KEY_TEXT_DISAGREE),
    ],
)
def test_each_invalid_output_is_counted_in_its_category(output: str | None, category: str) -> None:
    result = parse_strict(output, OPTIONS, question=QUESTION)
    assert result.category == category and not result.valid and result.prediction == -1


def test_api_errors_are_invalid_by_definition() -> None:
    assert strict("Answer key: B\nAnswer text: काठमाडौँ", error="HTTP 500 after 5 retries") == API_ERROR
    assert parse_lenient(None, OPTIONS, error="timeout").category == API_ERROR
    assert set(INVALID_CATEGORIES) == {
        API_ERROR, EMPTY, REFUSAL_OR_ECHO, NO_KEY_LINE, KEY_NOT_IN_A_TO_D, MALFORMED, TEXT_MATCHES_NO_OPTION,
        KEY_TEXT_DISAGREE,
    }  # fmt: skip


def test_urdu_answers_compare_after_folding_look_alikes() -> None:
    options = {"A": "کراچی", "B": "اسلام آباد", "C": "لاہور", "D": "پشاور"}
    arabic = "Answer key: A\nAnswer text: \u200fكراچي"  # Arabic kaf and yeh, a right-to-left mark
    assert parse_strict(arabic, options, language="ur").valid
    assert not parse_strict(arabic, options, language="ne").valid  # only the Urdu normalisation folds


def test_thinking_traces_are_removed() -> None:
    assert strip_thinking("<think>x</think>a<THINK>y</THINK>b") == "ab"
    assert strip_thinking("a<think>unfinished") == "a"
    assert strip_thinking("trace</think>answer") == "answer"


@pytest.mark.parametrize(
    ("output", "key", "category"),
    [
        ("**Answer key:** B\n**Answer text:** काठमाडौँ", "B", None),
        ("answer key: b\nanswer text: काठमाडौँ", "B", None),
        ("Answer: (B)", "B", None),
        ("Answer: B) काठमाडौँ", "B", None),
        ("उत्तर: B", "B", None),
        ("B", "B", None),
        ("b)", "B", None),
        ("काठमाडौँ।", "B", None),
        ("Answer key: B\nAnswer text: काठमाडौँ शहर", "B", None),  # the key is the commitment
        ("Answer key: A\nAnswer text: काठमाडौँ", "A", KEY_TEXT_DISAGREE),
        ("Answer key: A\nAnswer key: B", None, MALFORMED),
        ("A good question, but I do not know.", None, NO_KEY_LINE),
        ("Answer: A good question", None, NO_KEY_LINE),
    ],
)
def test_the_lenient_parser(output: str, key: str | None, category: str | None) -> None:
    result = parse_lenient(output, OPTIONS)
    assert (result.key if result.valid else None, result.category) == (key if category is None else None, category)


def _items(n: int) -> list[dict]:
    domains = ["STEM", "Humanities"]
    return [{**ITEM, "id": f"q{i}", "domain": domains[i % 2], "correct_key": i % 4} for i in range(n)]


def test_scores_name_both_accuracies_and_keep_the_lenient_parse_apart() -> None:
    items = _items(8)
    outputs = [f"Answer key: {'ABCD'[i % 4]}\nAnswer text: {OPTIONS['ABCD'[i % 4]]}" for i in range(5)]
    outputs += ["Answer key: A\nAnswer text: पोखरा", "B", ""]  # wrong, lenient-only, empty
    strict_results = [parse_item_output(o, item, "ne") for o, item in zip(outputs, items, strict=True)]
    lenient_results = [parse_item_output(o, item, "ne", lenient=True) for o, item in zip(outputs, items, strict=True)]
    scores = score_answers(items, strict_results, lenient_results, bootstrap_resamples=100)
    assert scores["accuracy_all_items"] == pytest.approx(5 / 8)
    assert scores["accuracy_parseable"] == pytest.approx(5 / 6)
    assert scores["invalid_rate"] == pytest.approx(2 / 8) and scores["invalid_percent"] == "25.0"
    assert scores["invalid_counts"][NO_KEY_LINE] == 1 and scores["invalid_counts"][EMPTY] == 1
    assert "accuracy_all_items_ci_low" in scores
    assert scores["by"]["domain"]["STEM"]["n_items"] == 4
    lenient = scores["lenient"]
    assert lenient["accuracy_all_items"] == pytest.approx(5 / 8)  # "B" for an item whose key is C
    assert lenient["invalid_rate"] == pytest.approx(1 / 8) and "strict" in lenient["note"]
    with pytest.raises(ValueError, match="one answer per item"):
        score_answers(items, strict_results[:3])


def test_show_prompt_labels_roles() -> None:
    shown = show_prompt(render(ITEM, "en"))
    assert shown.startswith("[system]\n") and "\n\n[user]\nSubject: " in shown


# ---------------------------------------------------------------- properties
FRAGMENTS = st.sampled_from(
    [
        "Answer key: A", "Answer key: C", "Answer key: D", "Answer key: b", "Answer key: B)", "Answer key:",
        "Answer text: पोखरा", "Answer text: काठमाडौँ", "Answer text: विराटनगर", "Answer text:", "- ", "• ",
        "<think>", "</think>", "Answer key: B is wrong", "B", "(B)", "Question:", "काठमाडौँ", "answer: B",
        "\n", " ", "**", "Answer: A", "The answer is B.",
    ]
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.none(), st.text(max_size=200)), st.booleans())
def test_parsers_never_raise(output: str | None, lenient: bool) -> None:
    result = (parse_lenient if lenient else parse_strict)(output, OPTIONS, question=QUESTION)
    assert result.valid == (result.category is None)
    assert result.category is None or result.category in INVALID_CATEGORIES
    assert result.prediction in (-1, 0, 1, 2, 3)


@settings(max_examples=400, deadline=None)
@given(st.lists(FRAGMENTS, max_size=8).map("".join))
def test_strict_never_credits_a_key_without_its_key_line(output: str) -> None:
    result = parse_strict(output, OPTIONS, question=QUESTION)
    if result.valid:
        lines = [line.strip() for line in strip_thinking(output).splitlines() if line.strip()]
        assert any(line.lstrip("-• ").replace(" ", "") == f"Answerkey:{result.key}" for line in lines)
        assert OPTIONS[result.key] in output  # and its text was written too


@settings(max_examples=400, deadline=None)
@given(st.lists(FRAGMENTS, max_size=8).map("".join), st.text(alphabet="xyzाि \n:-", max_size=20))
def test_no_parser_credits_the_gold_when_the_output_never_names_it(fragments: str, noise: str) -> None:
    gold = "B"  # OPTIONS["B"] is काठमाडौँ: an output without "B", "b" and that text names neither
    output = (fragments + noise).replace("B", "").replace("b", "").replace(OPTIONS[gold], "")
    for parse in (parse_strict, parse_lenient):
        assert parse(output, OPTIONS, question=QUESTION).prediction != 1


def test_an_echo_of_a_user_exams_own_prompt_lines(tmp_path) -> None:
    """Issue 30, item 2 (leftover 1): the strict parser knows an echo of the prompt a user's exam declares (Sinhala,
    a language nlue ships no prompt words for), as it knows the shipped languages' (given the task)."""
    from nlue.registry.task_file.load import load_task_file
    from tests.user_task_files import write_si_exam

    task = load_task_file(write_si_exam(tmp_path))
    item = {"id": "s1", "question": "7 + 5 කීයද?", "A": "12", "B": "10", "C": "13", "D": "11", "language": "si"}
    echoed = "විෂය: STEM – mathematics\nමට්ටම: Grade 9\nමම හිතන්නේ මෙය ලේසියි"  # the first lines again, then prose
    assert parse_item_output(echoed, item, "si", task=task).category == REFUSAL_OR_ECHO
    assert parse_item_output(echoed, item, "si", lenient=True, task=task).category == REFUSAL_OR_ECHO
    assert parse_item_output(echoed, item, "si").category == NO_KEY_LINE  # without the task: not known as an echo
    opening = "පහත ප්‍රශ්නයට නිවැරදි පිළිතුර තෝරන්න.\nAnswer key: A"  # the system prompt repeated
    assert parse_item_output(opening, item, "si", task=task).category == REFUSAL_OR_ECHO
    valid = parse_item_output("Answer key: A\nAnswer text: 12", item, "si", task=task)
    assert valid.valid and valid.key == "A"
