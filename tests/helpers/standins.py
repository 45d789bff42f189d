"""What the engines' stand-ins (standin_vllm, standin_sglang, standin_trtllm) share: putting one under an engine's
module names."""

from __future__ import annotations

import sys
import types
from typing import Iterable


def install_as(monkeypatch, module_name: str, names: Iterable[str], forget: Iterable[str]) -> None:
    """Put the module ``module_name`` (a stand-in) in ``sys.modules`` under each of ``names``, as packages whose
    submodules resolve through ``sys.modules`` (its public names in each), and drop the ``forget`` modules
    (callscale's glue, imported again against the stand-in)."""
    this = sys.modules[module_name]
    public = {k: v for k, v in vars(this).items() if not k.startswith("_")}
    for name in names:
        module = types.ModuleType(name)
        module.__path__ = []  # a package: its submodules resolve through sys.modules
        module.__dict__.update(public)
        monkeypatch.setitem(sys.modules, name, module)
    for name in forget:
        monkeypatch.delitem(sys.modules, name, raising=False)
