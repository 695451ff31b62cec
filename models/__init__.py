"""Bayesian models of bayeserr, installed as ``bayeserr.models``.

One file per model (SPEC §5).  Import as ``bayeserr.models``; the top-level
``models`` name is only the folder in the source tree.
"""
