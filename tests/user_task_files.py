"""Four tasks nlue does not ship, laid out as a user lays them out for the commands (build, train, llm, export,
sweep): a task file beside its data files. (tests/user_tasks.py holds the tasks the readers' tests score.)

* ``ur_sentiment``: Urdu three-class review sentiment (the rows and file of tests/test_task_file.py),
  English and Urdu prompts, the Urdu one with an answer line of its own;
* ``ne_topic``: Nepali news headlines in five topics, train from a TSV whose topic column holds Nepali
  words (one row mapped to ``drop``), test from JSON lines whose topics are numbers: each split with
  its own column and label maps; English and Nepali prompts, no answer line (the shipped one serves);
* ``ne_idioms``: an idiomaticity task with prompts of its own (not neDIOM's), on neDIOM's sample items;
* ``si_exam``: a small Sinhala arithmetic exam (multiple choice, ``demo`` and ``test``), prompted in English or
  in Sinhala (``--prompt-language native``), a language nlue ships no prompt words for.

Every sentence is ours, written for these tests.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

from tests.test_task_file import URDU_ROWS, URDU_TASK

TOPICS = ("politics", "sports", "economy", "weather", "education")
NEPALI_TOPICS = ("राजनीति", "खेलकुद", "अर्थ", "मौसम", "शिक्षा")  # the words the TSV's section column holds
HEADLINES = {  # six headlines per topic: the first four train, the last two test
    "politics": [
        "प्रधानमन्त्रीले आज मन्त्रिपरिषद्को बैठक बोलाउनुभयो।", "संसदमा नयाँ विधेयकमाथि छलफल सुरु भयो।",
        "स्थानीय निर्वाचनको मिति घोषणा गरियो।", "दुई दलबीच गठबन्धन बनाउने सहमति भयो।",
        "गृहमन्त्रीले सुरक्षा निकायलाई निर्देशन दिनुभयो।", "प्रदेश सभाको बैठक भोलिसम्म स्थगित भयो।",
    ],
    "sports": [
        "नेपाली फुटबल टोलीले मैत्रीपूर्ण खेलमा जित हात पार्‍यो।", "क्रिकेट प्रतियोगिताको फाइनल शनिबार हुँदैछ।",
        "राष्ट्रिय खेलकुदमा तेक्वान्दोतर्फ तीन स्वर्ण पदक आए।", "म्याराथन दौडमा सयौँ धावक सहभागी भए।",
        "भलिबल टोलीको प्रशिक्षण शिविर पोखरामा सुरु भयो।", "रङ्गशालामा दर्शकले खेलाडीलाई हौसला दिए।",
    ],
    "economy": [
        "केन्द्रीय बैंकले ब्याजदर घटाउने निर्णय गर्‍यो।", "पर्यटक बढेकाले होटल व्यवसाय फस्टायो।",
        "पेट्रोलको मूल्य प्रतिलिटर पाँच रुपैयाँ बढ्यो।", "सेयर बजार आज दुई प्रतिशतले घट्यो।",
        "निर्यात बढेपछि व्यापार घाटा केही कम भयो।", "विप्रेषण आप्रवाह गत महिनाभन्दा बढी भयो।",
    ],
    "weather": [
        "आज राति पहाडी भागमा भारी वर्षा हुने सम्भावना छ।", "हिमाली जिल्लामा हिमपात भएपछि बाटो बन्द भयो।",
        "तराईमा शीतलहरले जनजीवन प्रभावित भयो।", "भोलिदेखि मनसुन भित्रिने पूर्वानुमान गरिएको छ।",
        "काठमाडौँमा आज दिउँसो हल्का हावाहुरी चल्यो।", "लामो खडेरीले किसान चिन्तित छन्।",
    ],
    "education": [
        "माध्यमिक शिक्षा परीक्षाको नतिजा प्रकाशित भयो।", "विश्वविद्यालयले नयाँ सत्रको भर्ना खुला गर्‍यो।",
        "सामुदायिक विद्यालयमा निःशुल्क दिवा खाजा सुरु भयो।", "शिक्षकहरूले तालिमका लागि आवेदन दिए।",
        "गाउँमा नयाँ पुस्तकालय खुल्यो।", "छात्रवृत्तिका लागि आवेदन दिने अन्तिम दिन भोलि हो।",
    ],
}  # fmt: skip
DROPPED = ("आज मेरो जन्मदिन हो।", "अन्य")  # a row of another section, which the label map drops
NE_TOPIC_TASK = """\
name: ne_topic
title: Nepali news topics
description: Tell which of five topics a short Nepali news headline is about.
languages: [ne]
kind: classification
category: single sentence
inputs:
  fields: [text]
label_field: label
labels: [politics, sports, economy, weather, education]
prompts:
  en:
    instruction: Which topic is this news headline about?
    field_labels: {text: Headline}
    answer_cue: "Answer:"
    label_words: [politics, sports, economy, weather, education]
  ne:
    instruction: यो समाचार शीर्षक कुन विषयको हो?
    field_labels: {text: शीर्षक}
    answer_cue: "उत्तर:"
    label_words: [राजनीति, खेलकुद, अर्थतन्त्र, मौसम, शिक्षा]
data:
  train:
    path: data/news.tsv
    columns: {text: headline, label: section}
    labels: {राजनीति: politics, खेलकुद: sports, अर्थ: economy, मौसम: weather, शिक्षा: education, अन्य: drop}
  test:
    path: data/news_test.jsonl
    columns: {text: title, label: topic_id}
    labels: {"0": politics, "1": sports, "2": economy, "3": weather, "4": education}
license: cc-by-sa-4.0
citation: |-
  @misc{ne_topic_tests,
    title = {Nepali news topics written for the nlue tests},
    year  = {2026}
  }
domains: [news headlines]
sources: [written by the nlue developers for the tests]
"""
SI_EXAM = [  # (question, options A-D, key): "how much is ...?"
    ("7 + 5 කීයද?", ("12", "10", "13", "11"), "A"),
    ("9 - 4 කීයද?", ("3", "5", "6", "4"), "B"),
    ("6 × 3 කීයද?", ("21", "15", "18", "16"), "C"),
    ("20 ÷ 4 කීයද?", ("4", "6", "8", "5"), "D"),
    ("2 + 2 කීයද?", ("4", "3", "5", "6"), "A"),
    ("10 - 3 කීයද?", ("6", "7", "8", "5"), "B"),
    ("3 × 3 කීයද?", ("6", "12", "9", "8"), "C"),
]
SI_EXAM_TASK = """\
name: si_exam
title: A Sinhala arithmetic exam
description: Answer a Sinhala arithmetic question by choosing one of four options (A-D).
languages: [si]
kind: multiple_choice
label_field: correct_key
exam:
  subjects: {STEM: [mathematics]}
  levels: [Grade 9]
prompts:
  en:
    instruction: Choose the one correct option.
    field_labels: {subject: Subject, level: Level, question: Question}
    answer_cue: "Answer key:"
    label_words: [A, B, C, D]
  si:
    instruction: පහත ප්‍රශ්නයට නිවැරදි පිළිතුර තෝරන්න.
    field_labels: {subject: විෂය, level: මට්ටම, question: ප්‍රශ්නය}
    answer_cue: "Answer key:"
    label_words: [A, B, C, D]
data:
  demo: {path: exam/demo.jsonl}
  test: {path: exam/test.jsonl}
license: cc0-1.0
"""

NE_IDIOMS_TASK = """\
name: ne_idioms
title: Nepali idioms, figurative or plain
description: Tell whether an idiom in a Nepali passage carries its figurative or its plain word meaning.
languages: [ne]
kind: idiomaticity
category: idiomaticity
label_field: label
prompts:
  en:
    instruction: Does the idiom in this passage carry its figurative meaning or its plain word meaning?
    instruction_without_idiom: Does the phrase in this passage carry a figurative meaning or its plain word meaning?
    field_labels: {idiom: Phrase, context: Passage}
    answer_cue: "Meaning:"
    label_words: [figurative, plain]
    answer_line: {template: "Write only one word, either {words}.", separator: " or "}
  ne:
    instruction: यस अनुच्छेदमा टुक्काको अर्थ घुमाउरो हो कि सोझो?
    instruction_without_idiom: यस अनुच्छेदमा पदावलीको अर्थ घुमाउरो हो कि सोझो?
    field_labels: {idiom: पदावली, context: अनुच्छेद}
    answer_cue: "अर्थ:"
    label_words: [घुमाउरो, सोझो]
data:
  train: {path: idioms/train.jsonl}
  test: {path: idioms/test.jsonl}
license: cc0-1.0
"""


def write_ur_sentiment(folder: Path) -> Path:
    (folder / "data").mkdir(parents=True, exist_ok=True)
    for name, rows in (("train", URDU_ROWS[:9]), ("test", URDU_ROWS[9:])):
        with open(folder / "data" / f"{name}.csv", "w", encoding="utf-8", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(["review", "sentiment"])
            writer.writerows(rows)
    path = folder / "ur_sentiment.yaml"
    path.write_text(URDU_TASK, encoding="utf-8")
    return path


def topic_rows(split: str) -> list[tuple[str, str]]:
    """(headline, topic) of a split, in file order."""
    chosen = slice(0, 4) if split == "train" else slice(4, 6)
    return [(text, topic) for topic in TOPICS for text in HEADLINES[topic][chosen]]


def write_ne_topic(folder: Path) -> Path:
    (folder / "data").mkdir(parents=True, exist_ok=True)
    words = dict(zip(TOPICS, NEPALI_TOPICS, strict=True))
    with open(folder / "data" / "news.tsv", "w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, delimiter="\t")
        writer.writerow(["headline", "section"])
        writer.writerows([(text, words[topic]) for text, topic in topic_rows("train")] + [DROPPED])
    lines = [json.dumps({"title": text, "topic_id": TOPICS.index(topic)}, ensure_ascii=False)
             for text, topic in topic_rows("test")]  # fmt: skip
    (folder / "data" / "news_test.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    path = folder / "ne_topic.yaml"
    path.write_text(NE_TOPIC_TASK, encoding="utf-8")
    return path


def write_si_exam(folder: Path) -> Path:
    (folder / "exam").mkdir(parents=True, exist_ok=True)
    for split, items in (("test", SI_EXAM[:4]), ("demo", SI_EXAM[4:])):
        records = [
            {"id": f"si-{split}-{i}", "question": question, "options": dict(zip("ABCD", options, strict=True)),
             "correct_key": key, "correct_option": options["ABCD".index(key)], "domain": "STEM",
             "subdomain": "mathematics", "level": "Grade 9"}
            for i, (question, options, key) in enumerate(items)
        ]  # fmt: skip
        text = "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records)
        (folder / "exam" / f"{split}.jsonl").write_text(text, encoding="utf-8")
    path = folder / "si_exam.yaml"
    path.write_text(SI_EXAM_TASK, encoding="utf-8")
    return path


def write_ne_idioms(folder: Path) -> Path:
    """An idiomaticity task of the user's own (its prompts are not neDIOM's), on the items of neDIOM's embedded
    sample (our own sentences) copied beside its file."""
    from nlue.data.sample import sample_data_dir

    (folder / "idioms").mkdir(parents=True, exist_ok=True)
    for split in ("train", "test"):
        text = (sample_data_dir() / "nediom" / f"{split}.jsonl").read_text(encoding="utf-8")
        (folder / "idioms" / f"{split}.jsonl").write_text(text, encoding="utf-8")
    path = folder / "ne_idioms.yaml"
    path.write_text(NE_IDIOMS_TASK, encoding="utf-8")
    return path
