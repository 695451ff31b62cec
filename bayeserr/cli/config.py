"""Configuration files on the command line: their settings become the
defaults of the commands that read results (click's ``default_map``), after
the same checks as the flags; ``bayeserr config`` shows what is in force.

Precedence: flag > ``bayeserr.toml`` > ``pyproject.toml`` ``[tool.bayeserr]``
> built-in default (:mod:`bayeserr.data.config`).
"""

from __future__ import annotations

import copy
import json

import click

from bayeserr.cli.app import main
from bayeserr.cli.common import emit
from bayeserr.cli.defaults import option_of
from bayeserr.data.config import KEYS
from bayeserr.reporting.formats import TEXT_FORMATS


def _config_params() -> list:
    """The options of ``report`` that a configuration file can set, for ``bayeserr config``."""
    report = main.commands["report"]
    params = []
    for key in KEYS:
        param = option_of(report, key)
        if param is not None:
            params.append(copy.copy(param))
    return params


def _shown(value):
    if isinstance(value, tuple):
        return list(value)
    return value


@click.pass_context
def _config(ctx, fmt, **values):
    """Show every setting in force and where it came from: default, a
    configuration file (bayeserr.toml over pyproject.toml [tool.bayeserr],
    the nearest of each searching upward from here) or a flag given here.

    Flags override the files, as on report, compare, plot and power.
    """
    from click.core import ParameterSource
    cfg = ctx.find_root().meta.get("bayeserr.data.config")
    rows = []
    for param in ctx.command.params:
        key = next((o[2:] for o in param.opts if o[2:] in KEYS), None) if isinstance(param, click.Option) else None
        if key is None:
            continue
        source = ctx.get_parameter_source(param.name)
        if source == ParameterSource.COMMANDLINE:
            origin = "flag"
        elif source == ParameterSource.DEFAULT_MAP and cfg is not None and key in cfg.sources:
            origin = cfg.source_text(key)
        else:
            origin = "default"
        rows.append((key, _shown(values[param.name]), origin))
    files = {k: str(v) for k, v in (cfg.files if cfg else {}).items()}
    ignored = [(str(p), why) for p, why in (cfg.ignored if cfg else [])]
    if fmt == "json":
        emit(json.dumps({"files": files, "ignored": [{"path": p, "why": w} for p, w in ignored],
                         "settings": {k: {"value": v, "source": o} for k, v, o in rows}}, indent=2))
        return
    lines = ["Configuration files (bayeserr.toml wins over pyproject.toml; flags over both):"]
    lines += [f"  {k}: {files[k]}" for k in ("bayeserr.toml", "pyproject.toml") if k in files] or \
        ["  none found (searched upward from the current directory to the repository or home folder)"]
    lines += [f"  ignored, not trusted: {p} ({w})" for p, w in ignored]
    width = max(len(k) for k, _, _ in rows)
    texts = [("(not set)" if v is None else "; ".join(v) if isinstance(v, list) else str(v).lower()
              if isinstance(v, bool) else str(v)) for _, v, _ in rows]
    vwidth = max(len(t) for t in texts)
    lines += ["", f"{'setting':<{width}}  {'value':<{vwidth}}  from"]
    lines += [f"{k:<{width}}  {t:<{vwidth}}  {o}" for (k, _, o), t in zip(rows, texts)]
    emit("\n".join(lines))


config = click.Command(
    "config", callback=_config,
    params=[*_config_params(),
            click.Option(["--format", "fmt"], type=click.Choice(TEXT_FORMATS.choices), default="text",
                         show_default=True)],
    help=_config.__doc__, short_help="Show the settings in force and where each came from.")
main.add_command(config)
