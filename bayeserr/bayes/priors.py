"""Prior sensitivity of the conjugate Beta posterior (``docs/methods.md`` §5.1)."""

from __future__ import annotations


def prior_sensitivity(scores, priors=("uniform", "jeffreys"), level: float = 0.95) -> list[dict]:
    """Beta posterior intervals of each 0/1 model under several priors."""
    from bayeserr.models import beta_binomial
    rows = []
    for m in scores:
        if not m.binary:
            continue
        row = {"model": m.model}
        for p in priors:
            row[beta_binomial.prior_label(p)] = beta_binomial.beta_posterior(
                m.mean * m.n_questions, m.n_questions, p).interval(level).tolist()
        rows.append(row)
    return rows
