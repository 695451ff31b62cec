"""Layer 8, the renderers: write the report's neutral blocks and tables
(:mod:`bayeserr.reporting`) as Markdown, LaTeX and HTML, and draw the
figures.  No statistics are computed here.

* :mod:`.markdown`, :mod:`.latex`, :mod:`.html` — one module per format;
* :mod:`.plots` — the figures (matplotlib);
* :mod:`.arena` — the arena ratings page in each format;
* :mod:`.watch` — the page and figure of a watched run.

May import: every layer below.  A new output format is a module here that
renders :mod:`bayeserr.reporting.document` blocks, registered in
``bayeserr.reporting.build.FORMATS``.
"""

#: the figures ``bayeserr plot --kind`` draws (:data:`bayeserr.renderers.plots.FIGURES`, same order)
#: and the files it writes: here, so that the command line lists them without importing matplotlib
FIGURE_KINDS = ("forest", "ranks", "pairs", "heatmap", "posterior", "judge")
FIGURE_SUFFIXES = (".svg", ".png", ".pdf")
