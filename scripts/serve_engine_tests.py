"""An engine's own tool-parser tests, run with callscale's parser substituted (and as they are, for reference).

Run it where the engine is installed (docs/serving.md), on test files read
from the engine's repository (not shipped here)::

    python scripts/serve_engine_tests.py --format kimi_k2 \\
        PATH/TO/vllm/tests/tool_parsers/test_kimi_k2_tool_parser.py
    python scripts/serve_engine_tests.py --engine sglang \\
        PATH/TO/sglang/test/registered/function_call/test_function_call_parser.py

Each file is run twice under pytest: ``engine`` (the engine's own parser)
and ``callscale`` (the engine's parser class for the format, as its test
module imports it and as the engine's registry names it, replaced by
callscale's class for the format).

- vLLM (``--format`` required): ``callscale.serve.vllm``'s class replaces
  vLLM's classes of the format (:data:`callscale.adapters.KNOWN_CLASSES`)
  and their ``ToolParserManager`` entries. Both runs get the same
  tokenizer: the tests load the model's tokenizer from the Hugging Face
  hub, which is not reachable offline, so ``vllm.tokenizers.get_tokenizer``
  and ``transformers.AutoTokenizer.from_pretrained`` return
  :class:`RoundTripTokenizer` (the format's special tokens whole, one id a
  character of other text, encode/decode inverse).
- SGLang (``--format`` optional: every format when left out):
  ``callscale.serve.sglang``'s detector replaces each SGLang detector class
  of a callscale format, in its module and in
  ``FunctionCallParser.ToolCallParserEnum``. A test is counted under the
  formats whose detector it constructed (either run); one that constructs
  none is counted under ``-``.

Prints passed / failed per file, run and format and, for callscale's run,
each failing test with the first line of its error, marked ``also engine``
when the engine's own parser fails it too. Exit 0.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, Sequence

import pytest

FIRST_SPECIAL_ID = 200_000


class RoundTripTokenizer:
    """A Hugging Face-like tokenizer for ``fmt``: special tokens whole, other text one id a character.

    ``all_special_tokens``: the tokens the model marks special
    (:data:`callscale.tokenizers.MODEL_SPECIAL`). ``decode(encode(t)) == t``.
    """

    def __init__(self, fmt: str) -> None:
        import re

        from callscale import tokenizers
        from callscale.workloads import render

        tokens = list(dict.fromkeys(render.get(fmt).special_tokens))
        self.special = {t: FIRST_SPECIAL_ID + i for i, t in enumerate(tokens)}
        self._by_id = {i: t for t, i in self.special.items()}
        ordered = sorted(tokens, key=len, reverse=True)
        self._split = re.compile("(" + "|".join(map(re.escape, ordered)) + ")").split
        self.all_special_tokens = [t for t in tokens if t in set(tokenizers.MODEL_SPECIAL.get(fmt, ()))]
        self.all_special_ids = [self.special[t] for t in self.all_special_tokens]
        self.eos_token, self.eos_token_id = None, None
        self.name_or_path = f"callscale-roundtrip-{fmt}"

    def get_vocab(self) -> dict[str, int]:
        return dict(self.special)

    @property
    def vocab(self) -> dict[str, int]:
        return self.get_vocab()

    def __len__(self) -> int:
        return FIRST_SPECIAL_ID + len(self.special)

    def tokenize(self, text: str, **_: Any) -> list[str]:
        out: list[str] = []
        for piece in self._split(text):
            if piece in self.special:
                out.append(piece)
            else:
                out.extend(piece)
        return out

    def encode(self, text: str, add_special_tokens: bool = False, **_: Any) -> list[int]:
        return [self.special.get(t, ord(t[0]) if len(t) == 1 else 0) for t in self.tokenize(text)]

    def decode(self, ids: Any, skip_special_tokens: bool = False, **_: Any) -> str:
        ids = [ids] if isinstance(ids, int) else ids
        return "".join(self._by_id[i] if i in self._by_id else chr(i) for i in ids
                       if not (skip_special_tokens and i in self._by_id))

    def convert_tokens_to_ids(self, tokens: Any) -> Any:
        if isinstance(tokens, str):
            return self.special.get(tokens, ord(tokens) if len(tokens) == 1 else None)
        return [self.convert_tokens_to_ids(t) for t in tokens]

    def convert_ids_to_tokens(self, ids: Any, skip_special_tokens: bool = False) -> Any:
        if isinstance(ids, int):
            return self._by_id.get(ids, chr(ids))
        return [self.convert_ids_to_tokens(i) for i in ids]


#: The test being run (its pytest node id) and, per node id, the callscale formats whose detector it built.
CURRENT: dict[str, Any] = {"nodeid": None, "formats": {}}


def _seen(fmt: str) -> None:
    if CURRENT["nodeid"] is not None:
        CURRENT["formats"].setdefault(CURRENT["nodeid"], set()).add(fmt)


class Substitute:
    """pytest plugin: with ``ours``, callscale's class for the format(s) in place of the engine's.

    vLLM: the tokenizer stand-in in both runs. SGLang: records which formats' detectors each test builds.
    """

    def __init__(self, engine: str, fmt: str | None, ours: bool) -> None:
        self.engine, self.fmt, self.ours = engine, fmt, ours
        self.results: dict[str, tuple[str, str]] = {}

    def pytest_configure(self, config: Any) -> None:
        if self.engine == "sglang":
            self._configure_sglang()
        else:
            self._configure_vllm()

    def _configure_vllm(self) -> None:
        import transformers

        import vllm.tokenizers
        from callscale import adapters

        tokenizer = RoundTripTokenizer(self.fmt)
        vllm.tokenizers.get_tokenizer = lambda *a, **k: tokenizer
        transformers.AutoTokenizer.from_pretrained = staticmethod(lambda *a, **k: tokenizer)
        if not self.ours:
            return
        import importlib

        import callscale.serve.vllm as serve_vllm
        from callscale.serve import engine_name
        from vllm.tool_parsers import ToolParserManager

        ours = serve_vllm.PARSERS[engine_name(self.fmt)]
        for target, fmt in adapters.KNOWN_CLASSES.items():
            if fmt != self.fmt or not target.startswith("vllm.tool_parsers."):
                continue
            module_name, cls_name = target.split(":")
            try:
                module = importlib.import_module(module_name)
            except Exception:
                continue
            engine_cls = getattr(module, cls_name, None)
            setattr(module, cls_name, ours)
            for name, (path, lazy_cls) in list(ToolParserManager.lazy_parsers.items()):
                if (path, lazy_cls) == (module_name, cls_name) or ToolParserManager.tool_parsers.get(name) is engine_cls:
                    ToolParserManager.tool_parsers[name] = ours

    def _configure_sglang(self) -> None:
        import importlib
        import types
        import unittest

        try:  # CustomTestCase (unittest.TestCase with retries) comes with SGLang's benchmark imports
            import sglang.test.test_utils  # noqa: F401
        except ImportError:  # (``datasets`` and more): a plain TestCase in its place
            stub = types.ModuleType("sglang.test.test_utils")
            stub.CustomTestCase = unittest.TestCase
            sys.modules["sglang.test.test_utils"] = stub

        from callscale import adapters
        from callscale.serve import engine_name
        from sglang.srt.function_call.function_call_parser import FunctionCallParser

        enum = FunctionCallParser.ToolCallParserEnum
        import transformers

        # the tests that load a model's tokenizer from the hub (offline here): the stand-in, per model name
        def from_pretrained(name: Any, *args: Any, **kwargs: Any) -> RoundTripTokenizer:
            known = {"deepseek-v3.2": "deepseek_v32", "deepseek-v3": "deepseek_v3", "kimi": "kimi_k2",
                     "qwen3-coder": "qwen3_coder", "glm-4.7": "glm47", "glm-4.5": "glm45"}
            fmt = next((f for key, f in known.items() if key in str(name).lower()), self.fmt or "deepseek_v32")
            return RoundTripTokenizer(fmt)

        transformers.AutoTokenizer.from_pretrained = staticmethod(from_pretrained)
        if self.ours:
            import callscale.serve.sglang as serve_sglang
        for target, fmt in adapters.KNOWN_CLASSES.items():
            if not target.startswith("sglang.srt.function_call.") or self.fmt not in (None, fmt):
                continue
            module_name, cls_name = target.split(":")
            module = importlib.import_module(module_name)
            engine_cls = ENGINE_CLASSES.setdefault(target, getattr(module, cls_name))
            if not self.ours:  # the engine's class as it is; its construction recorded (subclasses included)
                setattr(module, cls_name, engine_cls)
                _record_engine_init(engine_cls, fmt)
                continue
            ours = serve_sglang.DETECTORS[engine_name(fmt)]
            recording = type(engine_cls.__name__, (ours,), {
                "__init__": lambda self, *a, _fmt=fmt, _base=ours, **k: (_seen(_fmt), _base.__init__(self, *a, **k))[1],
                "__module__": ours.__module__})
            setattr(module, cls_name, recording)
            for name, cls in list(enum.items()):
                if cls is engine_cls:
                    enum[name] = recording

    def pytest_runtest_setup(self, item: Any) -> None:
        CURRENT["nodeid"] = item.nodeid

    def pytest_runtest_logreport(self, report: Any) -> None:
        if report.when == "call" or report.outcome != "passed":
            if report.outcome == "failed":
                text = str(report.longrepr.reprcrash.message if hasattr(report.longrepr, "reprcrash")
                           else report.longrepr)
                self.results[report.nodeid] = ("failed", text.splitlines()[0][:160] if text else "")
            elif report.nodeid not in self.results:
                self.results[report.nodeid] = (report.outcome, "")


#: SGLang's own detector classes (``module:Class`` -> class), kept before any substitution.
ENGINE_CLASSES: dict[str, type] = {}
_WRAPPED: set[type] = set()


def _record_engine_init(cls: type, fmt: str) -> None:
    """Wrap ``cls.__init__`` in place (once) so that building it, or a subclass of it, records ``fmt``."""
    if cls in _WRAPPED:
        return
    _WRAPPED.add(cls)
    original = cls.__init__

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        if type(self) is cls or not any(type(self) is c for c in ENGINE_CLASSES.values()):
            _seen(fmt)
        original(self, *args, **kwargs)

    cls.__init__ = __init__


def run(path: Path, engine: str, fmt: str | None, ours: bool) -> dict[str, tuple[str, str]]:
    root = next((p.parent for p in path.resolve().parents if p.name in ("tests", "test")), path.parent)
    for extra in (root, path.resolve().parent):
        if str(extra) not in sys.path:
            sys.path.insert(0, str(extra))
    for name, module in list(sys.modules.items()):  # the test modules import the parser class: import them anew
        if str(getattr(module, "__file__", "") or "").startswith(str(root)):
            del sys.modules[name]
    plugin = Substitute(engine, fmt, ours)
    pytest.main([str(path), "-q", "-p", "no:cacheprovider", "-p", "no:randomly", "--no-header", "-rN",
                 "--rootdir", str(root), "-o", "addopts="], plugins=[plugin])
    return plugin.results


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--engine", choices=("vllm", "sglang"), default="vllm")
    ap.add_argument("--format", help="callscale format the test file is for (vLLM: required; SGLang: every format "
                                     "when left out)")
    ap.add_argument("files", nargs="+", type=Path)
    args = ap.parse_args(argv)
    if args.engine == "vllm" and not args.format:
        ap.error("--format is required with --engine vllm")
    from callscale.adapters import gpu_stubs

    gpu_stubs.install(("torch", "triton", "llguidance"))
    for path in args.files:
        engine = run(path, args.engine, args.format, ours=False)
        ours = run(path, args.engine, args.format, ours=True)
        formats = CURRENT["formats"]

        def key(nodeid: str) -> str:
            return "+".join(sorted(formats.get(nodeid, ()))) or (args.format if args.engine == "vllm" else "-")

        for group in sorted({key(n) for n in set(engine) | set(ours)}):
            line = []
            for label, results in (("engine", engine), ("callscale", ours)):
                outcomes = [o for n, (o, _) in results.items() if key(n) == group]
                counts = ", ".join(f"{outcomes.count(o)} {o}" for o in ("passed", "failed", "skipped")
                                   if o != "skipped" or outcomes.count(o))
                line.append(f"{label} {counts}")
            print(f"{path.name} [{group}]: " + "; ".join(line))
        for nodeid, (outcome, message) in sorted(ours.items()):
            if outcome == "failed":
                also = " (also engine)" if engine.get(nodeid, ("",))[0] == "failed" else ""
                print(f"  FAILED{also} [{key(nodeid)}] {nodeid.split('::', 1)[1]}: {message}")
        for nodeid, (outcome, message) in sorted(engine.items()):
            if outcome == "failed" and ours.get(nodeid, ("",))[0] != "failed":
                print(f"  engine only FAILED [{key(nodeid)}] {nodeid.split('::', 1)[1]}: {message}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
