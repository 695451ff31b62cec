"""Names that look alike: two models whose names differ only in invisible
characters or Unicode normalisation are shown identically in every report.

:func:`look_alike` groups names by what a reader sees — NFKC-normalised, with
control characters (:data:`~bayeserr.base.errors.CONTROL`, which reports show
as spaces), invisible format characters (zero-width joiners and spaces, soft
hyphens: Unicode category Cf) and repeated spaces removed, then letters of
other scripts that are drawn like Latin ones (Cyrillic ``о``, Greek ``Ο``) and
hyphen-like dashes mapped to them (:data:`LOOK_ALIKE`, a small part of Unicode's
confusables, UTS #39: the ones model names meet) — and :func:`codepoints` writes
a name so that such names read differently.
"""

from __future__ import annotations

import unicodedata

from bayeserr.base.errors import CONTROL


#: characters drawn like a Latin letter or an ASCII sign, and that letter or sign: Cyrillic and
#: Greek letters, dashes and minus signs like the hyphen, curly quotes (after NFKC, which
#: already folds full-width forms).  Not 0/O or l/I/1: distinct in the reports' fonts
LOOK_ALIKE = str.maketrans({**dict(zip("аеорсухіјѕԁӏһԛԝүАВЕКМНОРСТХІЈЅҮԚԜ",
                                       "aeopcyxijsdlhqwyABEKMHOPCTXIJSYQW")),
                            **dict(zip("ΑΒΕΖΗΙΚΜΝΟΡΤΥΧον", "ABEZHIKMNOPTYXov")),
                            **dict.fromkeys("\u2010\u2011\u2012\u2013\u2043\u2212", "-"),
                            **dict.fromkeys("\u2018\u2019\u02bc", "'"), **dict.fromkeys("\u201c\u201d", '"')})


def seen(name: str) -> str:
    """What a reader sees of ``name`` (see the module docstring)."""
    text = CONTROL.sub(" ", name)
    text = "".join(c for c in text if unicodedata.category(c) != "Cf")
    return " ".join(unicodedata.normalize("NFKC", text).translate(LOOK_ALIKE).split())


def look_alike(names) -> list[tuple[str, ...]]:
    """Groups (in first-seen order) of two or more distinct names that look the same."""
    groups: dict[str, list[str]] = {}
    for name in dict.fromkeys(str(n) for n in names):
        groups.setdefault(seen(name), []).append(name)
    return [tuple(g) for g in groups.values() if len(g) > 1]


def codepoints(name: str) -> str:
    """``name`` with every character outside printable ASCII written as U+XXXX,
    so names that look alike read differently (``café`` → ``caf{U+00E9}``,
    its decomposed twin → ``cafe{U+0301}``; no character any format escapes)."""
    return "".join(c if " " <= c <= "~" else f"{{U+{ord(c):04X}}}" for c in name)


def codepoint_marks(name: str) -> list[bool]:
    """Which characters of ``name`` reports write as code points: invisible format
    characters (zero-width joiners and spaces, bidirectional overrides such as U+202E,
    which would reverse the text around them), and in a name that is not in NFC the
    combining marks NFC would fold into a letter.  None in an NFC name without such
    characters, in any script."""
    import unicodedata
    if name.isascii():
        return [False] * len(name)
    decomposed = unicodedata.normalize("NFC", name) != name
    return [unicodedata.category(c) == "Cf" or bool(decomposed and unicodedata.combining(c)) for c in name]


def visible(name: str) -> str:
    """``name`` as reports show it: the characters :func:`codepoint_marks` picks
    written as ``{U+XXXX}`` (``cafe{U+0301}``, not ``café``; ``gpt{U+202E}4o``)."""
    return "".join(f"{{U+{ord(c):04X}}}" if m else c for c, m in zip(name, codepoint_marks(name)))
