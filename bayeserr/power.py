"""Planning an eval, as one question with one answer (``docs/methods.md`` §4).

:func:`plan` takes the inputs ``bayeserr power`` takes and returns a
:class:`Plan`: what was asked, the answer (questions needed, minimum
detectable effect, or tie zone), the inputs used (after a pilot filled them
in) and one sentence saying it.  The formulas are in :mod:`bayeserr.planning`.

JSON form (``Plan.to_dict``), schema ``bayeserr.power/1``: ``schema``;
``design`` (``paired``, ``unpaired`` or ``tie_zone``); the answer under its
own name (``n_required``, ``mde`` or ``tie_zone``); every input used, by
name; ``pilot`` (the pilot estimates or ``null``); ``clusters_required``
(or ``null``); ``text`` and ``notes`` (what was printed).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from . import planning as pw
from .errors import InputError


@dataclass(frozen=True)
class Plan:
    design: str  #: paired | unpaired | tie_zone
    question: str  #: n_required | mde | tie_zone
    answer: float
    inputs: dict
    text: str
    pilot: dict | None = None
    clusters_required: int | None = None
    notes: tuple = field(default_factory=tuple)

    def to_dict(self) -> dict:
        from .reporting.build import to_jsonable
        return to_jsonable({"schema": "bayeserr.power/1", "design": self.design,
                            self.question: self.answer, **self.inputs, "pilot": self.pilot,
                            "clusters_required": self.clusters_required, "text": self.text,
                            "notes": list(self.notes)})

    def to_markdown(self) -> str:
        return "\n".join([self.text, *self.notes]) + "\n"


def _need(**kw):
    missing = [k.replace("_", "-") for k, v in kw.items() if v is None]
    if missing:
        raise InputError(f"power: give --{' and --'.join(missing)}. "
                         "Example: bayeserr power --delta 0.03 --omega2 0.11")


def _tie_zone(delta, n, p, alpha) -> Plan:
    level = 1 - alpha
    if n is not None:
        hw = pw.tie_zone(p, n, level)
        return Plan("tie_zone", "tie_zone", hw, {"p": p, "n": n, "level": level},
                    f"Tie zone at accuracy {p:g} with n = {n:g}: ±{100 * hw:.1f} points ({level:.0%}).")
    _need(delta=delta)
    need = math.ceil(pw.n_for_tie_zone(delta, p, level))
    return Plan("tie_zone", "n_required", need, {"p": p, "delta": delta, "level": level},
                f"{need} questions shrink the unpaired tie zone at accuracy {p:g} to {100 * delta:g} points.")


def plan(*, delta=None, n=None, omega2=None, sigma2_a=0.0, sigma2_b=0.0, k_a=None, k_b=None,
         alpha=0.05, power=0.8, cluster_size=None, icc=None, unpaired=None, tie_p=None,
         pilot=None) -> Plan:
    """Answer one planning question (see the module docstring).

    ``pilot`` is ``(dataset, A, B)``: ω², σ², K and the cluster ICC are
    estimated from it (§4.5) unless given explicitly.
    """
    if tie_p is not None:
        return _tie_zone(delta, n, tie_p, alpha)
    if unpaired:
        need = math.ceil(pw.n_unpaired(*unpaired, alpha=alpha, power=power))
        return Plan("unpaired", "n_required", need, {"p_a": unpaired[0], "p_b": unpaired[1], "alpha": alpha,
                                         "power": power},
                    f"{need} questions per model (unpaired, alpha {alpha:g}, power {power:.0%}).")
    pilot_dict, deff, notes = None, 1.0, []
    if pilot is not None:
        ds, a, b = pilot
        est = pw.from_pilot(ds, a, b)
        omega2, sigma2_a, sigma2_b = est.omega2, est.sigma2_a, est.sigma2_b
        k_a, k_b = k_a or est.k_a, k_b or est.k_b
        if est.icc is not None and icc is None and cluster_size is None:
            cluster_size, icc, deff = est.cluster_size, est.icc, est.design_effect
            if est.deff_floored:
                notes.append(f"The pilot's ICC estimate {est.icc_estimate:.3f} is below 0, which is "
                             "noise, not a discount: planning uses design effect 1.")
        pilot_dict = est.to_dict()
    _need(omega2=omega2)
    k_a, k_b = k_a or 1.0, k_b or 1.0
    inputs = dict(omega2=omega2, sigma2_a=sigma2_a, sigma2_b=sigma2_b, k_a=k_a, k_b=k_b,
                  alpha=alpha, power=power)
    if cluster_size is not None and icc is not None:
        if pilot_dict is None or deff == 1.0 and not notes:
            deff = pw.design_effect_icc(cluster_size, icc)
        inputs.update(cluster_size=cluster_size, icc=icc, design_effect=deff)
    if delta is not None:
        inputs["delta"] = delta
        need = math.ceil(pw.n_required(delta, omega2, sigma2_a, sigma2_b, k_a, k_b, alpha=alpha,
                                       power=power, deff=deff))
        var = pw.paired_variance(omega2, sigma2_a, sigma2_b, k_a, k_b)
        text = (f"{need} questions to detect a paired difference of {100 * delta:g} points "
                f"(alpha {alpha:g}, power {power:.0%}, variance {var:.4f}")
        clusters = None
        if cluster_size is not None and icc is not None and cluster_size > 1:
            clusters = math.ceil(need / cluster_size)
            text += (f", design effect {deff:.2f}: {clusters} clusters of about "
                     f"{round(cluster_size):d} questions")
        return Plan("paired", "n_required", need, inputs, text + ").", pilot_dict, clusters, tuple(notes))
    _need(n=n)
    inputs["n"] = n
    eff = pw.mde(n, omega2, sigma2_a, sigma2_b, k_a, k_b, alpha=alpha, power=power, deff=deff)
    return Plan("paired", "mde", eff, inputs,
                f"Minimum detectable effect with {n:g} questions: {100 * eff:.1f} points "
                f"(alpha {alpha:g}, power {power:.0%}).", pilot_dict, None, tuple(notes))
