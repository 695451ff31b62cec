"""Defaults from configuration files (``bayeserr.toml``, ``[tool.bayeserr]``):
each setting checked as its flag is, then made the default of the commands
that read results.  Needs only the click context, not the command group."""

from __future__ import annotations

import json

import click

from bayeserr.base.errors import InputError

#: the commands whose options take their defaults from the configuration files
CONFIG_COMMANDS = ("report", "compare", "gate", "plot", "power", "config")


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
        from bayeserr.registries.options import checked_methods
        checked_methods(value)
    elif key == "pairs":
        from bayeserr.registries.options import Options
        Options(pairs=value, bayes="off")
    elif key == "prior":
        from bayeserr.bayes.settings import parse_prior
        parse_prior(value)
    elif key == "where":
        from bayeserr.data.filters import parse_where_list
        parse_where_list(value)


def checked(ctx: click.Context, cfg) -> dict:
    """``{key: value as the flag takes it}`` for the settings of ``cfg``, each
    checked as its flag is; a bad value is an :class:`InputError` naming the
    file and the key."""
    report = ctx.find_root().command.commands["report"]
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
    from bayeserr.data.config import read
    cfg = read()
    values = checked(ctx, cfg)
    defaults = {}
    for name in CONFIG_COMMANDS:
        command = ctx.command.commands.get(name)
        if command is None:
            continue
        own = {}
        for key, value in values.items():
            param = option_of(command, key)
            if param is not None:
                own[param.name] = value
        defaults[name] = own
    ctx.default_map = {**(ctx.default_map or {}), **defaults}
    ctx.meta["bayeserr.data.config"] = cfg
