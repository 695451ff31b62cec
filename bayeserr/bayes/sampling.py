"""Where a sampler's output goes (``docs/methods.md`` §5.6).

PyMC's progress bar goes to stdout, so it is sent to stderr and a report on
stdout stays clean; without a progress bar (``--format json``) PyMC's log
lines and PyTensor's BLAS notice are silenced too.  Diagnostics (R-hat, ESS,
divergences) are not warnings here: they become report caveats.
"""

from __future__ import annotations

import contextlib
import sys


@contextlib.contextmanager
def sampling_output(progress: bool):
    import logging
    import warnings

    from bayeserr.models import compat
    compat.import_pymc()  # imported first: its import sets this logger's level
    logger = logging.getLogger("pymc")
    level = logger.level
    with contextlib.redirect_stdout(sys.stderr), warnings.catch_warnings():
        if not progress:
            logger.setLevel(logging.WARNING)
            warnings.simplefilter("ignore", UserWarning)
        try:
            yield
        finally:
            logger.setLevel(level)
