"""Layer 5, the registries: which interval methods, pair tests, options and
warnings exist, and how each is computed from the formulas and the models.
Adding a method means adding one entry here; every consumer (reports,
renderers, the lab) reads the registry.

* :mod:`.methods` — interval methods (``INTERVALS``) and the recommended rule;
* :mod:`.pairtests` — pair tests (``TESTS``);
* :mod:`.options` — :class:`~bayeserr.registries.options.Options`, the
  options every analysis takes;
* :mod:`.caveats` — which warnings apply where.

May import: base, data, stats, :mod:`bayeserr.models`, :mod:`bayeserr.bayes`.
"""
