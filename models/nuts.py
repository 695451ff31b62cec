"""How every model here runs NUTS (``docs/methods.md`` §5.6).

PyMC's sampler, with PyTensor's C modules built with ``-O2 -g0`` added after
PyTensor's own ``-O3 -g`` (later flags win).  On an empty compile cache the
first ``--bayes mcmc`` is mostly g++ (one module per operation of the log
density and its gradient, about 20 for the two-level graph); without debug
symbols, which nobody here reads, and at ``-O2`` the modules compile about
10–15% faster (SWE-bench's 24-model graph: 20.5–20.9 s of g++ against
22.3–25.1 s on this project's 2-core machine), for no measurable difference
in sampling time.  Warm caches are unaffected: modules are
cached under keys that include the flags.  Any flags the user set in
PyTensor's ``gcc__cxxflags`` are kept (ours come after them).

With ``own_init=True`` (the paired latent model), PyMC's own NUTS set-up
(``init_nuts``: jittered starting points, an adapting diagonal mass matrix)
is called here, with the seeds ``pm.sample`` would derive from
``random_seed``, and its step passed to ``pm.sample``: that skips
``pm.sample``'s choice of step methods, which builds the gradient of the log
density once per variable only to find that NUTS fits them all (0.35 s of
graph building for the paired latent model on every run, warm cache or
not).  The draws are those of PyMC's default path in law, not to the last
bit: ``pm.sample`` maps the starting points back through each variable's
transform and forth again (a ``1e-17`` change in a logit), after which a
chain follows another trajectory.  So the other models, whose seeded
results are quoted in these docs, keep the default path.

Not used, and why: PyTensor's whole-graph ``"c"`` linker would build one
module instead of twenty (a third of the compile time), but its generated
code aborts on some of these graphs (PyTensor 2.38: a view's ``assert
(py_V == V)`` fails in the paired latent model); the Numba backend compiles
as slowly on an empty cache.
"""

from __future__ import annotations

import contextlib
import signal
import threading

#: g++ flags added after PyTensor's own (later flags win)
COMPILE_FLAGS = "-O2 -g0"


def sample(*, own_init: bool = False, **kwargs):
    """``pymc.sample(**kwargs)`` inside the current model context, compiled as above.

    An interrupt (Ctrl-C) is never swallowed: PyMC catches it and returns the
    draws so far (or fails during tuning with another error), which would make
    a complete-looking report from a fraction of the draws; here it is raised
    again as :class:`KeyboardInterrupt` once PyMC has stopped."""
    from bayeserr.models import compat
    pm = compat.import_pymc()
    import pytensor
    flags = f"{pytensor.config.gcc__cxxflags} {COMPILE_FLAGS}".strip()
    with _interrupts() as hit, pytensor.config.change_flags(gcc__cxxflags=flags):
        try:
            idata = pm.sample(**(_with_nuts_step(pm, kwargs) if own_init else kwargs))
        except Exception:
            if hit:
                raise KeyboardInterrupt("sampling interrupted") from None
            raise
    if hit:
        raise KeyboardInterrupt("sampling interrupted")
    return idata


def _with_nuts_step(pm, kwargs: dict) -> dict:
    """``kwargs`` of ``pm.sample`` with ``step`` and ``initvals`` from ``pm.init_nuts``
    (jitter+adapt_diag, PyMC's default; the NUTS options, e.g. ``target_accept``, go
    to the step), seeded as ``pm.sample`` seeds it: chain seeds drawn from the
    generators spawned from ``random_seed`` (the module docstring; ``docs/methods.md`` §5.6)."""
    from bayeserr.models import compat
    nuts_options = {key: kwargs.pop(key) for key in ("target_accept", "max_treedepth") if key in kwargs}
    chains = kwargs.get("chains", 2)
    seeds = compat.chain_seeds(kwargs.get("random_seed"), chains)
    initvals, step = pm.init_nuts(init="jitter+adapt_diag", chains=chains, random_seed=seeds,
                                  tune=kwargs.get("tune"), progressbar=False, quiet=True, **nuts_options)
    return {**kwargs, "step": step, "initvals": initvals}


@contextlib.contextmanager
def _interrupts():
    """Record SIGINT (and SIGTERM, where a program made it an interrupt: the command
    line does) while the block runs, in a list that is non-empty once hit, then pass
    each on to the handler that was there (by default: KeyboardInterrupt)."""
    hit: list = []
    if threading.current_thread() is not threading.main_thread():  # signals reach the main thread only
        yield hit
        return
    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    # an ignored SIGINT (a background job) stays ignored; SIGTERM is watched only if Python handles it
    watched = {sig: h for sig, h in previous.items()
               if callable(h) or (sig == signal.SIGINT and h is not signal.SIG_IGN)}

    def record(signum, frame):
        hit.append(signum)
        handler = watched[signum]
        if callable(handler):
            handler(signum, frame)
        raise KeyboardInterrupt

    for sig in watched:
        signal.signal(sig, record)
    try:
        yield hit
    finally:
        for sig, handler in watched.items():
            signal.signal(sig, handler)
