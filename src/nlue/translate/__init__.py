"""Making task data the way NLUE did: English sources translated into Nepali, class by class.

* :mod:`nlue.translate.readers` - the raw English releases (formats declared in
  :mod:`nlue.registry.translation_sources`) read into registry rows, with the builder's rejects;
* :mod:`nlue.translate.prompts` - the request for a batch and the strict reading of its answer;
* :mod:`nlue.translate.batches` - class-wise batches; retry, split in halves, reject;
* :mod:`nlue.translate.engine` and :mod:`nlue.translate.mt` - the backends: the language-model
  engine (an OpenAI-compatible server, journalled) and a local transformers translation model;
* :mod:`nlue.translate.quality` - the script filter (Devanagari share, other scripts, Latin words);
* :mod:`nlue.translate.output` and :mod:`nlue.translate.pipeline` - one run, written atomically;
* :mod:`nlue.translate.review` and :mod:`nlue.translate.backtranslate` - the review loop and
  back-translation scores;
* :mod:`nlue.translate.cli` and :mod:`nlue.translate.review_cli` - ``nlue translate`` and its
  ``review`` / ``backtranslate`` actions.
"""
