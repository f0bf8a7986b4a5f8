"""Models that need no download: the floors a real model is compared with.

* :mod:`~nlue.lm.baselines.ngram` - unigram and bigram word predictors for GMET, trained on the sample;
* :mod:`~nlue.lm.baselines.tiny_mlm` - a tiny BERT-style masked LM trained for seconds on the sample;
* :mod:`~nlue.lm.baselines.tfidf` - TF-IDF character n-grams with a linear model, for every NLUE task.

They are built like every other model, through :func:`nlue.lm.factory.load_model` (``baseline:<name>``).
"""
