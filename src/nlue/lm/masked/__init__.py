"""Masked language models as word scorers: whole words for a blank (GMET) and label words at mask slots (neDIOM).

* :mod:`~nlue.lm.masked.predictor` - :class:`~nlue.lm.masked.predictor.MaskedLMPredictor`, the
  PLL-word-l2r ranking of whole words for a sentence with one blank;
* :mod:`~nlue.lm.masked.pieces`, :mod:`~nlue.lm.masked.passes`, :mod:`~nlue.lm.masked.rank`,
  :mod:`~nlue.lm.masked.trim` - its parts (encoded words, batched passes, ranking, the trimmed last layer);
* :mod:`~nlue.lm.masked.labels` - label words scored at mask slots after a prompt.

Build them through :func:`nlue.lm.factory.load_model`; torch and transformers load only when a model does.
"""
