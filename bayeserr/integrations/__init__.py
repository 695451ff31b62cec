"""Top layer, glue to other tools: Inspect AI metrics
(:mod:`.inspect_metrics`).  Nothing of bayeserr imports this package.

May import: every layer.
"""
