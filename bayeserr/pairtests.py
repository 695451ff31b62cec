"""The registry of tests of A − B that the simulation lab measures
(``docs/methods.md`` §3, §8): key, label, family and reference of each, from
which the lab's tables and figures take their names."""

from __future__ import annotations

from dataclasses import dataclass

from .registry import Registry


@dataclass(frozen=True)
class PairTest:
    key: str
    label: str
    family: str  #: "normal", "clustered", "exact" or "bayes"
    reference: str  #: section of docs/methods.md


TESTS = Registry("test of A − B")
for _t in (PairTest("unpaired", "Unpaired z", "normal", "§3.1"),
           PairTest("paired", "Paired z", "normal", "§3.2"),
           PairTest("clustered_paired", "Clustered paired z", "clustered", "§3.3"),
           PairTest("mcnemar_exact", "McNemar exact", "exact", "§3.5"),
           PairTest("bayes_prob_095", "P(A > B) > 0.95", "bayes", "§5.3")):
    TESTS.add(_t.key, _t)
