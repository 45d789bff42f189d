"""llama.cpp's tool-call parsing as llama-server runs it: ``--parser llamacpp:<template>``.

llama.cpp parses a model's output in C++ (``common/chat*.cpp``,
``common/peg-parser.cpp``); no Python package exposes it. llama-server, for
every streamed token, appends the token's text to the generated text,
parses all of it with ``common_chat_parse`` (the PEG parser the chat template
gives a request, ``is_partial`` true) and diffs the message with the
previous one (``task_result_state::update_chat_msg`` in
``tools/server/server-task.cpp``); the end of the stream parses once more
with ``is_partial`` false.

This adapter builds llama.cpp's ``common`` library (and the ``llama`` and
``ggml`` libraries it links; CPU only, no model) from the source in PyPI's
``llama-cpp-python`` sdist (:data:`VERSION`), together with our harness
(``llamacpp/harness.cpp``: that per-token update through llama.cpp's own
functions, behind a C interface) as one shared library loaded with ctypes.
Only the harness and its CMake file are in this repository; the sdist is
fetched with pip and everything is built under :func:`cache_folder`, once
(``callscale engines build llamacpp``, or on first use with a progress line on
standard error; several minutes on two cores).

``<template>`` is a chat template the sdist ships (``models/templates/NAME.jinja``,
:func:`templates`), or a path to a ``.jinja`` file. The request the template
is applied to: one user message, the workload's tools, ``tool_choice`` auto,
parallel tool calls, reasoning format ``deepseek`` (the server's default),
thinking off (``chat_template_kwargs`` ``enable_thinking`` false: the
workloads hold no reasoning block, and a thinking template's generation
prompt would open one, making the whole output reasoning).
The workloads are rendered in the callscale format of :data:`FORMATS` (else
``--workload-format`` names one).

Each ``parse_streaming_increment(delta, tools)`` is one server update; its
diffs become the result (content, reasoning, per call its index, the name when
the diff carries one, the arguments' new text), so ``wrong output`` and
``check`` judge what a client of llama-server would get. ``finish`` is the
server's final update (no text, ``is_partial`` false); ``detect_and_parse`` its
non-streaming path (the whole text in one final update). An update llama.cpp
throws on raises :class:`LlamaCppError` (the server fails the request).

Under ``--meter instructions`` only the update itself is counted (append,
``common_chat_parse``, ids, ``compute_diffs``): the factory's
``callscale_collect`` replaces the meter's counting toggle for the stream,
and the harness then brackets each update with callgrind's
``CALLGRIND_TOGGLE_COLLECT`` (what ``--toggle-collect`` on that function does;
the meter's own toggles are client requests too, and two toggles on one
function would cancel). Turning the diffs into JSON and Python objects is not
counted. Under the time meter a delta costs the whole call (ctypes, the
update, the JSON back).

Errors: :func:`unavailable` gives the one-line reason the adapter cannot run
here (no C++ compiler, CMake or pip download; a template that is not
shipped), which the command line prints before exiting 2.
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path
from typing import Any, Callable

from ..parsers.base import StreamingParseResult, ToolCallItem

__all__ = ["PREFIX", "VERSION", "INSTALL", "FORMATS", "LlamaCppError", "cache_folder", "library_path", "built",
           "missing_tools", "build", "templates", "template_source", "unavailable", "factory", "format_of"]

PREFIX = "llamacpp:"
#: The llama-cpp-python sdist whose ``vendor/llama.cpp`` is built.
VERSION = "0.3.36"
#: What the harness is built from, in words (``callscale engines status llamacpp``).
SOURCE = f"llama-cpp-python {VERSION}"
#: What the build needs, in one line.
INSTALL = "cmake (3.14 or newer) and a C++17 compiler (apt-get install cmake g++)"
HERE = Path(__file__).with_name("llamacpp")
LIBRARY = "libcallscale_llamacpp.so"

#: The shipped templates whose output callscale renders (template stem -> callscale format).
FORMATS: dict[str, str] = {
    "Qwen3-Coder": "qwen3_coder", "Qwen-Qwen3-0.6B": "qwen3", "Qwen-Qwen2.5-7B-Instruct": "qwen3",
    "deepseek-ai-DeepSeek-V3.1": "deepseek_v31", "deepseek-ai-DeepSeek-V3.2": "deepseek_v32",
    "deepseek-ai-DeepSeek-V4": "deepseek_v4", "Kimi-K2-Instruct": "kimi_k2", "moonshotai-Kimi-K2": "kimi_k2",
    "Kimi-K3": "kimi_k3", "GLM-4.6": "glm45", "GLM-4.7-Flash": "glm47", "MiniMax-M2": "minimax_m2",
    "MiniMax-M3": "minimax_m3", "google-gemma-4-31B-it": "gemma4", "openai-gpt-oss-120b": "gpt_oss",
    "meta-llama-Llama-3.1-8B-Instruct": "llama3_json", "meta-llama-Llama-3.2-3B-Instruct": "llama3_json",
    "meta-llama-Llama-3.3-70B-Instruct": "llama3_json", "openbmb-MiniCPM5-1B": "minicpm5",
    "muse-glimmer": "muse_glimmer",
    "NVIDIA-Nemotron-3-Nano-30B-A3B-BF16": "qwen3_coder",
}


class LlamaCppError(RuntimeError):
    """llama.cpp threw while parsing (the message is its exception's), or the harness cannot be loaded."""


def cache_folder() -> Path:
    """Where the sdist, its source and the build live: ``$CALLSCALE_CACHE`` or ``$XDG_CACHE_HOME/callscale``
    or ``~/.cache/callscale``, then ``llamacpp/VERSION``."""
    root = os.environ.get("CALLSCALE_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "callscale")
    return Path(root) / "llamacpp" / VERSION


def _source() -> Path:
    return cache_folder() / "src" / "vendor" / "llama.cpp"


def library_path() -> Path:
    return cache_folder() / "build" / LIBRARY


def _stamp() -> str:
    """A hash of our harness and CMake file: the library is rebuilt when either changes."""
    digest = hashlib.sha256()
    for name in ("CMakeLists.txt", "harness.cpp"):
        digest.update((HERE / name).read_bytes())
    return digest.hexdigest()[:16]


def built() -> bool:
    """True when the library exists and was built from the current harness."""
    stamp = cache_folder() / "build" / "callscale.stamp"
    return library_path().is_file() and stamp.is_file() and stamp.read_text().strip() == _stamp()


def missing_tools() -> list[str]:
    """The build tools not found on ``PATH`` (``cmake``, a C++ compiler)."""
    missing = [] if shutil.which("cmake") else ["cmake"]
    if not (os.environ.get("CXX") or shutil.which("c++") or shutil.which("g++") or shutil.which("clang++")):
        missing.append("a C++ compiler")
    return missing


def _run(cmd: list[str], log: Path, what: str) -> None:
    with open(log, "ab") as out:
        out.write(f"$ {' '.join(cmd)}\n".encode())
        out.flush()
        done = subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT)
    if done.returncode != 0:
        tail = log.read_text(errors="replace").strip().splitlines()[-3:]
        raise LlamaCppError(f"{what} failed (exit {done.returncode}; log {log}): {' | '.join(tail)}")


def _sdist(folder: Path, say: Callable[[str], None]) -> Path:
    found = sorted(folder.glob(f"llama_cpp_python-{VERSION}.tar.gz"))
    if found:
        return found[0]
    say(f"downloading the llama-cpp-python {VERSION} sdist with pip")
    # --no-binary for this one package only: pip prepares the sdist's metadata in a build environment, and with
    # ":all:" it built that environment's tools (scikit-build-core, cmake, ninja) from source too (6 minutes)
    _run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", "llama-cpp-python",
          f"llama-cpp-python=={VERSION}", "-d", str(folder)], folder / "build.log", "pip download of the sdist")
    found = sorted(folder.glob(f"llama_cpp_python-{VERSION}.tar.gz"))
    if not found:
        raise LlamaCppError(f"pip left no llama_cpp_python-{VERSION}.tar.gz in {folder}")
    return found[0]


def _forget_other_source(build_folder: Path) -> None:
    """Drop a CMake cache that another copy of callscale configured (another checkout, a virtualenv, a worktree:
    the harness's CMakeLists.txt at another path), which CMake would refuse ("does not match the source ... used
    to generate cache"); the compiled objects stay, so only what changed is compiled again."""
    cache = build_folder / "CMakeCache.txt"
    if not cache.is_file():
        return
    for line in cache.read_text(errors="replace").splitlines():
        if line.startswith("CMAKE_HOME_DIRECTORY:"):
            if Path(line.split("=", 1)[1]).resolve() != HERE.resolve():
                cache.unlink()
                shutil.rmtree(build_folder / "CMakeFiles", ignore_errors=True)
            return


def build(say: Callable[[str], None] | None = None, jobs: int = 2) -> float:
    """Fetch the sdist (pip), unpack it, configure and build the harness library; returns the seconds taken.

    Incremental: a second call after a change of the harness recompiles the
    harness alone. ``say``: progress lines (default: to standard error).
    Raises :class:`LlamaCppError` with the failing step and the log's path.
    """
    say = say or (lambda text: print(f"callscale: llama.cpp: {text}", file=sys.stderr, flush=True))
    missing = missing_tools()
    if missing:
        raise LlamaCppError(f"cannot build llama.cpp: {' and '.join(missing)} not found; install {INSTALL}")
    start = time.monotonic()
    folder = cache_folder()
    folder.mkdir(parents=True, exist_ok=True)
    archive = _sdist(folder, say)
    if not (_source() / "common" / "chat.cpp").is_file():
        say(f"unpacking {archive.name}")
        partial = folder / "src.partial"
        shutil.rmtree(partial, ignore_errors=True)
        with tarfile.open(archive) as tar:
            tar.extractall(partial, filter="data")
        (next(partial.iterdir())).rename(folder / "src")
        shutil.rmtree(partial, ignore_errors=True)
    log = folder / "build.log"
    say(f"building llama.cpp's common library and the harness in {folder / 'build'} with -j{jobs} "
        f"(several minutes on two cores; log {log})")
    _forget_other_source(folder / "build")
    _run(["cmake", "-S", str(HERE), "-B", str(folder / "build"), f"-DLLAMA_CPP_SOURCE={_source()}",
          "-DCMAKE_BUILD_TYPE=Release", "-DGGML_CCACHE=OFF"], log, "cmake configure")
    _run(["cmake", "--build", str(folder / "build"), "--target", "callscale_llamacpp", f"-j{jobs}"], log,
         "cmake build")
    (folder / "build" / "callscale.stamp").write_text(_stamp() + "\n")
    seconds = time.monotonic() - start
    say(f"built {library_path()} in {seconds:.0f} s")
    return seconds


def templates() -> list[str]:
    """The chat templates the unpacked sdist ships (``models/templates/*.jinja`` stems); ``[]`` before the build."""
    return sorted(p.stem for p in (_source() / "models" / "templates").glob("*.jinja"))


def template_source(template: str) -> str:
    """The text of a shipped template (its stem) or of a ``.jinja`` file; :class:`LlamaCppError` when neither."""
    path = Path(template)
    if not (template.endswith(".jinja") and path.is_file()):
        path = _source() / "models" / "templates" / f"{template}.jinja"
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        shipped = templates()
        raise LlamaCppError(f"no chat template {template!r}; the sdist ships "
                            + (", ".join(shipped) if shipped else "none (not unpacked)")) from None


def _stem(template: str) -> str:
    """A template's name: its file name without ``.jinja`` (``GLM-4.7-Flash`` keeps its dots)."""
    name = Path(template).name
    return name[:-len(".jinja")] if name.endswith(".jinja") else name


def format_of(template: str) -> str | None:
    """The callscale format a template's output is rendered in (:data:`FORMATS`), else ``None``."""
    return FORMATS.get(_stem(template))


def unavailable(selection: str, fmt: str | None, build_now: bool = True) -> str | None:
    """Why ``selection`` (``llamacpp:<template>``) cannot be measured here, in one line; ``None`` when it can.

    With ``build_now`` the library is built first if it is missing (progress on
    standard error), when the tools are there.
    """
    template = selection[len(PREFIX):]
    if not template:
        return f"parser {selection!r}: name a chat template, llamacpp:<template> (e.g. llamacpp:Qwen3-Coder)"
    if not built():
        missing = missing_tools()
        if missing:
            return (f"parser {selection!r}: building llama.cpp needs {' and '.join(missing)}, not found; "
                    f"install {INSTALL}, then run `callscale engines build llamacpp`")
        if not build_now:
            return f"parser {selection!r}: llama.cpp is not built; run `callscale engines build llamacpp`"
        try:
            build()
        except LlamaCppError as exc:
            return f"parser {selection!r}: {exc}"
    try:
        template_source(template)
    except LlamaCppError as exc:
        return f"parser {selection!r}: {exc}"
    if not (fmt or format_of(template)):
        return (f"parser {selection!r}: which callscale format the template writes is not known; "
                "name it with --workload-format")
    return None


_LIB: Any = None


def _library() -> Any:
    global _LIB
    if _LIB is None:
        try:
            lib = ctypes.CDLL(str(library_path()))
        except OSError as exc:
            raise LlamaCppError(f"the llama.cpp harness cannot be loaded: {exc}; run "
                                "`callscale engines build llamacpp`") from None
        lib.callscale_llamacpp_params_new.restype = ctypes.c_void_p
        lib.callscale_llamacpp_params_new.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p,
                                                      ctypes.c_int]
        lib.callscale_llamacpp_params_info.restype = ctypes.c_char_p
        lib.callscale_llamacpp_params_info.argtypes = [ctypes.c_void_p]
        lib.callscale_llamacpp_stream_new.restype = ctypes.c_void_p
        lib.callscale_llamacpp_stream_new.argtypes = [ctypes.c_void_p]
        lib.callscale_llamacpp_stream_free.restype = None
        lib.callscale_llamacpp_stream_free.argtypes = [ctypes.c_void_p]
        lib.callscale_llamacpp_feed.restype = ctypes.c_char_p
        lib.callscale_llamacpp_feed.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_int]
        lib.callscale_llamacpp_counting.restype = None
        lib.callscale_llamacpp_counting.argtypes = [ctypes.c_int]
        _LIB = lib
    return _LIB


class _Params:
    """One template applied to one tool list (kept for the process: the server does this once a request)."""

    def __init__(self, source: str, tools: list) -> None:
        self.lib = _library()
        self.handle = self.lib.callscale_llamacpp_params_new(
            source.encode("utf-8"), json.dumps(list(tools or [])).encode("utf-8"), b"deepseek", 0)
        self.info = json.loads(self.lib.callscale_llamacpp_params_info(self.handle).decode("utf-8"))
        if "error" in self.info:
            raise LlamaCppError(f"applying the chat template failed: {self.info['error']}")


class LlamaCppParser:
    """One llama-server stream (see the module docstring); made by :func:`factory`'s class."""

    template: str = ""
    _source: str = ""
    _params: dict[str, _Params] = {}

    def __init__(self) -> None:
        self._stream = None
        self._lib = _library()

    def _open(self, tools: list) -> None:
        key = json.dumps(list(tools or []), sort_keys=True)
        params = self._params.get(key)
        if params is None:
            params = self._params[key] = _Params(self._source, tools)
        self._keep = params  # the stream reads the parameters: keep them alive with it
        self._stream = self._lib.callscale_llamacpp_stream_new(params.handle)

    def _update(self, text: str, partial: bool, tools: list) -> StreamingParseResult:
        if self._stream is None:
            self._open(tools)
        data = text.encode("utf-8")
        answer = json.loads(self._lib.callscale_llamacpp_feed(self._stream, data, len(data), int(partial)))
        if isinstance(answer, dict):
            raise LlamaCppError(f"llama.cpp: {answer.get('error', '').strip()}")
        result = StreamingParseResult()
        content, reasoning = [], []
        for reasoning_delta, content_delta, index, name, arguments in answer:
            reasoning.append(reasoning_delta)
            content.append(content_delta)
            if index >= 0:
                result.calls.append(ToolCallItem(tool_index=index, name=name or None, parameters=arguments))
        result.normal_text, result.reasoning_text = "".join(content), "".join(reasoning)
        return result

    def parse_streaming_increment(self, new_text: str, tools: list) -> StreamingParseResult:
        """One server update with ``new_text`` appended (``is_partial`` true); the diffs as a result."""
        return self._update(new_text, True, tools)

    def finish(self, tools: list) -> StreamingParseResult:
        """The server's final update (no new text, ``is_partial`` false)."""
        return self._update("", False, tools)

    def detect_and_parse(self, text: str, tools: list) -> StreamingParseResult:
        """The server's non-streaming path: one update of a fresh stream with the whole text, ``is_partial``
        false."""
        whole = type(self)()
        return whole._update(text, False, tools)

    def __del__(self) -> None:
        if getattr(self, "_stream", None):
            self._lib.callscale_llamacpp_stream_free(self._stream)
            self._stream = None


def _counting() -> Callable[[], None]:
    """The meter's counting toggle for these parsers: each call flips whether the harness brackets its
    updates with callgrind's collect toggles."""
    state = [0]

    def collect() -> None:
        state[0] ^= 1
        _library().callscale_llamacpp_counting(state[0])

    return collect


def factory(template: str) -> type:
    """A parser class for ``template`` (a shipped template's stem or a ``.jinja`` path); its instances are fresh
    streams. :class:`LlamaCppError` when the template cannot be read or the library cannot be loaded."""
    source = template_source(template)
    _library()
    return type(f"LlamaCpp[{_stem(template)}]", (LlamaCppParser,),
                {"template": template, "_source": source, "_params": {},
                 "callscale_collect": staticmethod(_counting())})


def subject(selection: str, fmt: str | None, check_format: Callable[[str | None, str], str]) -> tuple[str, type]:
    """``(format, parser class)`` for the selection ``llamacpp:<template>`` (the library built first if needed):
    an in-process subject (:class:`callscale.adapters.protocol.InProcess`). ``check_format(fmt, selection)``
    checks the format against the renderers. :class:`callscale.adapters.protocol.AdapterError` (one line) when it
    cannot be used here."""
    from .protocol import AdapterError

    reason = unavailable(selection, fmt)
    if reason:
        raise AdapterError(reason)
    template = selection[len(PREFIX):]
    fmt = check_format(fmt or format_of(template), selection)
    try:
        return fmt, factory(template)
    except LlamaCppError as exc:
        raise AdapterError(f"parser {selection!r}: {exc}") from None
