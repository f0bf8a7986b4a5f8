"""Contamination: which test items a pretraining corpus holds (``nlue contamination``; issue 32, item 1)."""
