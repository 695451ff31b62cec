"""Bayesian models of bayeserr, installed as ``bayeserr.models``.

Layer 3: one file per model (``docs/methods.md`` §5).  May import: base, data,
stats; never the registries, analyses or reports above.  Import as ``bayeserr.models``; the top-level
``models`` name is only the folder in the source tree.
"""
