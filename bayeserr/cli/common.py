"""What the commands share: reading inputs, writing outputs, parsing lists."""

from __future__ import annotations

import math

import click

from bayeserr.base.errors import InputError


def inputs(files) -> list:
    """The FILE arguments as :func:`bayeserr.load` takes them.

    Each is a path, ``-`` (standard input), a glob pattern (quoted, so the
    shell leaves it: ``load`` expands it) or ``NAME=PATH``: the model of
    every row of PATH is NAME (a table without a model column, or an eval
    log whose model name is replaced).  An argument that exists as a path
    is a path even if it has ``=`` in it.
    """
    import os
    out = []
    for f in ([files] if isinstance(files, (str, os.PathLike)) else files):
        text = os.fspath(f)
        name, eq, path = text.partition("=")
        if text == "-" or os.path.exists(text) or not eq or not name.strip() or not path.strip():
            out.append(text)
        else:
            out.append({name: path})
    return out


def load(files, models=None, where=None, **cols):
    """Load results from one or several inputs (see :func:`inputs`), and
    protect every input from being overwritten."""
    from pathlib import Path

    from bayeserr.base.output import protect
    from bayeserr.data.loading import load as _load
    from bayeserr.data.readers import folder_inputs
    source = inputs(files)
    paths = [s for s in source if isinstance(s, str)]
    # a folder: the files read from it, not the outputs a previous run wrote there
    protect(*(f for s in paths for f in (folder_inputs(s) if Path(s).is_dir() else [s])),
            cols.get("labels"))  # the human labels table (--labels) is an input too
    try:
        ds = _load(source, models=models, where=list(where) if where else None, **cols)
    except InputError as exc:
        configured = _configured("where")
        if configured and "--where" in str(exc):
            raise InputError(f"{exc} (this --where comes from {configured}: give --where on the "
                             "command line to replace it, or remove it there)") from None
        raise
    protect(*(s for s in ds.attrs.get("inputs", ()) if not Path(s).is_dir()))  # folders: done above
    return ds


def _configured(param: str) -> str | None:
    """The configuration file a command's ``param`` came from, if it did."""
    ctx = click.get_current_context(silent=True)
    if ctx is None or ctx.get_parameter_source(param) is not click.core.ParameterSource.DEFAULT_MAP:
        return None
    from bayeserr.data.config import read
    cfg = read()
    return cfg.source_text(param) if param in cfg.sources else "a configuration file"


def emit(text: str, output=None) -> None:
    """Print to stdout, or write atomically to ``output``.

    Standard output that cannot take the text is an error, never a lost
    report: closed (``>&-``) or failing (``> /dev/full``) is an
    :class:`InputError`; a pipe whose reader left (``| head``) ends the
    command quietly with exit code 141 (128 + SIGPIPE), as ``cat`` does."""
    if output:
        from bayeserr.base.output import write_atomic
        write_atomic(output, text)
        click.echo(f"wrote {output}", err=True)
        return
    import sys
    if sys.stdout is None:
        raise InputError("standard output is closed: the output has nowhere to go. "
                         "Write it to a file with -o FILE, or leave stdout open.")
    try:
        _write_stdout(for_terminal(text) + ("" if text.endswith("\n") else "\n"))
    except BrokenPipeError:
        import os
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # Python's exit flush must not fail
        raise click.exceptions.Exit(141) from None
    except OSError as exc:
        raise InputError(f"could not write to standard output ({exc.strerror or exc}). "
                         "Write the output to a file with -o FILE.") from None


def _write_stdout(text: str) -> None:
    """``text`` to standard output in 64 KiB pieces, each flushed: one large write
    into a pipe whose reader has left can end without an error (Python's text
    layer and click's echo both lose it), so ``| head`` would leave exit code 0
    with the output cut; piece by piece, the broken pipe is seen."""
    import sys
    stream = sys.stdout
    stream.flush()
    binary = getattr(stream, "buffer", None)
    if binary is None:
        stream.write(text)
        stream.flush()
        return
    data = text.encode(stream.encoding or "utf-8", errors=stream.errors or "strict")
    for start in range(0, len(data), 1 << 16):
        binary.write(data[start:start + (1 << 16)])
        binary.flush()


#: the report's typography in ASCII, for a terminal whose encoding lacks it (cp1252, latin-1)
_ASCII = str.maketrans({"−": "-", "–": "-", "—": "-", "…": "...", "≥": ">=", "≤": "<=", "±": "+/-",
                        "†": "+", "×": "x", "’": "'", "“": '"', "”": '"', "²": "^2", "√": "sqrt ",
                        "Σ": "sum ", "Δ": "delta ", "δ": "delta", "μ": "mu", "ρ": "rho", "σ": "sigma",
                        "τ": "tau", "κ": "kappa", "ω": "omega", "α": "alpha", "β": "beta", "η": "eta"})


def for_terminal(text: str) -> str:
    """``text`` as stdout can encode it: unchanged on UTF-8; else the report's own
    typography in ASCII (a minus sign stays a minus sign) and anything else the
    encoding lacks (e.g. a model name in another script) as a backslash escape."""
    import sys
    encoding = getattr(sys.stdout, "encoding", None) or "utf-8"
    try:
        text.encode(encoding)
        return text
    except (UnicodeEncodeError, LookupError):
        return text.translate(_ASCII).encode(encoding, errors="backslashreplace").decode(encoding)


#: the format an --output file's extension names, when --format is not given
SUFFIX_FORMATS = {".md": "md", ".markdown": "md", ".json": "json", ".tex": "latex",
                  ".html": "html", ".htm": "html"}


def output_format(fmt: str, output, example: str = "report.html") -> str:
    """The format to write: ``--format`` when given (flag or configuration),
    else the one the ``--output`` file's extension names (``-o report.html``
    writes HTML), else the default; HTML needs an output file."""
    ctx = click.get_current_context(silent=True)
    if output and ctx is not None and ctx.get_parameter_source("fmt") is click.core.ParameterSource.DEFAULT:
        from pathlib import Path
        suffix = Path(str(output)).suffix.lower()
        param = next((p for p in ctx.command.params if p.name == "fmt"), None)
        choices = tuple(getattr(param.type, "choices", ())) if param is not None else ()
        guess = SUFFIX_FORMATS.get(suffix)
        if choices and guess not in choices:  # never write one format under another's extension
            _refuse_inputs(ctx, output)  # "this is an input file" says more than its extension
            known = ", ".join(f"{s} ({f})" for s, f in SUFFIX_FORMATS.items() if f in choices)
            raise InputError(f"--output {output}: {'the extension ' + suffix if suffix else 'no extension'} "
                             f"names no format this command writes. Use one of {known}, or give --format "
                             f"({', '.join(choices)}) to write that format under any name.")
        if guess:
            fmt = guess
    if fmt == "html" and not output:
        raise InputError(f"--format html writes a page: give it a file with --output {example}.")
    return fmt


def _refuse_inputs(ctx, output) -> None:
    """Refuse an --output that is one of the command's input files (:func:`bayeserr.base.output.check_writable`)."""
    from pathlib import Path

    from bayeserr.base.output import check_writable, protect
    values = [v for name, p in ctx.params.items() if name != "output"
              for v in (p if isinstance(p, (tuple, list)) else (p,))]
    protect(*(v for v in values if isinstance(v, str) and Path(v).exists()))
    check_writable(output)


def floats(text: str, name: str) -> list[float]:
    try:
        return [float(v) for v in str(text).split(",") if v.strip()]
    except ValueError:
        raise InputError(f"--{name} takes comma-separated numbers (got '{text}').") from None


def ints(text: str, name: str) -> list[int]:
    values = floats(text, name)
    if any(not math.isfinite(v) or v != int(v) or v < 1 for v in values):
        raise InputError(f"--{name} takes positive whole numbers (got '{text}').")
    return [int(v) for v in values]


def model_list(text):
    return [m.strip() for m in text.split(",")] if text else None


def command_line() -> str:
    """The command as typed, for the report's provenance."""
    import shlex
    import sys
    return " ".join(["bayeserr", *map(shlex.quote, sys.argv[1:])])
