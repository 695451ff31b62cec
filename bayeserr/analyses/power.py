"""Planning an eval, as one question with one answer (``docs/methods.md`` §4).

:func:`plan` takes the inputs ``bayeserr power`` takes and returns a
:class:`Plan`: what was asked, the answer (questions needed, minimum
detectable effect, or tie zone), the inputs used (after a pilot filled them
in) and one sentence saying it.  The formulas are in :mod:`bayeserr.stats.planning`.

JSON form (``Plan.to_dict``), schema ``bayeserr.power/1``: ``schema``;
``design`` (``paired``, ``unpaired`` or ``tie_zone``); the answer under its
own name (``n_required``, ``mde`` or ``tie_zone``); every input used, by
name; ``pilot`` (the pilot estimates or ``null``); ``clusters_required``
(or ``null``); ``text`` and ``notes`` (what was printed).  A paired plan
from 0/1 accuracies (``p``, ``rho``: §4.6) adds ``p`` (the baseline
accuracy), ``p_target`` (``p + delta``), ``rho`` and ``omega2_implied`` (the
ω² of (M9) they imply, also under ``omega2``); fields are only ever added.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from bayeserr.base.errors import InputError, describe
from bayeserr.stats import planning as pw


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
        from bayeserr.base.jsonable import to_jsonable
        return to_jsonable({"schema": "bayeserr.power/1", "design": self.design,
                            self.question: self.answer, **self.inputs, "pilot": self.pilot,
                            "clusters_required": self.clusters_required, "text": self.text,
                            "notes": list(self.notes)})

    def to_markdown(self) -> str:
        return "\n".join([self.text, *self.notes]) + "\n"


EXAMPLES = (
    "bayeserr power --p 0.75 --rho 0.6 --delta 0.03    # 0/1 scores: baseline 75%, answers correlated at 0.6",
    "bayeserr power --baseline 0.80 --target 0.83      # independent samples, questions per model",
    "bayeserr power --delta 0.03 --omega2 0.111        # (M9) with the variance of the paired difference",
)

USAGE = ("Plan an eval: give the difference to detect (--delta) or the questions you have (--n), "
         "and what the scores look like:\n"
         "  --p P --rho R          0/1 scores: baseline accuracy and correlation of the models' answers\n"
         "  --omega2 W             the variance of the per-question paired difference (M9)\n"
         "  --pilot FILE A B       estimate it from a pilot results file\n"
         "  --baseline P --target P   two independent samples (unpaired proportions)\n"
         "  --tie-zone P           the unpaired tie zone at accuracy P\n\n"
         "Examples:\n" + "\n".join("  " + e for e in EXAMPLES))


def _drop(mode: str, **given):
    """Options that the plan ``mode`` does not use: an error naming them."""
    extra = ["--" + k.replace("_", "-") for k, v in given.items() if v]
    if extra:
        raise InputError(f"power: {' and '.join(extra)} {'is' if len(extra) == 1 else 'are'} not used "
                         f"with {mode}: drop {'it' if len(extra) == 1 else 'them'}.")


def _one_source(omega2, p, rho, pilot, unpaired, baseline, target, tie_p) -> str | None:
    """Which of the ways of describing the scores was given (at most one)."""
    given = [name for name, on in (
        ("--omega2", omega2 is not None), ("--p/--rho", p is not None or rho is not None),
        ("--pilot", pilot is not None), ("--unpaired", bool(unpaired)),
        ("--baseline/--target", baseline is not None or target is not None),
        ("--tie-zone", tie_p is not None)) if on]
    if {"--unpaired", "--baseline/--target"} <= set(given):
        raise InputError("power: --unpaired P_A P_B and --baseline P --target P are two spellings of "
                         "the same plan: give one of them.")
    if len(given) > 1:
        raise InputError(f"power: {given[0]} and {given[1]} each describe the scores: give only one. "
                         f"Examples:\n" + "\n".join("  " + e for e in EXAMPLES))
    return given[0] if given else None


def _check_inputs(unpaired, pilot, alpha, power, **numbers):
    """The arguments of :func:`plan`, checked once at the API boundary: each
    number given is a number (:func:`~bayeserr.stats.planning.check_number`),
    ``alpha``/``power`` lie in (0, 1), ``unpaired`` is two accuracies and
    ``pilot`` a (dataset, A, B) triple (:func:`~bayeserr.stats.planning.check_pilot`).
    Returns ``unpaired`` and ``pilot`` in their checked form."""
    for name, value in numbers.items():
        if value is not None:
            pw.check_number(name, value)
    pw.check_alpha_power(alpha, power)
    if unpaired is not None:
        if isinstance(unpaired, (str, bytes)) or not hasattr(unpaired, "__len__") or len(unpaired) != 2:
            raise InputError(f"power: unpaired takes the two accuracies (p_a, p_b) of independent "
                             f"samples, e.g. unpaired=(0.80, 0.83); got {describe(unpaired)}.")
        unpaired = tuple(pw.check_number(f"unpaired {name}", v, "0.80")
                         for name, v in zip(("p_a", "p_b"), unpaired))
    if pilot is not None:
        if isinstance(pilot, (str, bytes)) or not isinstance(pilot, (tuple, list)) or len(pilot) != 3:
            raise InputError(f"power: pilot takes (dataset, A, B): a dataset from bayeserr.load and the "
                             f"two models to compare, e.g. pilot=(bayeserr.load('pilot.csv'), 'A', 'B'); "
                             f"got {describe(pilot)}.")
        pilot = pw.check_pilot(*pilot)
    return unpaired, pilot


def _one_question(delta, n, source):
    if delta is not None and n is not None:
        raise InputError("power: give --delta (the questions needed to detect it) or --n (the effect "
                         "detectable with n questions), not both.")
    if delta is None and n is None:
        raise InputError(f"power: {source} needs --delta (the difference to detect, e.g. 0.03) or "
                         "--n (the questions available).")


def _tie_zone(delta, n, p, alpha) -> Plan:
    level = 1 - alpha
    _one_question(delta, n, "--tie-zone")
    if n is not None:
        hw = pw.tie_zone(p, n, level)
        return Plan("tie_zone", "tie_zone", hw, {"p": p, "n": n, "level": level},
                    f"Tie zone at accuracy {p:g} with n = {n:g}: ±{100 * hw:.1f} points ({level:.0%}).")
    need = math.ceil(pw.n_for_tie_zone(delta, p, level))
    return Plan("tie_zone", "n_required", need, {"p": p, "delta": delta, "level": level},
                f"{need} questions shrink the unpaired tie zone at accuracy {p:g} to {100 * delta:g} points.")


def _judge_labels(rho, half_width, n, sd, p, n_total, alpha, cluster_size, icc) -> Plan:
    """Human labels for a judge-scored eval (``docs/methods.md`` §3.14, J13): with
    ``half_width`` the labels needed for a PPI++ interval that narrow, with ``n`` the
    half-width ``n`` labels give; ``rho`` the judge–human correlation, the human
    score's SD from ``sd`` or, for 0/1 scores, ``p`` (√(p(1 − p)))."""
    from bayeserr.stats import ppi
    if rho is None:
        raise InputError("power: --half-width plans human labels for a judge-scored eval and needs "
                         "--judge-corr R (the judge–human correlation, from a pilot or a guess).")
    if (half_width is None) == (n is None):
        raise InputError("power: --judge-corr needs --half-width W (the labels needed for a PPI++ interval "
                         "of ±W) or --n N (the half-width N labels give), one of them.")
    if (sd is None) == (p is None):
        raise InputError("power: --judge-corr needs the spread of the human score: --sd S, or --p P for 0/1 "
                         "scores (SD √(P(1 − P))), one of them.")
    spread = sd if sd is not None else math.sqrt(pw.check_number("p", p) * (1 - p))
    deff = 1.0
    if (cluster_size is None) != (icc is None):
        raise InputError("power: --cluster-size and --icc go together (a clustered design): give both.")
    if cluster_size is not None:
        deff = pw.design_effect_icc(cluster_size, icc)
    level = 1 - alpha
    kw = dict(level=level, n_total=n_total, design_effect=deff)
    inputs = {"judge_corr": rho, "sd": spread, "n_total": n_total, "level": level, "design_effect": deff}
    if n is not None:
        res = ppi.half_width_for_labels(n, rho, spread, **kw)
        text = (f"{n:g} human labels give a PPI++ interval of ±{100 * res.half_width:.1f} points ({level:.0%}); "
                f"the labels alone would give ±{100 * res.classical_half_width:.1f}.")
        return Plan("judge_labels", "half_width", res.half_width, {**inputs, "n": n}, text,
                    notes=(_judge_note(res),))
    res = ppi.labels_for_half_width(half_width, rho, spread, **kw)
    if not res.attainable:
        text = (f"±{100 * half_width:g} points is out of reach: even labelling all {n_total:,.0f} questions "
                "gives a wider interval.")
    else:
        text = (f"{res.n_labels:,.0f} human labels for a PPI++ interval of ±{100 * half_width:g} points "
                f"({level:.0%}), where labels alone would need {res.classical_labels:,.0f}.")
    return Plan("judge_labels", "labels_required", res.n_labels, {**inputs, "half_width": half_width}, text,
                notes=(_judge_note(res),))


def _judge_note(res) -> str:
    return ("Large-sample (J13): the judge scores every question and people label n of them, PPI++ with the power-tuned λ; the labels must be "
            "a random sample of the answers, and below a few dozen labels estimating λ costs a little more.")


def _unpaired(p_a, p_b, alpha, power) -> Plan:
    need = math.ceil(pw.n_unpaired(p_a, p_b, alpha=alpha, power=power))
    return Plan("unpaired", "n_required", need, {"p_a": p_a, "p_b": p_b, "alpha": alpha, "power": power},
                f"{need} questions per model (unpaired, alpha {alpha:g}, power {power:.0%}).")


def _binary(delta, p, rho):
    """The target accuracy ``p + δ`` and the ω² of (M9) it implies with ``p``
    and ρ (§4.6); both ``None`` without ``delta`` (the MDE path solves for δ)."""
    if p is None or rho is None:
        raise InputError("power: --p (baseline accuracy) and --rho (correlation of the two models' 0/1 "
                         "answers) go together: give both. Example: " + EXAMPLES[0].split("  ")[0])
    if delta is not None and not p + delta < 1:
        raise InputError(f"power: the target accuracy p + delta = {p + delta:g} must be below 1 (--p is "
                         "the baseline, the weaker model's accuracy; the other is p + delta).")
    target = p + delta if delta is not None else None
    return target, (pw.omega2_binary(p, target, rho) if target is not None else None)


def _binary_note(p, target, rho, omega2, alpha, power, gap="p + delta", deff=1.0) -> str:
    text = (f"ω² = {omega2:.4f}: the variance of the per-question difference of 0/1 scores (M9), from "
            f"accuracies p_A = {p:g} (baseline, --p) and p_B = {target:.4g} (= {gap}) with correlation "
            f"rho = {rho:g} between the models' answers: p_A(1 − p_A) + p_B(1 − p_B) − "
            f"2 rho sqrt(p_A(1 − p_A) p_B(1 − p_B)).")
    if deff == 1.0:
        unpaired = math.ceil(pw.n_unpaired(p, target, alpha=alpha, power=power))
        text += (f" Unpaired (each model on its own questions) the same gap needs {unpaired} "
                 "questions per model.")
    return text


def plan(*, delta=None, n=None, omega2=None, sigma2_a=0.0, sigma2_b=0.0, k_a=None, k_b=None,
         alpha=0.05, power=0.8, cluster_size=None, icc=None, unpaired=None, tie_p=None,
         pilot=None, p=None, rho=None, baseline=None, target=None, judge_corr=None, half_width=None,
         sd=None, n_total=None) -> Plan:
    """Answer one planning question (see the module docstring).

    The scores are described one way only: ``omega2`` (and optionally σ², K);
    ``p`` and ``rho`` for 0/1 scores (``p`` the baseline accuracy, the other
    model's ``p + delta``; §4.6); ``pilot``; ``unpaired=(p_a, p_b)`` or its
    readable spelling ``baseline``/``target`` (independent samples, §4.4); or
    ``tie_p``.  ``pilot`` is ``(dataset, A, B)``: ω², σ², K and the cluster
    ICC are estimated from it (§4.5) unless given explicitly.  Inconsistent or
    missing inputs raise :class:`~bayeserr.base.errors.InputError` naming what to give.
    """
    # size: the public API's keyword options, each documented above
    if judge_corr is not None or half_width is not None:
        _drop("--judge-corr (human labels for a judge-scored eval)", delta=delta is not None,
              omega2=omega2 is not None, rho=rho is not None, pilot=pilot is not None, unpaired=bool(unpaired),
              baseline=baseline is not None, target=target is not None, tie_zone=tie_p is not None,
              sigma2_a=bool(sigma2_a), sigma2_b=bool(sigma2_b), k_a=k_a is not None, k_b=k_b is not None)
        return _judge_labels(judge_corr, half_width, n, sd, p, n_total, alpha, cluster_size, icc)
    unpaired, pilot = _check_inputs(unpaired, pilot, alpha, power, delta=delta, n=n, omega2=omega2,
                                    sigma2_a=sigma2_a, sigma2_b=sigma2_b, k_a=k_a, k_b=k_b,
                                    cluster_size=cluster_size, icc=icc, tie_p=tie_p, p=p, rho=rho,
                                    baseline=baseline, target=target)
    source = _one_source(omega2, p, rho, pilot, unpaired, baseline, target, tie_p)
    if source is None:
        if delta is None and n is None:
            raise InputError("power: nothing to plan.\n" + USAGE)
        raise InputError(f"power: {'--delta' if delta is not None else '--n'} needs the variance of the "
                         "scores: give --omega2, or --p and --rho (0/1 scores), or --pilot FILE A B. "
                         "Examples:\n" + "\n".join("  " + e for e in EXAMPLES))
    noise = dict(sigma2_a=sigma2_a, sigma2_b=sigma2_b, k_a=k_a not in (None, 1), k_b=k_b not in (None, 1))
    if source == "--tie-zone":
        _drop("--tie-zone", **noise, cluster_size=cluster_size is not None, icc=icc is not None)
        return _tie_zone(delta, n, tie_p, alpha)
    if source in ("--unpaired", "--baseline/--target"):
        if source == "--baseline/--target":
            if baseline is None or target is None:
                raise InputError("power: --baseline P and --target P go together (the two accuracies, "
                                 "e.g. --baseline 0.80 --target 0.83): give both.")
            unpaired = (baseline, target)
        _drop(source + " (the difference is the gap between the two accuracies)", delta=delta is not None,
              n=n is not None, **noise, cluster_size=cluster_size is not None, icc=icc is not None)
        return _unpaired(*unpaired, alpha, power)
    pilot_dict, deff, notes, binary = None, 1.0, [], None
    _one_question(delta, n, source)
    if source == "--p/--rho":
        _drop("--p/--rho (one 0/1 answer per question: ω² holds all the variance)", **noise)
        p_target, omega2 = _binary(delta, p, rho)
        binary = dict(p=p, p_target=p_target, rho=rho, omega2_implied=omega2)
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
    k_a, k_b = k_a or 1.0, k_b or 1.0
    inputs = dict(omega2=omega2, sigma2_a=sigma2_a, sigma2_b=sigma2_b, k_a=k_a, k_b=k_b,
                  alpha=alpha, power=power)
    if (cluster_size is None) != (icc is None):
        raise InputError("power: --cluster-size and --icc go together (a clustered design): give both.")
    if cluster_size is not None and icc is not None:
        if pilot_dict is None or deff == 1.0 and not notes:
            deff = pw.design_effect_icc(cluster_size, icc)
        inputs.update(cluster_size=cluster_size, icc=icc, design_effect=deff)
    if delta is not None:
        inputs["delta"] = delta
        if binary:
            inputs.update(binary)
            notes.insert(0, _binary_note(p, binary["p_target"], rho, omega2, alpha, power, deff=deff))
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
    inputs["n"] = n
    if binary:
        eff = pw.mde_binary(n, p, rho, alpha=alpha, power=power, deff=deff)
        omega2 = pw.omega2_binary(p, p + eff, rho)
        inputs.update(omega2=omega2, p=p, p_target=p + eff, rho=rho, omega2_implied=omega2)
        notes.insert(0, _binary_note(p, p + eff, rho, omega2, alpha, power,
                                      "p + the minimum detectable effect", deff))
    else:
        eff = pw.mde(n, omega2, sigma2_a, sigma2_b, k_a, k_b, alpha=alpha, power=power, deff=deff)
    return Plan("paired", "mde", eff, inputs,
                f"Minimum detectable effect with {n:g} questions: {100 * eff:.1f} points "
                f"(alpha {alpha:g}, power {power:.0%}).", pilot_dict, None, tuple(notes))
