"""neDIOM's data tools: mining idiom contexts from a corpus, annotating them, drawing the few-shot pool.

Modules: :mod:`~nlue.text.idiom_prefix` (the truncated-prefix matcher), :mod:`~nlue.idioms.sentences`
(sentence splitting), :mod:`~nlue.text.idiom_position` (the ``###`` position field),
:mod:`~nlue.idioms.corpus` (streaming documents), :mod:`~nlue.idioms.mine` (candidates),
:mod:`~nlue.idioms.annotate` (sheets, agreement, adjudication), :mod:`~nlue.idioms.split`
(the few-shot pool) and :mod:`~nlue.idioms.cli` (``nlue idioms``). Kept free of imports here
so that the task kind can use the matcher without loading the rest.
"""
