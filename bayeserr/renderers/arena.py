"""The arena ratings page in Markdown, LaTeX and HTML (the blocks come from
:mod:`bayeserr.reporting.arena`)."""

from __future__ import annotations


from bayeserr.reporting.arena import _neighbour_items, _ratings_table, ratings_blocks


def to_markdown(r) -> str:
    from bayeserr.renderers.markdown import render_blocks
    return render_blocks(ratings_blocks(r))


def to_latex(r) -> str:
    """The ratings table, then the rows, the neighbours the votes cannot order
    and every warning as comments."""
    from bayeserr.renderers.latex import render_blocks
    from bayeserr.reporting import document as doc
    blocks = [_ratings_table(r)]
    if r.rows is not None:
        blocks.append(doc.Para(doc.rows_text(r.rows.to_dict()), "rows"))
    if r.not_separable:
        blocks.append(doc.Bullets(_neighbour_items(r), "neighbours"))
    if r.warnings:
        blocks += doc.warnings_blocks(r.warnings)
    return render_blocks(blocks, f"bayeserr arena: {r.source}")


def to_html(r) -> str:
    """The page shows every warning (as the eval report's page does)."""
    from bayeserr.renderers.html import render_blocks
    return render_blocks(ratings_blocks(r), title=f"Arena ratings: {r.source}",
                         source=r.source)  # base name in the title and heading
