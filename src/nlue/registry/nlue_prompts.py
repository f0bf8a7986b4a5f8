"""How each NLUE classification task is asked of a language model, in English and in Nepali.

Our own words, not the paper's (the paper fine-tunes encoders and prompts no LLM). Each
prompt gives an instruction, labels each input field, and ends with an answer cue; the
labels are verbalised in id order and scored as continuations (log-likelihood), so
``label_words`` must follow the registry's label order. The classification kind turns
these into one template (:meth:`nlue.registry.kinds.classification.ClassificationKind.llm_template`)
that our evaluator and the lm-evaluation-harness export both render.
"""

from __future__ import annotations

from types import MappingProxyType

from nlue.registry.spec import PromptSpec

EN_CUE, NE_CUE = "Answer:", "उत्तर:"
YES_NO_EN, YES_NO_NE = ("no", "yes"), ("होइन", "हो")


def _prompts(en: PromptSpec, ne: PromptSpec) -> MappingProxyType[str, PromptSpec]:
    return MappingProxyType({"en": en, "ne": ne})


def _fields(**labels: tuple[str, str]) -> tuple[MappingProxyType[str, str], MappingProxyType[str, str]]:
    """Field labels in (English, Nepali), as two mappings."""
    return (
        MappingProxyType({k: v[0] for k, v in labels.items()}),
        MappingProxyType({k: v[1] for k, v in labels.items()}),
    )


_TEXT = _fields(text=("Text", "पाठ"))
_PAIR = _fields(sentence1=("Sentence 1", "वाक्य १"), sentence2=("Sentence 2", "वाक्य २"))

NLUE_PROMPTS: MappingProxyType[str, MappingProxyType[str, PromptSpec]] = MappingProxyType(
    {
        "sa": _prompts(
            PromptSpec("Is the opinion in this text positive or negative?", _TEXT[0], EN_CUE, ("negative", "positive")),
            PromptSpec("यो पाठमा व्यक्त विचार सकारात्मक हो कि नकारात्मक?", _TEXT[1], NE_CUE, ("नकारात्मक", "सकारात्मक")),
        ),
        "cola": _prompts(
            PromptSpec("Is this sentence grammatically acceptable Nepali?", _TEXT[0], EN_CUE, YES_NO_EN),
            PromptSpec("के यो वाक्य व्याकरणका हिसाबले मिलेको नेपाली हो?", _TEXT[1], NE_CUE, YES_NO_NE),
        ),
        "wg": _prompts(
            PromptSpec(
                "Which option fills the blank (_) in the sentence correctly, 1 or 2?",
                _fields(sentence=("Sentence", "वाक्य"), option1=("Option 1", "विकल्प १"), option2=("Option 2", "विकल्प २"))[0],
                EN_CUE,
                ("1", "2"),
            ),
            PromptSpec(
                "वाक्यको खाली ठाउँ (_) मा कुन विकल्प मिल्छ, १ कि २?",
                _fields(sentence=("Sentence", "वाक्य"), option1=("Option 1", "विकल्प १"), option2=("Option 2", "विकल्प २"))[1],
                NE_CUE,
                ("१", "२"),
            ),
        ),
        "qqp": _prompts(
            PromptSpec(
                "Do these two questions ask the same thing?",
                _fields(question1=("Question 1", "प्रश्न १"), question2=("Question 2", "प्रश्न २"))[0],
                EN_CUE,
                YES_NO_EN,
            ),
            PromptSpec(
                "के यी दुई प्रश्नले एउटै कुरा सोधेका छन्?",
                _fields(question1=("Question 1", "प्रश्न १"), question2=("Question 2", "प्रश्न २"))[1],
                NE_CUE,
                YES_NO_NE,
            ),
        ),
        "mrpc": _prompts(
            PromptSpec("Do these two sentences mean the same thing?", _PAIR[0], EN_CUE, YES_NO_EN),
            PromptSpec("के यी दुई वाक्यको अर्थ एउटै हो?", _PAIR[1], NE_CUE, YES_NO_NE),
        ),
        # A similarity score, not a label: no label words; asked by generation only, and the model
        # writes a number (nlue.evals.number_generation reads it; label_prompts.NUMBER_LINES asks for it).
        "stsb": _prompts(
            PromptSpec(
                "How close in meaning are these two sentences? 0 means they have nothing in common, "
                "5 means they say exactly the same thing.",
                _PAIR[0],
                EN_CUE,
                (),
            ),
            PromptSpec(
                "यी दुई वाक्यको अर्थ कति मिल्छ? ० भए दुवैमा केही मिल्दैन, ५ भए दुवैले ठ्याक्कै उही कुरा भन्छन्।",
                _PAIR[1],
                NE_CUE,
                (),
            ),
        ),
        "qadsm": _prompts(
            PromptSpec(
                "Is this advertisement relevant to the search query?",
                _fields(
                    query=("Query", "खोज"), ad_title=("Ad title", "विज्ञापनको शीर्षक"),
                    ad_description=("Ad description", "विज्ञापनको विवरण"),
                )[0],
                EN_CUE,
                YES_NO_EN,
            ),
            PromptSpec(
                "के यो विज्ञापन खोजसँग सम्बन्धित छ?",
                _fields(
                    query=("Query", "खोज"), ad_title=("Ad title", "विज्ञापनको शीर्षक"),
                    ad_description=("Ad description", "विज्ञापनको विवरण"),
                )[1],
                NE_CUE,
                YES_NO_NE,
            ),
        ),
        "mnli": _prompts(
            PromptSpec(
                "Does the premise entail the hypothesis, contradict it, or neither?",
                _fields(premise=("Premise", "आधार वाक्य"), hypothesis=("Hypothesis", "परिकल्पना"))[0],
                EN_CUE,
                ("entailment", "neutral", "contradiction"),
            ),
            PromptSpec(
                "के आधार वाक्यले परिकल्पनालाई पुष्टि गर्छ, खण्डन गर्छ, वा दुवै गर्दैन?",
                _fields(premise=("Premise", "आधार वाक्य"), hypothesis=("Hypothesis", "परिकल्पना"))[1],
                NE_CUE,
                ("पुष्टि", "तटस्थ", "खण्डन"),
            ),
        ),
        "qnli": _prompts(
            PromptSpec(
                "Does the sentence answer the question?",
                _fields(question=("Question", "प्रश्न"), sentence=("Sentence", "वाक्य"))[0],
                EN_CUE,
                ("yes", "no"),
            ),
            PromptSpec(
                "के वाक्यले प्रश्नको उत्तर दिन्छ?",
                _fields(question=("Question", "प्रश्न"), sentence=("Sentence", "वाक्य"))[1],
                NE_CUE,
                ("हो", "होइन"),
            ),
        ),
        "rte": _prompts(
            PromptSpec("Does the first passage entail the second sentence?", _PAIR[0], EN_CUE, ("yes", "no")),
            PromptSpec("के पहिलो अनुच्छेदबाट दोस्रो वाक्य पुष्टि हुन्छ?", _PAIR[1], NE_CUE, ("हो", "होइन")),
        ),
        "cr": _prompts(
            PromptSpec(
                "The second sentence replaces the pronoun of the first with a candidate. Is the replacement right?",
                _PAIR[0],
                EN_CUE,
                YES_NO_EN,
            ),
            PromptSpec(
                "दोस्रो वाक्यले पहिलो वाक्यको सर्वनामको ठाउँमा एउटा नाम राखेको छ। के त्यो सही छ?",
                _PAIR[1],
                NE_CUE,
                YES_NO_NE,
            ),
        ),
    }
)  # fmt: skip
