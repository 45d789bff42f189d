"""Loading a parser class from an engine's checkout without the engine: its package roots' ``__init__`` not run.

An engine's tool-parser module (TensorRT-LLM's ``tensorrt_llm/serve/tool_parser/``,
vLLM's ``vllm/tool_parsers/``, SGLang's ``python/sglang/srt/function_call/``) is
string work, but importing it the ordinary way runs the package roots first
(``tensorrt_llm/__init__.py`` imports torch, the engine's bootstrap and its
native bindings; ``vllm/__init__.py`` imports torch and ``vllm._C``), and the
registries (``tool_parser/__init__.py`` imports every parser). On a CPU runner
none of that imports. :class:`CheckoutFinder` imports the modules of a checkout
so that:

- every package of the checkout is a namespace-like package (its folder, its
  ``__init__.py`` not run); a name the parser takes from a package itself
  (``from engine.pkg import Name``, where ``Name`` is no submodule) runs that
  ``__init__.py`` then, once;
- every module the parser imports from the checkout is the checkout's own file,
  run as it is (the parser's module, its base class, its utilities);
- the engine's logging and protocol modules (the last part of the name is one
  of :data:`STANDIN_MODULES`: ``logger``, ``logging`` (TensorRT-LLM's ``observability/logging.py``),
  ``protocol``, ``openai_protocol``),
  which pull the engine in, are stand-ins: a logger module whose ``logger`` and
  ``init_logger(name)`` give :mod:`logging`'s loggers, and a protocol module
  whose every class is a :class:`Record` (a dict read by attribute, with
  pydantic's ``model_validate`` / ``model_dump``), so ``tool.function.name``,
  ``DeltaMessage(content=...)`` and ``ToolCallItem(...)`` work;
- a compiled module of the engine that is not in the checkout
  (:data:`NATIVE_MODULES`, or one with a ``.pyi`` or a compiled file beside
  it) and the GPU-only packages (:data:`HEAVY_MODULES`: torch, triton, the
  CUDA bindings) where they are not installed are
  :mod:`callscale.adapters.gpu_stubs` stand-ins.

A pure-Python package the parser imports that is not installed here
(``partial_json_parser``, ``regex``) is named in one line with what to
install (:func:`pip_name`).

Where the checkout is (:func:`locate`), in the parser spec users write:

- ``MODULE:CLASS@FOLDER``: the checkout in ``FOLDER``;
- ``MODULE:CLASS@REV``: the commit ``REV`` of the git repository of the
  current folder; the package's folder at that commit is read with ``git
  archive`` into ``$TMPDIR/callscale-checkouts/COMMIT/`` (kept, so every child
  process and later run reads the same files);
- ``MODULE:CLASS`` alone, run from the top of an engine's checkout (the top
  package, ``tensorrt_llm``, ``vllm`` or ``sglang``, is a folder here or in
  ``python/`` or ``src/``): that checkout. ``git bisect run`` and asv work
  this way.

The package's folder is looked for at the checkout's top, then in ``python/``
(SGLang) and ``src/`` (:data:`SOURCE_ROOTS`). A class that is not where the
spec says is reported with where a class of that name is now, or which
classes the module holds (:func:`load`).
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import io
import json
import logging
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["ENGINE_PACKAGES", "SOURCE_ROOTS", "HEAVY_MODULES", "NATIVE_MODULES", "STANDIN_MODULES", "CheckoutError",
           "Checkout", "CheckoutFinder", "Record", "split", "locate", "detect", "load", "pip_name", "short_commit"]

#: The engines' top-level packages, recognised in a checkout without being told (-> callscale's engine name).
ENGINE_PACKAGES: dict[str, str] = {"tensorrt_llm": "trtllm", "vllm": "vllm", "sglang": "sglang"}
#: Where a checkout keeps its top-level package: its top, ``python/`` (SGLang), ``src/``.
SOURCE_ROOTS = ("", "python", "src")
#: GPU-only and compiled packages stood in for where they are not installed.
HEAVY_MODULES = ("torch", "triton", "tensorrt", "cuda", "cupy", "pynvml", "nvtx", "flashinfer", "sgl_kernel",
                 "deep_gemm", "vllm_flash_attn", "mpi4py", "torchvision", "torchaudio")
#: Modules of the engines that are compiled (so never in a checkout as source): stand-ins.
NATIVE_MODULES = ("tensorrt_llm.bindings", "tensorrt_llm._torch.bindings", "vllm._C", "vllm._moe_C",
                  "vllm._flashmla_C", "vllm.cumem_allocator", "sglang.srt._C")
#: The last part of the name of an engine's module that is stood in for: its logger and its protocol modules.
STANDIN_MODULES = {"logger": "logger", "logging": "logger", "protocol": "protocol", "openai_protocol": "protocol"}
#: Import names whose pip distribution is named otherwise.
PIP_NAMES = {"partial_json_parser": "partial-json-parser", "yaml": "pyyaml", "PIL": "pillow", "google": "protobuf",
             "sentencepiece": "sentencepiece", "jinja2": "jinja2", "msgspec": "msgspec", "blake3": "blake3",
             "cbor2": "cbor2", "zmq": "pyzmq", "dateutil": "python-dateutil"}


class CheckoutError(ValueError):
    """A checkout or a parser in it that cannot be used (the message is one line)."""


def pip_name(module: str) -> str:
    """The pip distribution that provides the top-level import ``module`` (``partial_json_parser`` ->
    ``partial-json-parser``)."""
    top = module.split(".")[0]
    return PIP_NAMES.get(top, top.replace("_", "-"))


def split(target: str) -> tuple[str, str | None]:
    """``"pkg.mod:Cls@where"`` -> ``("pkg.mod:Cls", "where")``; no ``@`` -> ``(target, None)``."""
    head, at, where = target.partition("@")
    return (head, where) if at else (target, None)


def _git(*args: str, cwd: Path | str | None = None, text: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=text, timeout=600)


def short_commit(folder: Path) -> str | None:
    """The short hash of the commit checked out in ``folder`` (a git work tree's top), else ``None``."""
    try:
        top = _git("rev-parse", "--show-toplevel", cwd=folder)
        if top.returncode != 0 or Path(top.stdout.strip()).resolve() != folder.resolve():
            return None
        proc = _git("rev-parse", "--short", "HEAD", cwd=folder)
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout.strip() or None if proc.returncode == 0 else None


@dataclass(frozen=True)
class Checkout:
    """An engine's checkout: ``folder`` (its top), ``source`` (the folder holding ``package``, the top-level
    package: ``folder``, ``folder/python`` or ``folder/src``) and ``label`` (a commit's short hash, else the
    folder as named)."""

    folder: Path
    source: Path
    package: str
    label: str

    def path_of(self, module: str) -> Path:
        """The file of ``module`` in the checkout (``pkg/a/b.py``), existing or not."""
        return self.source.joinpath(*module.split(".")).with_suffix(".py")

    def relative(self, path: Path) -> str:
        try:
            return path.relative_to(self.folder).as_posix()
        except ValueError:
            return str(path)


def _source_root(folder: Path, package: str) -> Path | None:
    for root in SOURCE_ROOTS:
        if (folder / root / package).is_dir():
            return folder / root if root else folder
    return None


def detect(folder: Path) -> str | None:
    """The engine whose checkout ``folder`` is (a key of :data:`callscale.adapters.ENGINES`), from its layout."""
    for package, engine in ENGINE_PACKAGES.items():
        if _source_root(folder, package) is not None:
            return engine
    return None


def _materialise(rev: str, package: str) -> Path:
    """The folder holding ``package``'s tree at commit ``rev`` of the repository here, read once with ``git
    archive`` into ``$TMPDIR/callscale-checkouts/COMMIT/`` (the commit's top). Raises :class:`CheckoutError`."""
    try:
        proc = _git("rev-parse", "--verify", "-q", f"{rev}^{{commit}}")
    except (OSError, subprocess.SubprocessError) as exc:
        raise CheckoutError(f"checkout {rev!r}: git cannot be run: {exc}") from None
    if proc.returncode != 0:
        raise CheckoutError(f"checkout {rev!r} is neither a folder nor a commit of the git repository here")
    commit = proc.stdout.strip()
    top = Path(tempfile.gettempdir()) / "callscale-checkouts" / commit
    if _source_root(top, package) is not None:
        return top
    paths = [f"{root}/{package}" if root else package for root in SOURCE_ROOTS]
    listed = _git("ls-tree", "--name-only", commit, "--", *paths, cwd=_git("rev-parse", "--show-toplevel").stdout.strip())
    found = listed.stdout.split()
    if not found:
        raise CheckoutError(f"there is no {package}/ at commit {commit[:12]} (looked in {', '.join(p + '/' for p in paths)})")
    repo = _git("rev-parse", "--show-toplevel").stdout.strip()
    archive = _git("archive", "--format=tar", commit, "--", found[0], cwd=repo, text=False)
    if archive.returncode != 0:
        raise CheckoutError(f"git archive {commit[:12]} failed: {archive.stderr.decode(errors='replace').strip()}")
    top.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f"{commit[:12]}-", dir=top.parent))
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        if hasattr(tarfile, "data_filter"):
            tar.extractall(scratch, filter="data")
        else:
            tar.extractall(scratch)
    top.mkdir(exist_ok=True)
    dest = top / found[0]
    dest.parent.mkdir(parents=True, exist_ok=True)
    try:  # another process may have put it there meanwhile: either copy is the same tree
        os.replace(scratch / found[0], dest)
    except OSError:
        pass
    shutil.rmtree(scratch, ignore_errors=True)
    return top


def _found_here(package: str) -> Path | None:
    """The checkout holding the engine ``package`` in the current folder, else in a folder of the import path
    that is no installation (``site-packages``, ``dist-packages``): the caller's folder, which callscale's
    child processes are given on their path (they run elsewhere)."""
    folders = [Path.cwd()] + [Path(p) for p in sys.path
                              if p and not any(s in p for s in ("site-packages", "dist-packages"))]
    for folder in folders:
        if folder.name in SOURCE_ROOTS[1:] and (folder / package).is_dir():  # python/ (SGLang) on the path
            return folder.parent.resolve()
        if folder.is_dir() and _source_root(folder, package) is not None:
            return folder.resolve()
    return None


def locate(module: str, where: str | None) -> Checkout | None:
    """The checkout a parser's ``module`` is loaded from (forms in the module docstring), or ``None`` when it is
    imported the ordinary way (no ``where``, and its top package is no engine's found here). Raises
    :class:`CheckoutError`."""
    package = module.split(".")[0]
    if where is None:
        if package not in ENGINE_PACKAGES:
            return None
        folder = _found_here(package)
        if folder is None:
            return None
        label = short_commit(folder) or ("." if folder == Path.cwd() else str(folder))
    elif Path(where).is_dir():
        folder = Path(where).resolve()
        label = short_commit(folder) or where
    else:
        folder = _materialise(where, package)
        label = folder.name[:12]
    source = _source_root(folder, package)
    if source is None:
        raise CheckoutError(f"there is no {package}/ in the checkout {label} (looked in "
                            f"{', '.join((r or '.') + '/' for r in SOURCE_ROOTS)})")
    return Checkout(folder, source, package, label)


# ------------------------------------------------------------------------------------------ stand-ins
def _wrap(value: Any) -> Any:
    if isinstance(value, dict) and not isinstance(value, Record):
        return Record(value)
    if isinstance(value, list):
        return [_wrap(v) for v in value]
    return value


def _plain(value: Any, exclude_none: bool) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v, exclude_none) for k, v in value.items() if not (exclude_none and v is None)}
    if isinstance(value, list):
        return [_plain(v, exclude_none) for v in value]
    return value


class Record(dict):
    """A stand-in for an engine's protocol model (pydantic): a dict whose keys read as attributes (a missing
    one is ``None``), nested dicts records too; ``Model(**fields)``, ``Model.model_validate(data)``,
    ``.model_dump(exclude_none=)`` (``.dict()``), ``.model_dump_json()``, ``.model_copy(update=)``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()
        for key, value in dict(*args, **kwargs).items():
            self[key] = _wrap(value)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return self.get(name)

    def __setattr__(self, name: str, value: Any) -> None:
        self[name] = _wrap(value)

    __hash__ = object.__hash__  # type: ignore[assignment]

    @classmethod
    def model_validate(cls, data: Any) -> "Record":
        return cls(data)

    parse_obj = model_validate

    def model_dump(self, exclude_none: bool = False, **_: Any) -> dict:
        return _plain(self, exclude_none)

    def dict(self, exclude_none: bool = False, **_: Any) -> dict:  # pydantic v1's name
        return _plain(self, exclude_none)

    def model_dump_json(self, exclude_none: bool = False, **_: Any) -> str:
        return json.dumps(self.model_dump(exclude_none), ensure_ascii=False)

    def model_copy(self, update: dict | None = None, deep: bool = False) -> "Record":
        return type(self)({**self, **(update or {})})


class _ProtocolModule(types.ModuleType):
    """An engine's protocol module stood in for: every class it is asked for is a :class:`Record` subclass."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        cls = type(name, (Record,), {"__module__": self.__name__})
        setattr(self, name, cls)
        return cls


class _LoggerModule(types.ModuleType):
    """An engine's logger module stood in for: ``logger``, ``init_logger(name)``, anything else a logger."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        if name == "init_logger":
            return logging.getLogger
        return logging.getLogger(self.__name__.split(".")[0])


class _Package(types.ModuleType):
    """A package of the checkout with its ``__init__.py`` not run: its submodules import; a name that is no
    submodule runs the ``__init__.py`` then, once (:meth:`__getattr__`)."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        folder = Path(self.__path__[0])
        init = folder / "__init__.py"
        if (folder / f"{name}.py").is_file() or (folder / name).is_dir() or self.__dict__.get("_callscale_ran") \
                or not init.is_file():
            raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")
        self.__dict__["_callscale_ran"] = True
        try:
            exec(compile(init.read_text(encoding="utf-8"), str(init), "exec"), self.__dict__)
        except ImportError:  # a module its __init__ imports is missing: said as the import's own error (what to
            raise            # install), which an AttributeError here would turn into "cannot import name"
        except Exception as exc:
            raise AttributeError(f"module {self.__name__!r} has no attribute {name!r} (its __init__.py, run for "
                                 f"it, raised {type(exc).__name__}: {exc})") from None
        if name in self.__dict__:
            return self.__dict__[name]
        raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")


class _Loader(importlib.abc.Loader):
    def __init__(self, kind: type) -> None:
        self.kind = kind

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        module = self.kind(spec.name)
        module.__callscale_checkout__ = True
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        pass


class CheckoutFinder(importlib.abc.MetaPathFinder):
    """Imports the modules of ``checkout``'s package as the module docstring says (first on ``sys.meta_path``)."""

    def __init__(self, checkout: Checkout) -> None:
        self.checkout = checkout

    def find_spec(self, fullname: str, path: Any = None, target: Any = None):
        if fullname.split(".")[0] != self.checkout.package:
            return None
        parts = fullname.split(".")
        base = self.checkout.source.joinpath(*parts)
        if len(parts) > 1 and parts[-1] in STANDIN_MODULES and not base.is_dir():
            kind = _LoggerModule if STANDIN_MODULES[parts[-1]] == "logger" else _ProtocolModule
            return importlib.machinery.ModuleSpec(fullname, _Loader(kind))
        if base.is_dir():
            spec = importlib.machinery.ModuleSpec(fullname, _Loader(_Package), is_package=True)
            spec.submodule_search_locations = [str(base)]
            return spec
        if base.with_suffix(".py").is_file():
            return importlib.util.spec_from_file_location(fullname, base.with_suffix(".py"))
        compiled = base.parent.is_dir() and any(p.name.startswith(parts[-1] + ".") and p.suffix in (".so", ".pyd", ".pyi")
                                                for p in base.parent.iterdir())
        if fullname in NATIVE_MODULES or compiled:
            from .adapters import gpu_stubs

            return importlib.machinery.ModuleSpec(fullname, gpu_stubs.StubLoader(), is_package=True)
        return None


def install(checkout: Checkout) -> None:
    """Put a :class:`CheckoutFinder` for ``checkout`` first on ``sys.meta_path`` and the GPU stand-ins
    (:data:`HEAVY_MODULES`) last; idempotent. Another checkout of the same package loaded before in this
    process is forgotten (its finder and its modules in ``sys.modules``: one package name, one checkout)."""
    from .adapters import gpu_stubs

    same = [f for f in sys.meta_path if isinstance(f, CheckoutFinder) and f.checkout.package == checkout.package]
    if not any(f.checkout == checkout for f in same):
        sys.meta_path[:] = [f for f in sys.meta_path if f not in same]
        for name in [m for m in sys.modules if m == checkout.package or m.startswith(checkout.package + ".")]:
            del sys.modules[name]
        importlib.invalidate_caches()
        sys.meta_path.insert(0, CheckoutFinder(checkout))
    gpu_stubs.install(HEAVY_MODULES)


# ------------------------------------------------------------------------------------------ loading
def _classes_in(path: Path) -> list[str]:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    return re.findall(r"^class\s+([A-Za-z_]\w*)", text, re.M)


def _where_defined(checkout: Checkout, name: str) -> list[str]:
    """The files of the checkout's package that define a class ``name`` (paths from the checkout's top)."""
    pattern = re.compile(rf"^class\s+{re.escape(name)}\b", re.M)
    found = []
    for path in sorted((checkout.source / checkout.package).rglob("*.py")):
        try:
            if pattern.search(path.read_text(encoding="utf-8", errors="replace")):
                found.append(checkout.relative(path))
        except OSError:
            continue
    return found


def _module_of(checkout: Checkout, relative: str) -> str:
    path = checkout.folder / relative
    return ".".join(path.relative_to(checkout.source).with_suffix("").parts)


def load(checkout: Checkout, module_name: str, attr: str) -> Any:
    """``module_name``'s ``attr`` (dotted) loaded from ``checkout`` (:func:`install`). Raises
    :class:`CheckoutError` in one line: the module or the class is not there (saying where a class of that
    name is now, or which classes the module holds), or a package the parser imports is not installed
    (naming what to ``pip install``), or the module raised while importing."""
    install(checkout)
    where = f"at {checkout.label}" if checkout.label != "." else "here"
    head = attr.split(".")[0]
    path = checkout.path_of(module_name)
    if not path.is_file() and not (checkout.source.joinpath(*module_name.split(".")) / "__init__.py").is_file():
        elsewhere = _where_defined(checkout, head)
        raise CheckoutError(f"{checkout.relative(path)} is not in the checkout {where}" + (
            f"; class {head} is in {', '.join(elsewhere)} (name it as {_module_of(checkout, elsewhere[0])}:{attr})"
            if elsewhere else f"; no module of {checkout.package}/ defines a class {head}"))
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        missing = exc.name or ""
        top = missing.split(".")[0]
        if top and top != checkout.package and importlib.util.find_spec(top) is None:
            raise CheckoutError(f"{module_name} imports {missing}, which is not installed here: "
                                f"pip install {pip_name(missing)}") from None
        raise CheckoutError(f"{module_name} {where}: ModuleNotFoundError: {exc}") from None
    except Exception as exc:
        raise CheckoutError(f"{module_name} {where}: {type(exc).__name__}: {' '.join(str(exc).split())}") from None
    obj: Any = module
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            elsewhere = [p for p in _where_defined(checkout, part) if p != checkout.relative(path)]
            there = [c for c in _classes_in(path) if not c.startswith("_")]
            raise CheckoutError(
                f"{part} is not in {checkout.relative(path)} {where}; " + (
                    f"found in {', '.join(elsewhere)} (name it as {_module_of(checkout, elsewhere[0])}:{attr})"
                    if elsewhere else f"classes there: {', '.join(there) or 'none'} (renamed?)")) from None
    return obj
