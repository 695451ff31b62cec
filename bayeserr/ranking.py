"""Which models can be told apart: compact letter groups (``docs/methods.md`` §7.1).

Models sharing a letter cannot be told apart at the report's level after the
multiplicity adjustment (Holm by default, BH with ``--adjust bh``).  The
letters come from the insert-and-absorb algorithm of Piepho (2004, *J. Comput.
Graph. Stat.* 13:456): start with one group holding every model; for each
pair that differs, split every group holding both into one without each;
drop groups contained in another.  The result is a valid letter display —
two models share a letter exactly when their difference is not significant —
whenever one exists with the groups found; letters are assigned in ranking
order, so "a" is the group of the best model.
"""

from __future__ import annotations

import string

import numpy as np

#: stop splitting beyond this many groups (a pathological significance pattern);
#: the display is then marked incomplete rather than taking unbounded time
MAX_GROUPS = 2000
#: more groups than this cannot be read as letters: no letters are shown then
#: (the report says so and points to the pairwise table)
MAX_LETTERS = 52


def _letters(k: int) -> str:
    """The k-th letter: a–z, then A–Z (at most :data:`MAX_LETTERS` groups)."""
    return (string.ascii_lowercase + string.ascii_uppercase)[k]


def letter_groups(names, differs: np.ndarray) -> tuple[dict, bool]:
    """Letters per model from a symmetric boolean matrix ``differs[i, j]``
    (True: significantly different).  ``names`` are in ranking order.

    Returns ``({name: letters}, complete)``; ``complete`` is False (and the
    letters empty) when the significance pattern needs more than
    :data:`MAX_LETTERS` groups to be shown.
    """
    m = len(names)
    # groups as bit masks; only groups created by a split can be absorbed (an
    # untouched group was maximal before and cannot fit inside a smaller one)
    groups = [(1 << m) - 1]
    complete = True
    for i, j in zip(*np.nonzero(np.triu(differs, 1))):
        both = (1 << int(i)) | (1 << int(j))
        keep = [g for g in groups if g & both != both]
        split = {g & ~(1 << int(k)) for g in groups if g & both == both for k in (i, j)}
        everyone = keep + list(split)
        groups = keep + [g for g in split
                         if g and not any(g | h == h and g != h for h in everyone)]
        if len(groups) > MAX_GROUPS:
            complete = False
            break
    if len(groups) > MAX_LETTERS:
        return {}, False
    groups = [frozenset(k for k in range(m) if g >> k & 1) for g in groups]
    groups.sort(key=lambda g: (min(g), sorted(g)))
    letters = {n: "" for n in names}
    for k, g in enumerate(groups):
        for idx in sorted(g):
            letters[names[idx]] += _letters(k)
    return letters, complete


def report_groups(scores, comps, level: float, adjust: str = "holm") -> tuple[dict, bool]:
    """Letter groups for the models of a report (best first), from the
    adjusted p-values of its comparisons at ``1 − level``.  Pairs left out of
    the comparisons (fewer than 2 common questions) count as not different."""
    names = [s.model for s in scores]
    pos = {n: i for i, n in enumerate(names)}
    differs = np.zeros((len(names), len(names)), bool)
    for c in comps:
        p = c.p_holm if adjust == "holm" else c.p_bh
        if np.isfinite(p) and p < 1 - level:
            differs[pos[c.a], pos[c.b]] = differs[pos[c.b], pos[c.a]] = True
    return letter_groups(names, differs)
