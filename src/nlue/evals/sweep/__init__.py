"""`nlue sweep`: rosters (YAML, checked whole), the grid of cells, their costs, each cell run as an `nlue`
command, and the summary.

The sweep runs nlue's own commands (:mod:`nlue.cli`), so it is the one part of ``evals`` above the command
line in the room order (``tests/test_layout.py``).
"""
