"""Stand-in modules for the GPU-only packages an engine imports (``torch``, ``triton``).

An engine's tool-parser modules (vLLM, SGLang, TensorRT-LLM) import ``torch``
and ``triton`` at import time, through their package's ``__init__`` and
utility modules, but no parser calls into them: parsing tool calls is string
work. On a CI runner without CUDA those packages are missing (or a
multi-gigabyte download), so the parser's module does not import. These
stand-ins let it import:

- :func:`install` puts a finder at the *end* of ``sys.meta_path``: a package
  that is really installed is still imported as it is; only a missing
  ``torch``, ``triton`` (or another name given) and its submodules come from
  here.
- A stand-in module answers every attribute with a stand-in class: it can be
  subclassed (``class M(torch.nn.Module)``), used in annotations
  (``torch.Tensor | None``), compared, hashed and called. A call with one
  callable and no other argument returns that callable, so decorators
  (``@torch.compile``, ``@triton.jit``, ``@torch.inference_mode()``) leave the
  function as it is; any other call returns a falsy stand-in, so
  ``torch.cuda.is_available()`` is false. ``__version__`` is
  :data:`VERSION`. Stand-ins (classes and values) also take item access
  and assignment (``torch._inductor.config._config[key] = value``, vLLM
  0.33 ``vllm/env_override.py``) and arithmetic and bitwise operators; a
  reflected one gives the other operand back (``"name" + schema`` is
  ``"name"``, vLLM 0.33 ``vllm/utils/torch_utils.py``), and ``|`` on a
  stand-in class stays a union (``torch.Tensor | None``). ``torch``'s
  dtypes carry their real ``itemsize`` (:data:`DTYPE_SIZES`; vLLM 0.34
  checks it at import), and ``torch.Tensor`` has ``__dlpack_c_exchange_api__``
  (``None``), so xgrammar's ``tvm_ffi`` does not try to compile a torch
  extension at import. With
  ``--module xgrammar`` too, every tool parser vLLM 0.33 registers, and
  ``vllm.parser.harmony``, imports (``tests/adapters/test_adapters.py``).

A parser that really computes with torch (a tensor op) gets stand-ins back
and will not parse; that is the engine's model code, not a tool parser.

Three ways to turn them on:

- ``python -m callscale.adapters.gpu_stubs install`` writes
  ``callscale_gpu_stubs.pth`` into the interpreter's ``site-packages``, so
  every later Python process of that environment has them: ``callscale``,
  its worker processes and the ``--meter instructions`` child (which reads the
  virtualenv's ``.pth`` files through ``site.addsitedir``). ``uninstall``
  removes the file; ``--module NAME`` (repeatable, before or after the
  action: ``install --module xgrammar``) adds names to the default
  ``torch``, ``triton``.
- ``python -m callscale.adapters.gpu_stubs run -- COMMAND ...`` runs one
  command (``callscale gate ...``) with the stand-ins on, without writing to
  site-packages: it puts a folder holding the ``.pth``-equivalent
  ``sitecustomize`` on ``PYTHONPATH``; the instruction meter's child does
  not inherit ``PYTHONPATH``, so use ``install`` with ``--meter
  instructions``.
- ``import callscale.adapters.gpu_stubs as s; s.install()`` in your own code
  (a conftest, a factory) before importing the engine.

See docs/ci.md for the CI recipe that uses it.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import os
import subprocess
import sys
import sysconfig
import tempfile
import types
from pathlib import Path
from typing import Any, Iterable, Sequence

__all__ = ["DEFAULT_MODULES", "VERSION", "PTH_NAME", "install", "uninstall_finder", "is_stub", "main", "StubLoader"]

#: The packages stood in for by default.
DEFAULT_MODULES = ("torch", "triton")
#: ``__version__`` of every stand-in package (engines compare it with minimum versions).
VERSION = "2.9.0+callscale.stub"
#: The file ``install`` writes into site-packages.
PTH_NAME = "callscale_gpu_stubs.pth"


def _same(self: Any, *args: Any) -> Any:
    """An operator whose stand-in result is the stand-in itself (``stub + 1``, ``-stub``, ``stub | x``)."""
    return self


def _other(self: Any, other: Any) -> Any:
    """A reflected operator: ``str + stub`` is the string, ``1 + stub`` the number (the stand-in adds nothing)."""
    return other


def _set(self: Any, key: Any, value: Any) -> None:
    """Item assignment and deletion on a stand-in do nothing (``torch._inductor.config._config[k] = v``)."""


#: Operators every stand-in (class or value) answers: item access and assignment, arithmetic, bitwise.
_OPERATORS: dict[str, Any] = {
    "__getitem__": lambda self, key: _Stub(),
    "__setitem__": _set,
    "__delitem__": lambda self, key: None,
    "__contains__": lambda self, item: False,
    **{f"__{op}__": _same for op in ("add", "sub", "mul", "matmul", "truediv", "floordiv", "mod", "pow", "lshift",
                                     "rshift", "and", "xor", "or", "neg", "pos", "invert")},
    **{f"__r{op}__": _other for op in ("add", "sub", "mul", "matmul", "truediv", "floordiv", "mod", "pow",
                                       "lshift", "rshift", "and", "xor", "or")},
}


class _StubMeta(type):
    """The type of every stand-in class: attribute access and calls give more stand-ins."""

    # ``|`` stays type's: ``torch.Tensor | None`` is a union, as annotations expect
    locals().update({k: v for k, v in _OPERATORS.items() if k not in ("__or__", "__ror__")})

    def __getattr__(cls, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return _stub_class(f"{cls.__qualname__}.{name}", cls.__module__)

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        if len(args) == 1 and not kwargs and callable(args[0]) and not isinstance(args[0], _StubMeta):
            return args[0]  # used as a decorator
        return _Stub()

    def __bool__(cls) -> bool:
        return True

    def __iter__(cls):
        return iter(())


class _Stub:
    """A stand-in value (what calling a stand-in returns): falsy, empty, permissive."""

    locals().update(_OPERATORS)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return _Stub()

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if len(args) == 1 and not kwargs and callable(args[0]) and not isinstance(args[0], _Stub):
            return args[0]
        return _Stub()

    def __bool__(self) -> bool:
        return False

    def __iter__(self):
        return iter(())

    def __len__(self) -> int:
        return 0

    def __enter__(self) -> "_Stub":
        return self

    def __exit__(self, *exc: Any) -> bool:
        return False

    def __repr__(self) -> str:
        return "<callscale GPU stand-in>"


def _stub_class(qualname: str, module: str) -> type:
    return _StubMeta(qualname.rsplit(".", 1)[-1], (), {"__qualname__": qualname, "__module__": module})


#: ``torch``'s dtypes -> their ``itemsize`` in bytes: vLLM 0.34 checks at import that
#: ``array.array(typecode).itemsize == torch.int32.itemsize`` (``vllm/utils/torch_utils.py``), so the
#: stand-in dtypes carry the real sizes.
DTYPE_SIZES: dict[str, int] = {
    "bool": 1, "uint8": 1, "int8": 1, "float8_e4m3fn": 1, "float8_e5m2": 1,
    "int16": 2, "uint16": 2, "float16": 2, "half": 2, "bfloat16": 2, "short": 2,
    "int32": 4, "uint32": 4, "float32": 4, "float": 4, "int": 4,
    "int64": 8, "uint64": 8, "float64": 8, "double": 8, "long": 8, "complex64": 8, "complex128": 16,
}


class _StubModule(types.ModuleType):
    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        value = _stub_class(name, self.__name__)
        if self.__name__ == "torch" and name in DTYPE_SIZES:
            type.__setattr__(value, "itemsize", DTYPE_SIZES[name])
        if self.__name__ == "torch" and name == "Tensor":
            # tvm_ffi (xgrammar 0.2.8's, vLLM 0.34) compiles a torch extension with the system compiler at
            # import unless the tensor class already has this attribute: with the stand-in, no compiler runs
            type.__setattr__(value, "__dlpack_c_exchange_api__", None)
        setattr(self, name, value)  # the same object on every access (isinstance, dict keys)
        return value


class StubLoader(importlib.abc.Loader):
    """Makes a stand-in module (:class:`_StubModule`) for any name it is given (a finder's spec names it)."""

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        module = _StubModule(spec.name)
        module.__version__ = VERSION
        module.__callscale_stub__ = True
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        pass


class _Finder(importlib.abc.MetaPathFinder):
    def __init__(self, names: Iterable[str]) -> None:
        self.names = set(names)

    def find_spec(self, fullname: str, path: Any = None, target: Any = None):
        if fullname.partition(".")[0] not in self.names:
            return None
        return importlib.machinery.ModuleSpec(fullname, StubLoader(), is_package=True)


def install(modules: Sequence[str] = DEFAULT_MODULES) -> None:
    """Stand in for ``modules`` (top-level names) where they are not installed; idempotent.

    The finder goes last on ``sys.meta_path``, so an installed package wins.
    """
    for finder in sys.meta_path:
        if isinstance(finder, _Finder):
            finder.names.update(modules)
            return
    sys.meta_path.append(_Finder(modules))


def uninstall_finder() -> None:
    """Take the finder off ``sys.meta_path`` (stand-in modules already imported stay in ``sys.modules``)."""
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, _Finder)]


def is_stub(module: types.ModuleType) -> bool:
    """True when ``module`` is one of these stand-ins."""
    return bool(getattr(module, "__callscale_stub__", False))


def _line(modules: Sequence[str]) -> str:
    return f"import callscale.adapters.gpu_stubs as _s; _s.install({list(modules)!r})\n"


def _site_packages() -> Path:
    return Path(sysconfig.get_paths()["purelib"])


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m callscale.adapters.gpu_stubs install|uninstall|run -- CMD``; exit 2 on a bad option."""
    from callscale.config import ArgumentParser  # one-line errors, exit 2

    p = ArgumentParser(prog="python -m callscale.adapters.gpu_stubs",
                       description="Stand-in modules for torch/triton on a machine without a GPU.")
    p.add_argument("action", choices=["install", "uninstall", "run"],
                   help="install: write a .pth into this interpreter's site-packages; uninstall: remove it; "
                        "run -- CMD ...: run one command with the stand-ins")
    p.add_argument("--module", action="append", default=[], metavar="NAME",
                   help="another top-level package to stand in for (repeatable); torch and triton always")
    p.add_argument("command", nargs="*", help="for run: the command, after --")
    # the options may come before or after the action (`install --module xgrammar`); what follows
    # `--` is run's command, untouched
    argv = list(sys.argv[1:] if argv is None else argv)
    cut = argv.index("--") if "--" in argv else len(argv)
    args = p.parse_args(argv[:cut])
    modules = list(dict.fromkeys([*DEFAULT_MODULES, *args.module]))
    command = [*args.command, *argv[cut + 1:]]
    if args.action != "run" and command:
        p.error(f"unexpected arguments for {args.action}: {' '.join(command)}")
    if args.action == "run":
        if not command:
            p.error("run needs a command after --")
        with tempfile.TemporaryDirectory(prefix="callscale-gpu-stubs-") as folder:
            Path(folder, "sitecustomize.py").write_text(_line(modules))
            env = dict(os.environ)
            env["PYTHONPATH"] = os.pathsep.join(filter(None, [folder, env.get("PYTHONPATH")]))
            try:
                return subprocess.call(command, env=env)
            except OSError as exc:
                p.error(f"cannot run {command[0]}: {exc.strerror or exc}")
    target = _site_packages() / PTH_NAME
    try:
        if args.action == "install":
            target.write_text(_line(modules))
            print(f"GPU stand-ins for {', '.join(modules)}: wrote {target}")
        else:
            target.unlink(missing_ok=True)
            print(f"removed {target}")
    except OSError as exc:
        p.error(f"cannot write {target}: {exc.strerror or exc}")
    return 0


def _own_package() -> None:
    """Read ``callscale`` from the package this file belongs to. ``python -m`` puts the working directory first
    on ``sys.path``: there a folder named ``callscale`` (a clone of the repository) is a namespace package that
    shadows the installed one (``from callscale.cli import ...`` then fails). A no-op otherwise."""
    package = sys.modules.get("callscale")
    if package is None or getattr(package, "__file__", None) is not None:
        return
    root = str(Path(__file__).resolve().parents[2])
    cwd = os.getcwd()
    sys.path[:] = [root] + [p for p in sys.path if p not in ("", cwd, root)]
    for name in [m for m in sys.modules if m == "callscale" or m.startswith("callscale.")]:
        del sys.modules[name]


if __name__ == "__main__":
    _own_package()
    sys.exit(main())
