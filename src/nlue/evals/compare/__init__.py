"""`nlue compare`: paired tests between the runs of two models (:mod:`~nlue.evals.compare.pairs`)."""
