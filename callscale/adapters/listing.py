"""Every engine parser callscale can measure, for ``callscale parsers --engines``.

:func:`engine_rows` gives ``(parser, format, source)`` rows: the engines' known
Python classes (:data:`callscale.adapters.KNOWN_CLASSES`), SMG's tool parsers
(``smg:NAME``) and llama.cpp's chat templates (``llamacpp:TEMPLATE``). A row
that cannot run here says what to install or build first: a class in no
release (:data:`callscale.adapters.UNRELEASED`) where it is, the engine's
package (docs/engines.md, "Installing an engine's parsers"), ``callscale[smg]``,
or the llama.cpp harness (``callscale engines build llamacpp``, which needs
cmake and a C++ compiler). Nothing is imported from the engines: a package's
presence is looked up (``importlib.util.find_spec``), so listing is fast and
never fails on a broken engine install.
"""

from __future__ import annotations

import importlib.util

from . import ENGINES, KNOWN_CLASSES, UNRELEASED

__all__ = ["engine_rows"]

#: Where an engine's install recipe is (one place: docs/engines.md).
RECIPE = "docs/engines.md, \"Installing an engine's parsers\""


def _installed(package: str) -> bool:
    try:
        return importlib.util.find_spec(package) is not None
    except (ImportError, ValueError):
        return False


def engine_rows() -> list[tuple[str, str, str]]:
    """``(parser, format, source)`` for every engine parser callscale can measure; ``source`` says which
    adapter runs it and, where it cannot run here yet, what to install or build."""
    from . import llamacpp, smg

    rows = []
    present = {name: _installed(package) for name, (package, _) in ENGINES.items()}
    for target, fmt in KNOWN_CLASSES.items():
        engine = target.split(".")[0].replace("tensorrt_llm", "trtllm")
        where = f"{engine} class (adapter)"
        if target in UNRELEASED:
            where += f"; in no release: {UNRELEASED[target]}"
        elif not present.get(engine, True):
            where += f"; not installed: pip install --no-deps {ENGINES[engine][1]} ({RECIPE})"
        rows.append((target, fmt, where))
    names = smg.parser_names()  # the installed wheel's; without smg, the ones FORMATS knows
    where = "smg tool parser (gateway)" if names else f"smg tool parser (gateway; not installed: {smg.INSTALL})"
    for name in names or sorted(smg.FORMATS):
        rows.append((smg.PREFIX + name, smg.FORMATS.get(name, "?"), where))
    if llamacpp.built():
        for template in llamacpp.templates():
            rows.append((llamacpp.PREFIX + template, llamacpp.format_of(template) or "?",
                         f"llama.cpp {llamacpp.VERSION} chat template (harness)"))
    else:
        missing = llamacpp.missing_tools()
        need = f"; needs {llamacpp.INSTALL}" if missing else ""
        for template, fmt in sorted(llamacpp.FORMATS.items()):
            rows.append((llamacpp.PREFIX + template, fmt, f"llama.cpp {llamacpp.VERSION} chat template (harness not "
                                                          f"built: callscale engines build llamacpp{need})"))
    return rows
