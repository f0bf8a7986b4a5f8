"""`nlue report`: results folders gathered (:mod:`~nlue.evals.report.build`), one section per paper and per
task file, figures, paired-test matrices, written as HTML, Markdown and CSV (:mod:`~nlue.evals.report.render`)."""
