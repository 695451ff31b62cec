"""Configuration files on the command line: their settings become the
defaults of the commands that read results (click's ``default_map``), after
the same checks as the flags; ``bayeserr config`` shows what is in force.

Precedence: flag > ``bayeserr.toml`` > ``pyproject.toml`` ``[tool.bayeserr]``
> built-in default (:mod:`bayeserr.config`).
"""

from __future__ import annotations

import copy
import json

import click

from ..config import KEYS
from ..errors import InputError
from . import main

#: the commands whose options take their defaults from the configuration files
CONFIG_COMMANDS = ("report", "compare", "plot", "power", "config")


def option_of(command: click.Command, key: str) -> click.Option | None:
    """The option ``--key`` of ``command``, if it has one."""
    flag = f"--{key}"
    for p in command.params:
        if isinstance(p, click.Option) and flag in p.opts:
            return p
    return None


def _toml(value) -> str:
    return json.dumps(value) if isinstance(value, (str, list, bool)) else str(value)


def _as_flag_value(param: click.Option, key: str, value, where: str):
    """A TOML value as the flag would receive it, or an error saying what the key takes."""
    def fail(takes):
        raise InputError(f"{where}: {key} takes {takes}.")
    if param.is_flag:
        if not isinstance(value, bool):
            fail("true or false")
        return value
    if param.multiple:
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, list) or not all(isinstance(v, str) for v in items):
            fail('text or a list of text, e.g. ["task=mmlu", "score>0"]')
        return list(items)
    if key == "methods" and isinstance(value, list):
        if not all(isinstance(v, str) for v in value):
            fail('recommended, all, or a list of method keys, e.g. ["clt", "wilson"]')
        return ",".join(value)
    if isinstance(param.type, (click.types.FloatParamType, click.types.IntParamType)):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            fail("a number")
        return value
    if not isinstance(value, str):
        fail("text (in quotes)")
    return value


def _semantic_check(key: str, value) -> None:
    """The checks the analysis itself makes on values click passes through."""
    if key == "methods":
        from ..options import _methods
        _methods(value)
    elif key == "pairs":
        from ..options import Options
        Options(pairs=value, bayes="off")
    elif key == "prior":
        from ..bayes.settings import parse_prior
        parse_prior(value)
    elif key == "where":
        from ..filters import parse_where_list
        parse_where_list(value)


def checked(ctx: click.Context, cfg) -> dict:
    """``{key: value as the flag takes it}`` for the settings of ``cfg``, each
    checked as its flag is; a bad value is an :class:`InputError` naming the
    file and the key."""
    report = main.commands["report"]
    out = {}
    for key, value in cfg.values.items():
        where = f"{cfg.sources[key]}: {key} = {_toml(value)}"
        param = option_of(report, key)
        if param is None:  # a known key whose option the commands no longer have
            raise InputError(f"{cfg.sources[key]}: '{key}' is not an option of bayeserr report.")
        raw = _as_flag_value(param, key, value, where)
        try:
            v = param.type_cast_value(ctx, raw)
            if param.callback is not None:
                v = param.callback(ctx, param, v)
            _semantic_check(key, v)
        except click.BadParameter as exc:
            raise InputError(f"{where}: {exc.format_message()}") from None
        except InputError as exc:
            raise InputError(f"{where}: {exc}") from None
        out[key] = raw
    return out


def apply(ctx: click.Context) -> None:
    """Read the configuration files and make their settings the defaults of
    the commands that read results (only when one of them is invoked)."""
    if ctx.invoked_subcommand not in CONFIG_COMMANDS or ctx.resilient_parsing:
        return
    from ..config import read
    cfg = read()
    values = checked(ctx, cfg)
    defaults = {}
    for name in CONFIG_COMMANDS:
        command = main.commands.get(name)
        if command is None:
            continue
        own = {}
        for key, value in values.items():
            param = option_of(command, key)
            if param is not None:
                own[param.name] = value
        defaults[name] = own
    ctx.default_map = {**(ctx.default_map or {}), **defaults}
    ctx.meta["bayeserr.config"] = cfg


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
    cfg = ctx.find_root().meta.get("bayeserr.config")
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
    if fmt == "json":
        click.echo(json.dumps({"files": files, "settings": {k: {"value": v, "source": o}
                                                             for k, v, o in rows}}, indent=2))
        return
    lines = ["Configuration files (bayeserr.toml wins over pyproject.toml; flags over both):"]
    lines += [f"  {k}: {files[k]}" for k in ("bayeserr.toml", "pyproject.toml") if k in files] or \
        ["  none found (searched upward from the current directory)"]
    width = max(len(k) for k, _, _ in rows)
    texts = [("(not set)" if v is None else "; ".join(v) if isinstance(v, list) else str(v).lower()
              if isinstance(v, bool) else str(v)) for _, v, _ in rows]
    vwidth = max(len(t) for t in texts)
    lines += ["", f"{'setting':<{width}}  {'value':<{vwidth}}  from"]
    lines += [f"{k:<{width}}  {t:<{vwidth}}  {o}" for (k, _, o), t in zip(rows, texts)]
    click.echo("\n".join(lines))


config = click.Command(
    "config", callback=_config,
    params=[*_config_params(),
            click.Option(["--format", "fmt"], type=click.Choice(["text", "json"]), default="text",
                         show_default=True)],
    help=_config.__doc__, short_help="Show the settings in force and where each came from.")
main.add_command(config)
