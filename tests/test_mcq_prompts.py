"""Exam prompts: the paper's layout and answer lines exactly, chat vs plain text, seeded k-shot demonstrations."""

from __future__ import annotations

import jinja2
import pytest

from nlue.data.sample import sample_split
from nlue.evals.mcq.prompts import (
    answer_lines,
    draw_demonstrations,
    item_body,
    render,
    show_prompt,
    system_prompt,
    user_prompt,
)
from nlue.registry.tasks import get_task

ITEM = {
    "id": "t1",
    "question": "नेपालको राजधानी कुन हो?",
    "A": "पोखरा",
    "B": "काठमाडौँ",
    "C": "विराटनगर",
    "D": "धनगढी",
    "correct_key": 1,  # a built row: the ClassLabel id
    "domain": "Social Sciences",
    "subdomain": "social studies",
    "level": "Grade 8",
    "language": "ne",
}
POOL = sample_split(get_task("mcq_ne"), "demo")


def test_the_user_prompt_is_the_papers_layout_exactly() -> None:
    assert user_prompt(ITEM, "en") == (
        "Subject: Social Sciences – social studies\n"  # an EN DASH between domain and subdomain
        "Level: Grade 8\n"
        "Question: नेपालको राजधानी कुन हो?\n"
        "A) पोखरा\nB) काठमाडौँ\nC) विराटनगर\nD) धनगढी\n"
        "Answer key:\nAnswer text:"
    )
    assert user_prompt(ITEM, "ne").startswith("विषय: Social Sciences – social studies\nतह: Grade 8\nप्रश्न: ")
    urdu = user_prompt(ITEM, "ur")
    assert urdu.startswith("مضمون: Social Sciences – social studies\nسطح: Grade 8\nسوال: ")
    for language in ("en", "ne", "ur"):  # the answer lines stay in English in every language
        assert user_prompt(ITEM, language).endswith("\nD) धनगढी\nAnswer key:\nAnswer text:")


def test_system_prompts_end_with_the_two_line_format() -> None:
    assert system_prompt("en").endswith(
        "\n\nAnswer key: <one of A, B, C, D>\n"
        "Answer text: <verbatim text of the chosen option, copied character-for-character>"
    )
    assert system_prompt("ur").endswith(
        "\n\n- Answer key: <A, B, C یا D میں سے ایک>\n- Answer text: <منتخب آپشن کا متن من و عن، حرف بہ حرف نقل کریں>"
    )
    assert system_prompt("ne").endswith(
        "\n\nAnswer key: <A, B, C वा D मध्ये एउटा>\nAnswer text: <छानिएको विकल्पको पाठ, अक्षरशः जस्ताको तस्तै>"
    )
    with pytest.raises(ValueError, match="expected one of: en, ne, ur"):
        system_prompt("hi")


def test_an_item_from_a_source_renders_like_a_built_row() -> None:
    source = {**{k: v for k, v in ITEM.items() if k not in "ABCD"}, "options": {k: ITEM[k] for k in "ABCD"}}
    assert user_prompt(source, "ne") == user_prompt(ITEM, "ne")
    assert answer_lines({**source, "correct_key": "B"}) == "Answer key: B\nAnswer text: काठमाडौँ"


def test_zero_shot_chat_holds_no_answer() -> None:
    messages = render(ITEM, "en", chat=True)
    assert [m["role"] for m in messages] == ["system", "user"]
    assert messages[1]["content"] == user_prompt(ITEM, "en")
    assert "Answer key: B" not in show_prompt(messages)  # the gold never enters a prompt


@pytest.mark.parametrize("shots", [1, 3, 5])
def test_k_shot_chat_alternates_demonstrations_and_their_answers(shots: int) -> None:
    messages = render(ITEM, "ne", shots=shots, pool=POOL, chat=True)
    assert [m["role"] for m in messages] == ["system", *["user", "assistant"] * shots, "user"]
    demos = draw_demonstrations(ITEM, POOL, shots)
    for position, demo in enumerate(demos):
        assert messages[1 + 2 * position]["content"] == user_prompt(demo, "ne")
        letter = demo["correct_key"]
        assert messages[2 + 2 * position]["content"] == f"Answer key: {letter}\nAnswer text: {demo['options'][letter]}"


def test_demonstrations_are_seeded_per_item_and_never_the_item() -> None:
    first = draw_demonstrations(ITEM, POOL, 5)
    assert first == draw_demonstrations(ITEM, POOL, 5)  # seed 42, the item's id: reproducible
    assert first == draw_demonstrations(ITEM, list(POOL), 5, seed=42)
    assert len({d["id"] for d in first}) == 5
    other_seed = [draw_demonstrations(ITEM, POOL, 5, seed=s) for s in range(5)]
    assert any(draws != first for draws in other_seed)
    in_pool = POOL[0]
    for shots in (1, 3, 5):
        assert in_pool["id"] not in {d["id"] for d in draw_demonstrations(in_pool, POOL, shots)}
    with pytest.raises(ValueError, match="the pool offers"):
        draw_demonstrations(ITEM, POOL[:2], 3)


def test_plain_text_for_base_models_ends_where_the_model_writes_its_answer() -> None:
    text = render(ITEM, "en", shots=1, pool=POOL, chat=False)
    demo = draw_demonstrations(ITEM, POOL, 1)[0]
    assert text == (
        system_prompt("en") + "\n\n" + item_body(demo, "en") + "\n" + answer_lines(demo) + "\n\n"
        + item_body(ITEM, "en") + "\n"
    )  # fmt: skip
    assert show_prompt(text) == text
    assert text.count("Answer key:") == 2  # the format line of the system prompt and the demonstration's answer


def test_log_likelihood_template_renders_the_same_lines() -> None:
    task = get_task("mcq_ne")
    template, choices = task.kind.llm_template(task, "ne")
    assert choices == ("A", "B", "C", "D")
    rendered = jinja2.Template(template).render(**ITEM)
    assert rendered == system_prompt("ne") + "\n\n" + item_body(ITEM, "ne") + "\nAnswer key:"
    with pytest.raises(ValueError, match="has no 'ur' prompt"):
        task.kind.llm_template(task, "ur")
