"""Layer 0, the foundation: what every other layer may use and which imports
nothing else of bayeserr.

* :mod:`.errors` — :class:`~bayeserr.base.errors.InputError` and the helpers
  that name a problem and its fix;
* :mod:`.registry` — :class:`~bayeserr.base.registry.Registry`, name → entry
  with did-you-mean errors, and the range checks of numeric options;
* :mod:`.results` — the frozen-dataclass result lists with ``to_frame`` /
  ``to_dict``;
* :mod:`.caveat` — a warning as data;
* :mod:`.jsonable` — plain JSON (NaN as ``null``);
* :mod:`.output` — atomic writes that never overwrite an input;
* :mod:`.formats` — numbers and names in text, the same in every format and command;
* :mod:`.names` — names shown so that two that look alike are told apart;
* :mod:`.lazy` — a package's public names imported on first use;
* :mod:`.version` — the version.

May import: the standard library, numpy, pandas.
"""
