"""The one renderer of every table the harness prints (scale/gate, compare, check, parsers).

    >>> print(render(["parser", "cost"], [["a", "12"], None, ["bb", "3"]], right={1}))
    parser  cost
    ------  ----
    a         12
    <BLANKLINE>
    bb         3

Columns are separated by two spaces and as wide as their widest cell (the
header included); trailing blanks are cut. ``right``: the indices of the
columns aligned to the right (figures); the others are aligned to the left.
A row that is ``None`` is a blank line (between groups). ``rule``: a line of
dashes under the header. ``markdown``: a GitHub table instead (``| a | b |``
rows, the ``|---|`` rule; ``right`` columns read ``---:``), for notes and
issues.
"""

from __future__ import annotations

from typing import Collection, Sequence

__all__ = ["render"]


def render(header: Sequence[str], rows: Sequence[Sequence[str] | None], *, right: Collection[int] = (),
           rule: bool = True, markdown: bool = False) -> str:
    """``header`` and ``rows`` (cells as text; ``None`` for a blank line) as one string, lines joined
    by ``\\n`` with no trailing newline. Raises ``ValueError`` when a row's cell count is not the
    header's."""
    body = [r for r in rows if r is not None]
    for r in body:
        if len(r) != len(header):
            raise ValueError(f"a row of {len(r)} cells under a header of {len(header)}: {list(r)!r}")
    if markdown:
        lines = ["| " + " | ".join(header) + " |",
                 "|" + "|".join("---:" if i in right else "---" for i in range(len(header))) + "|"]
        lines += ["| " + " | ".join(r) + " |" for r in body]
        return "\n".join(lines)
    widths = [max(len(str(r[i])) for r in [header, *body]) for i in range(len(header))]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(str(c).rjust(w) if i in right else str(c).ljust(w)
                         for i, (c, w) in enumerate(zip(cells, widths))).rstrip()

    lines = [line(header)] + (["  ".join("-" * w for w in widths)] if rule else [])
    lines += ["" if r is None else line(r) for r in rows]
    return "\n".join(lines)
