"""Top layer, glue to other tools: Inspect AI metrics (:mod:`.inspect_metrics`) and
the sequential stopping manager for Inspect evals (:mod:`.inspect_stopping`).  Nothing of bayeserr imports this package.

May import: every layer.
"""
