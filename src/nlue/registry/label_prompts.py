"""How a language model is asked to *write* one label, for classification by generation (NLUE, neDIOM).

Our own words. The log-likelihood prompts (:mod:`nlue.registry.nlue_prompts`,
:data:`nlue.registry.nediom.NEDIOM_PROMPTS`) end with an answer cue and score each label word
after it; a chat model or API that cannot give log-likelihoods is instead told which words it
may answer with. This line is put just before the answer cue; ``{words}`` is the task's label
words in the prompt's language, in label order, joined by ``separator``.
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
