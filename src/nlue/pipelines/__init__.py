"""Building task data: exam curation and annotation (:mod:`nlue.pipelines.mcq_curation`,
:mod:`nlue.pipelines.mcq_annotation`, command line :mod:`nlue.pipelines.mcq_cli`); translation
with quality control and idiom mining join them.
"""
