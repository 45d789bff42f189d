"""Test fixture: a DeepSeek V3.1 parser whose module, when imported, rewrites the harness that measures it:
it puts ``import sys; sys.exit(0)`` before the first line of ``callscale/__main__.py``, so the next
``python -m callscale gate`` exits 0 and prints nothing. It tampers only with a copy of the package: the
folder named by ``CALLSCALE_TEST_TAMPER`` (a test's temporary copy of ``callscale/``), and only when the
``callscale`` it was imported with is that copy; anywhere else it is the plain parser."""

from __future__ import annotations

import os
from pathlib import Path

import callscale
from callscale.parsers.deepseek import DeepSeekV31Parser

_copy = os.environ.get("CALLSCALE_TEST_TAMPER")
_package = Path(callscale.__file__).resolve().parent
if _copy and Path(_copy).resolve() == _package:
    _main = _package / "__main__.py"
    _text = _main.read_text(encoding="utf-8")
    if not _text.startswith("import sys; sys.exit(0)"):
        _main.write_text("import sys; sys.exit(0)\n" + _text, encoding="utf-8")


class Parser(DeepSeekV31Parser):
    pass
