"""What the commands share: reading inputs, writing outputs, parsing lists."""

from __future__ import annotations

import click

from ..errors import InputError


def load(file, models=None, **cols):
    """Load results (and protect the input from being overwritten)."""
    from ..data import load as _load
    from ..output import protect
    protect(file)
    return _load(file, models=models, **cols)


def emit(text: str, output=None) -> None:
    """Print to stdout, or write atomically to ``output``."""
    if output:
        from ..output import write_atomic
        write_atomic(output, text)
        click.echo(f"wrote {output}", err=True)
    else:
        click.echo(text, nl=not text.endswith("\n"))


def needs_output(fmt: str, output, example: str = "report.html") -> None:
    if fmt == "html" and not output:
        raise InputError(f"--format html writes a page: give it a file with --output {example}.")


def floats(text: str, name: str) -> list[float]:
    try:
        return [float(v) for v in str(text).split(",") if v.strip()]
    except ValueError:
        raise InputError(f"--{name} takes comma-separated numbers (got '{text}').") from None


def ints(text: str, name: str) -> list[int]:
    values = floats(text, name)
    if any(v != int(v) or v < 1 for v in values):
        raise InputError(f"--{name} takes positive whole numbers (got '{text}').")
    return [int(v) for v in values]


def model_list(text):
    return [m.strip() for m in text.split(",")] if text else None


def command_line() -> str:
    """The command as typed, for the report's provenance."""
    import shlex
    import sys
    return " ".join(["bayeserr", *map(shlex.quote, sys.argv[1:])])
