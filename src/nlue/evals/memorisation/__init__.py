"""`nlue memorisation`: has a causal LM seen the test items? Min-K%++ against control texts, and exam completion."""
