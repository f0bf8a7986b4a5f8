"""`nlue export`: the registry's tasks as lm-evaluation-harness task files."""
