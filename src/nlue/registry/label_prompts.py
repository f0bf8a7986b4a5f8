"""How a language model is asked to *write* one label (classification by generation: NLUE, neDIOM), or one
number (a similarity score by generation: STS-B).

Our own words. The log-likelihood prompts (:mod:`nlue.registry.nlue_prompts`,
:data:`nlue.registry.nediom.NEDIOM_PROMPTS`) end with an answer cue and score each label word
after it; a chat model or API that cannot give log-likelihoods is instead told which words it
may answer with. This line is put just before the answer cue; ``{words}`` is the task's label
words in the prompt's language, in label order, joined by ``separator``. A task that scores a number
gets :data:`NUMBER_LINES` instead: ``{low}`` and ``{high}`` are its score range, written in the
prompt language's digits (:data:`DIGITS`).
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType


@dataclass(frozen=True)
class AnswerLine:
    template: str
    separator: str

    def render(self, words: tuple[str, ...] | list[str]) -> str:
        return self.template.format(words=self.separator.join(words))


ANSWER_LINES: MappingProxyType[str, AnswerLine] = MappingProxyType(
    {
        "en": AnswerLine("Reply with exactly one of these words and nothing else: {words}.", ", "),
        "ne": AnswerLine("यी शब्दमध्ये ठ्याक्कै एउटा मात्र लेखेर उत्तर दिनुहोस्, अरू केही नलेख्नुहोस्: {words}।", ", "),
    }
)

# The digits 0-9 as each prompt language writes them; numbers in a prompt (the range, a
# demonstration's score) are written so, and a number is read back in either script.
DIGITS: MappingProxyType[str, str] = MappingProxyType({"en": "0123456789", "ne": "०१२३४५६७८९"})

NUMBER_LINES: MappingProxyType[str, str] = MappingProxyType(
    {
        "en": "Reply with one number from {low} to {high} (a decimal such as {example} is fine) and nothing else.",
        "ne": "{low} देखि {high} सम्मको एउटा मात्र सङ्ख्या लेखेर उत्तर दिनुहोस् ({example} जस्तो दशमलव पनि हुन्छ), अरू केही नलेख्नुहोस्।",
    }
)
