"""Workloads: model output in each format, sized in characters, and chunkings into deltas.

    >>> import workloads
    >>> workloads.names()                                   # workload names
    >>> case = workloads.make("write_file", "deepseek_v32", 65536)
    >>> deltas = case.deltas("tokens:4")

``make``/``names``/``HEADLINE``/``tools_for`` come from :mod:`callscale.workloads.catalog`
(``names`` lists workloads; formats are ``callscale.workloads.render.names()``),
``source_code``/``prose`` from :mod:`callscale.workloads.source`.
"""

from .case import Case
from .catalog import HEADLINE, make, names, tools_for
from .chunking import DEFAULT_CHUNKING, Chunking, chunk, parse_chunking
from .render import Call
from .source import prose, source_code

__all__ = [
    "DEFAULT_CHUNKING",
    "Chunking",
    "chunk",
    "parse_chunking",
    "Case",
    "Call",
    "make",
    "names",
    "HEADLINE",
    "tools_for",
    "source_code",
    "prose",
]
