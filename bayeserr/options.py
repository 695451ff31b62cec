"""Analysis options, validated in one place for the Python API and the CLI.

:class:`Options` carries what every analysis takes (level, cluster
correction, multiplicity adjustment, unpaired handling, Bayesian settings);
building one checks every value and raises :class:`~bayeserr.errors.InputError`
naming the option, the value and the allowed range.  The numeric checks
(:func:`check_range`) are shared by every command, so ``--level 1.5`` fails
the same way everywhere.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from .errors import InputError
from .registry import Registry

CLUSTER_CORRECTIONS = Registry("cluster correction", "--cluster-correction", {
    "paper": "the paper's clustered SE (M4)",
    "cr1": "CR1 finite-cluster correction (Inspect AI, statsmodels)",
})
ADJUSTMENTS = Registry("multiplicity adjustment", "--adjust", {
    "holm": "holm",  # value: the statsmodels multipletests method
    "bh": "fdr_bh",
})
ON_UNPAIRED = Registry("unpaired handling", "--on-unpaired", {
    "error": "stop when two models have different question sets",
    "drop": "compare each pair on the questions both answered (reported)",
})


def check_range(option: str, value, low=None, high=None, *, low_open=False, high_open=False,
                integer=False):
    """Return ``value`` if it is a finite number in the range, else an
    :class:`InputError` naming ``option`` and the range."""
    def text():
        lo = "−∞" if low is None else f"{low:g}"
        hi = "∞" if high is None else f"{high:g}"
        kind = "a whole number" if integer else "a number"
        if low == 0 and low_open:
            kind = "a positive " + kind.split(" ", 1)[1]
        return (f"{option} must be {kind} in {'(' if low_open or low is None else '['}{lo}, "
                f"{hi}{')' if high_open or high is None else ']'} (got {value!r}).")
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise InputError(text()) from None
    if isinstance(value, bool) or not math.isfinite(v) or (integer and v != int(v)):
        raise InputError(text())
    if low is not None and (v < low or (low_open and v == low)):
        raise InputError(text())
    if high is not None and (v > high or (high_open and v == high)):
        raise InputError(text())
    return int(v) if integer else v


def check_level(value, option: str = "--level") -> float:
    return check_range(option, value, 0, 1, low_open=True, high_open=True)


@dataclass(frozen=True)
class Options:
    """What an analysis is asked to do (the same for the API and the CLI)."""

    level: float = 0.95
    cluster_correction: str = "paper"
    adjust: str = "holm"
    on_unpaired: str = "error"
    bayes: object = "fast"  #: "off" | "fast" | "mcmc" or a BayesSettings
    prior_sensitivity: bool = False
    pass_k: tuple = field(default_factory=tuple)
    seed: int = 0  #: seed of the frequentist resampling (wild cluster bootstrap)

    def __post_init__(self):
        from .bayes.settings import BayesSettings
        object.__setattr__(self, "level", check_level(self.level))
        CLUSTER_CORRECTIONS.check(self.cluster_correction)
        ADJUSTMENTS.check(self.adjust)
        ON_UNPAIRED.check(self.on_unpaired)
        object.__setattr__(self, "bayes", BayesSettings.coerce(self.bayes))
        ks = tuple(check_range("--pass-k", k, 1, integer=True) for k in (self.pass_k or ()))
        object.__setattr__(self, "pass_k", ks)
        object.__setattr__(self, "seed", check_range("--seed", self.seed, 0, integer=True))

    @classmethod
    def coerce(cls, options=None, **kwargs) -> "Options":
        """``options`` if given (with ``kwargs`` overriding), else ``Options(**kwargs)``."""
        if options is None:
            return cls(**kwargs)
        if not isinstance(options, Options):
            raise InputError("options must be a bayeserr Options object.")
        if kwargs:
            from dataclasses import replace
            return replace(options, **kwargs)
        return options
