"""Two tasks nlue does not ship, as a researcher would bring them: a task file and CSV files each (issue 30, item 2).

* ``ne_news_topic``: Nepali news sentences in five topics (classification, 5 labels);
* ``ur_review_sentiment``: Urdu reviews, negative / neutral / positive (classification, 3 labels, the Urdu profile,
  labels given as -1/0/1 in the CSV and mapped by the task file);
* ``ne_headline_relatedness``: how related two Nepali headlines are, 0-5 (regression).

Every sentence is our own, written for these tests. :func:`write_user_tasks` lays the files out in a folder;
:func:`build_user_task` builds one task's dataset repo from its declared data (registered for the build only), so
that a test registers the task itself (``registered_task_files``) around what it checks.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

from nlue.data.build import build_repo
from nlue.data.mapping import FieldMapping
from nlue.data.report import BuildOptions, BuildResult, TaskSources
from nlue.registry.tasks import get_task, registered_task_files

NEPALI_TOPICS = ("politics", "sports", "economy", "health", "culture")
# (topic, sentence): eight a topic; the first six of each train, the last two test.
NEPALI_NEWS = {
    "politics": [
        "संसदको बैठक आज दिउँसो बस्ने भएको छ।", "प्रधानमन्त्रीले मन्त्रिपरिषद् विस्तार गरे।",
        "स्थानीय चुनावको मिति घोषणा भयो।", "दुई दलबीच गठबन्धनको सहमति भयो।",
        "संविधान संशोधनको प्रस्ताव संसदमा दर्ता भयो।", "गृहमन्त्रीले सुरक्षा निकायसँग छलफल गरे।",
        "प्रदेश सभाले नयाँ कानुन पारित गर्‍यो।", "विपक्षी दलले संसदको बैठक अवरुद्ध गर्‍यो।",
    ],
    "sports": [
        "नेपाली फुटबल टोलीले मैत्रीपूर्ण खेल जित्यो।", "क्रिकेट कप्तानले शतक बनाए।",
        "राष्ट्रिय खेलकुद प्रतियोगिता पोखरामा सुरु भयो।", "धावकले म्याराथनमा नयाँ कीर्तिमान राखे।",
        "भलिबल लिगको फाइनल शनिबार हुनेछ।", "तेक्वान्दो खेलाडीले स्वर्ण पदक जिते।",
        "प्रशिक्षकले टोलीमा नयाँ खेलाडी छनोट गरे।", "रंगशालामा खेल हेर्न दर्शकको भीड लाग्यो।",
    ],
    "economy": [
        "सुनको मूल्य तोलामा दुई हजार बढ्यो।", "राष्ट्र बैंकले ब्याजदर घटायो।",
        "शेयर बजार आज उकालो लाग्यो।", "विप्रेषण आप्रवाह गत वर्षभन्दा बढेको छ।",
        "पेट्रोलको भाउ फेरि बढ्यो।", "निर्यात व्यापारमा घाटा कम भयो।",
        "नयाँ उद्योगले सयौँलाई रोजगारी दियो।", "बजारमा महँगी दर पाँच प्रतिशत पुग्यो।",
    ],
    "health": [
        "अस्पतालमा डेंगुका बिरामी बढेका छन्।", "बालबालिकालाई दादुराविरुद्ध खोप दिइयो।",
        "स्वास्थ्य चौकीमा औषधिको अभाव भयो।", "चिकित्सकले नियमित व्यायाम गर्न सल्लाह दिए।",
        "नयाँ मुटु उपचार केन्द्र खुल्यो।", "झाडापखालाबाट बच्न उमालेको पानी पिउन आग्रह गरियो।",
        "निःशुल्क आँखा शिविरमा सयौँ बिरामी जाँचिए।", "अस्पतालमा नर्सहरूको तालिम सम्पन्न भयो।",
    ],
    "culture": [
        "दसैँमा टीका लगाउन आफन्त भेला भए।", "भक्तपुरमा बिस्का जात्रा सुरु भयो।",
        "लोकगीत प्रतियोगितामा युवाको सहभागिता बढ्यो।", "पुरानो मन्दिरको जीर्णोद्धार सकियो।",
        "नयाँ नेपाली चलचित्र हलमा लाग्यो।", "तिहारमा दियो बालेर घर सजाइयो।",
        "कविता गोष्ठीमा दश कविले रचना वाचन गरे।", "परम्परागत नाचको प्रदर्शन भयो।",
    ],
}  # fmt: skip

NEPALI_TASK = """\
name: ne_news_topic
version: 1.0.0
title: Nepali news topics
description: Which of five topics a short Nepali news sentence is about.
languages: [ne]
kind: classification
category: single sentence
inputs:
  fields: [text]
label_field: topic
labels: [politics, sports, economy, health, culture]
prompts:
  ne:
    instruction: यो समाचार कुन विषयको हो?
    field_labels: {text: समाचार}
    answer_cue: "उत्तर:"
    label_words: [राजनीति, खेलकुद, अर्थ, स्वास्थ्य, संस्कृति]
data:
  train: {path: news/train.csv, columns: {text: sentence}}
  test: {path: news/test.csv, columns: {text: sentence}}
license: cc-by-4.0
domains: [news]
sources: [written by the nlue developers for the tests]
"""

URDU_LABELS = ("negative", "neutral", "positive")
URDU_REVIEWS = {  # -1 negative, 0 neutral, 1 positive; six a class for train, two for test
    "-1": [
        "سروس بہت سست اور خراب تھی۔", "یہ جوتے دو دن میں ٹوٹ گئے۔", "فلم بورنگ تھی، وقت ضائع ہوا۔",
        "بیٹری ایک گھنٹے میں ختم ہو جاتی ہے۔", "دکاندار نے بدتمیزی کی۔", "کمرے میں بہت گندگی تھی۔",
        "ٹرین تین گھنٹے لیٹ تھی۔", "یہ دوا بالکل بے اثر رہی۔",
    ],
    "0": [
        "دکان صبح نو بجے کھلتی ہے۔", "پارسل منگل کو پہنچا۔", "یہ قمیض نیلے رنگ کی ہے۔",
        "بس ہر گھنٹے چلتی ہے۔", "دفتر دوسری منزل پر ہے۔", "میٹنگ جمعرات کو ہوگی۔",
        "کتاب میں دو سو صفحات ہیں۔", "اسٹیشن شہر کے مرکز میں ہے۔",
    ],
    "1": [
        "یہ کتاب بہت دلچسپ ہے۔", "کھانا مزیدار تھا اور عملہ خوش اخلاق تھا۔", "میں اس فون سے بہت خوش ہوں۔",
        "ہوٹل کا کمرہ صاف اور آرام دہ تھا۔", "استاد نے بہت اچھی طرح سمجھایا۔", "یہ پارک خوبصورت اور پرسکون ہے۔",
        "ڈاکٹر نہایت مہربان تھے۔", "نئی سڑک سے سفر آسان ہو گیا۔",
    ],
}  # fmt: skip

URDU_TASK = """\
name: ur_review_sentiment
version: 1.0.0
title: Urdu review sentiment
description: Whether a short Urdu review is negative, neutral or positive.
languages: [ur]
kind: classification
category: single sentence
inputs:
  fields: [review]
label_field: sentiment
labels: [negative, neutral, positive]
prompts:
  ur:
    instruction: اس تبصرے میں رائے منفی ہے، غیر جانبدار ہے یا مثبت؟
    field_labels: {review: تبصرہ}
    answer_cue: "جواب:"
    label_words: [منفی, غیرجانبدار, مثبت]
data:
  train: {path: reviews/train.csv, labels: {"-1": negative, "0": neutral, "1": positive}}
  test: {path: reviews/test.csv, labels: {"-1": negative, "0": neutral, "1": positive}}
license: cc-by-4.0
domains: [product and service reviews]
sources: [written by the nlue developers for the tests]
"""

RELATEDNESS_TASK = """\
name: ne_headline_relatedness
version: 1.0.0
title: Nepali headline relatedness
description: How related two Nepali news sentences are, from 0 (unrelated) to 5 (the same story).
languages: [ne]
kind: regression
category: similarity
inputs:
  fields: [first, second]
label_field: score
score_range: [0.0, 5.0]
data:
  train: {path: pairs/train.csv}
  test: {path: pairs/test.csv}
license: cc-by-4.0
domains: [news]
sources: [written by the nlue developers for the tests]
"""
TASK_FILES = {
    "ne_news_topic": NEPALI_TASK,
    "ur_review_sentiment": URDU_TASK,
    "ne_headline_relatedness": RELATEDNESS_TASK,
}


def _write_csv(path: Path, header: list[str], rows: list[list[object]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)


def _pairs(split: str) -> list[list[object]]:
    """Pairs of our news sentences scored by how related they are: same topic 3-4.5, other topics 0.5-1.5."""
    take = slice(0, 6) if split == "train" else slice(6, 8)
    by_topic = {topic: sentences[take] for topic, sentences in NEPALI_NEWS.items()}
    rows: list[list[object]] = []
    for t, topic in enumerate(NEPALI_TOPICS):
        own = by_topic[topic]
        other = by_topic[NEPALI_TOPICS[(t + 1) % len(NEPALI_TOPICS)]]
        for i, sentence in enumerate(own):
            rows.append([sentence, own[(i + 1) % len(own)], 3.0 + 0.5 * (i % 4)])
            rows.append([sentence, other[i], 0.5 + 0.5 * (i % 3)])
    return rows


def write_user_tasks(root: Path) -> dict[str, Path]:
    """The three task files and their CSV files under ``root``; task name -> task file."""
    root.mkdir(parents=True, exist_ok=True)
    for split, take in (("train", slice(0, 6)), ("test", slice(6, 8))):
        news = [[s, topic] for topic, sentences in NEPALI_NEWS.items() for s in sentences[take]]
        _write_csv(root / "news" / f"{split}.csv", ["sentence", "topic"], news)
        reviews = [[s, label] for label, sentences in URDU_REVIEWS.items() for s in sentences[take]]
        _write_csv(root / "reviews" / f"{split}.csv", ["review", "sentiment"], reviews)
        _write_csv(root / "pairs" / f"{split}.csv", ["first", "second", "score"], _pairs(split))
    paths = {}
    for name, text in TASK_FILES.items():
        paths[name] = root / f"{name}.yaml"
        paths[name].write_text(text, encoding="utf-8")
    return paths


def build_user_task(task_file: Path, out: Path) -> BuildResult:
    """The task's dataset repo built from the files its task file declares (the task registered for the build)."""
    with registered_task_files([task_file]) as (declared,):
        task = get_task(declared.name)
        files = {split: [Path(str(source.path))] for split, source in task.data.items()}
        first = next(iter(task.data.values()))
        mapping = FieldMapping(first.columns, first.labels)
        options = BuildOptions(name=task.benchmark, license="cc-by-4.0", show_progress=False)
        return build_repo([TaskSources(task, files, mapping)], out, options)


@dataclass(frozen=True)
class UserRuns:
    """The three tasks built, and real runs of them: the TF-IDF baseline and a tiny fine-tuned encoder on each."""

    root: Path
    task_files: dict[str, Path]
    builds: dict[str, Path]  # task -> the built dataset repo (one benchmark each)
    results: Path  # <results>/baseline__tfidf/<task>.json and <results>/tiny-bert/<task>.json
    models: Path  # <models>/<task>/: the fine-tuned classifiers, as the Space scans for them


BASELINE_RUN, FINE_TUNED_RUN = "baseline__tfidf", "tiny-bert"


def make_user_runs(root: Path) -> UserRuns:
    """Build the three tasks from their CSV files and run both models on each, the tasks registered meanwhile."""
    import torch

    from nlue.evals.baseline_cli import run_task
    from nlue.lm.tiny import save_tiny_encoder
    from nlue.training.args import DataArguments, LoraArguments, ModelArguments, NlueTrainingArguments, RecipeArguments
    from nlue.training.run import run_training

    task_files = write_user_tasks(root / "sources")
    builds = {name: build_user_task(path, root / "build" / name).repo_dir for name, path in task_files.items()}
    results, models = root / "results", root / "models"
    encoder = save_tiny_encoder(root / "encoder", "bert")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with registered_task_files(list(task_files.values())):
            for name, repo in builds.items():
                run_task(str(repo), get_task(name), results, BASELINE_RUN, bootstrap_resamples=200)
                run_training(
                    ModelArguments(model_name_or_path=str(encoder)),
                    DataArguments(task=name, dataset=str(repo)),
                    LoraArguments(),
                    RecipeArguments(results_dir=str(results), results_name=FINE_TUNED_RUN, bootstrap_resamples=200),
                    NlueTrainingArguments(
                        output_dir=str(models / name), num_train_epochs=1, per_device_train_batch_size=8,
                        report_to=[], disable_tqdm=True,
                    ),
                )  # fmt: skip
    finally:
        torch.set_num_threads(threads)
    return UserRuns(root, task_files, builds, results, models)
