"""The engine adapters (callscale/adapters/), entry points and the metered child's import path.

The engines are not installed here: the stand-ins tests/helpers/standin_trtllm.py,
standin_sglang.py and standin_vllm.py reproduce each engine's protocol
(constructor, method signatures, result types, tool models) around one of
our parsers, so a stand-in through its adapter must give what the built-in
parser gives on every fault case of its format.
"""

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from callscale import parsers
import standin_sglang
import standin_trtllm
import standin_vllm
from callscale import adapters, check, cli
from callscale.adapters._tools import ToolConverter
from callscale.adapters.vllm import SpecialTokenizer, remaining_arguments
from callscale.plugins import PluginError, resolve
from callscale.workloads import faults, render
from callscale.workloads.chunking import chunk
from support import ROOT


STANDINS = [
    ("trtllm", "standin_trtllm:StandinQwen3Parser", "qwen3"),
    ("sglang", "sglang:standin_sglang:StandinKimiK2Detector", "kimi_k2"),
    ("vllm", "standin_vllm:StandinQwen3CoderToolParser", "qwen3_coder"),
]


def _calls(outcome):
    """Content and calls; an abandoned call (a case the model wrote broken) by its raw argument text."""
    return outcome.content, [(c.name, c.arguments_text if c.arguments() is None else json.loads(c.arguments_text))
                             for c in outcome.calls]


def _fault_params():
    for engine, target, fmt in STANDINS:
        for case in faults.load(fmt):
            yield pytest.param(engine, target, fmt, case, id=f"{engine}-{case['id']}")


@pytest.mark.parametrize("engine,target,fmt,case", list(_fault_params()))
def test_standin_through_its_adapter_agrees_with_the_built_in_parser(engine, target, fmt, case):
    spec = resolve(target, fmt)
    assert spec.factory.__name__.startswith(f"{engine}:")
    specials = render.get(fmt).special_tokens
    for deltas in (case["deltas"], chunk(case["text"], "tokens:1", specials), chunk(case["text"], "tokens:3", specials)):
        ours = check.stream(parsers.get(fmt)(), deltas, case["tools"])
        theirs = check.stream(spec.factory(), deltas, case["tools"])
        assert _calls(theirs) == _calls(ours)
    assert _calls(check.whole(spec.factory(), case["text"], case["tools"])) == \
        _calls(check.whole(parsers.get(fmt)(), case["text"], case["tools"]))


def test_the_adapter_is_chosen_from_the_class_or_forced_by_a_prefix():
    assert adapters.engine_of(standin_vllm.StandinQwen3CoderToolParser) == "vllm"  # by its methods
    assert adapters.engine_of(standin_trtllm.StandinQwen3Parser) == "trtllm"  # no finish()
    assert adapters.engine_of(standin_sglang.StandinKimiK2Detector) is None  # speaks our contract by its methods
    # resolve() imports nothing (plug-ins load in a child); load() is what a child does
    assert resolve("standin_sglang:StandinKimiK2Detector", "kimi_k2").factory.load() is \
        standin_sglang.StandinKimiK2Detector
    forced = resolve("sglang:standin_sglang:StandinKimiK2Detector", "kimi_k2")
    assert forced.factory.engine_class is standin_sglang.StandinKimiK2Detector
    assert forced.factory.tool_model is standin_sglang.Tool
    with pytest.raises(PluginError, match="not a vllm tool parser"):
        resolve("vllm:standin_sglang:StandinKimiK2Detector", "kimi_k2").factory.load()


def test_engine_classes_by_package_and_their_formats():
    fake = type("DeepSeekV31ToolParser", (), {"__module__": "vllm.tool_parsers.deepseekv31_tool_parser"})
    assert adapters.engine_of(fake) == "vllm"
    assert adapters.known_format("sglang.srt.function_call.deepseekv31_detector:DeepSeekV31Detector") == "deepseek_v31"
    assert adapters.known_format("vllm:vllm.tool_parsers.hermes_tool_parser:Hermes2ProToolParser") == "qwen3"
    assert adapters.known_format("standin_vllm:StandinQwen3CoderToolParser") is None
    assert set(adapters.KNOWN_CLASSES.values()) <= set(parsers.names())


@pytest.mark.skipif(importlib.util.find_spec("vllm") is not None, reason="vllm is installed here")
def test_a_missing_engine_is_one_line_and_exit_2(capsys):
    with pytest.raises(SystemExit) as exit_:
        cli.main(["gate", "--parser", "vllm.tool_parsers.hermes_tool_parser:Hermes2ProToolParser"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "the vllm engine is not installed (pip install vllm" in err


def test_tools_become_the_engine_model_once_per_list():
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}, {"name": "g"}]
    convert = ToolConverter(standin_trtllm.Tool)
    first = convert(tools)
    assert [type(t) for t in first] == [standin_trtllm.Tool] * 2
    assert [t.function.name for t in first] == ["f", "g"]
    assert convert(tools) is first
    assert convert(list(tools)) is not first
    assert ToolConverter(None)(tools) == tools  # no model: plain dicts


def test_trtllm_parser_without_finish_gets_a_no_op_finish():
    spec = resolve("standin_trtllm:StandinQwen3Parser", "qwen3")
    parser = spec.factory()
    assert not hasattr(parser.inner, "finish")
    text = 'Hi <tool_call>\n{"name": "f", "arguments": {"a": 1}}\n</tool_call>'
    streamed = [parser.parse_streaming_increment(d, [{"name": "f"}]) for d in chunk(text, "fixed:3")]
    done = parser.finish([{"name": "f"}])
    assert (done.normal_text, done.calls) == ("", [])
    out = check.assemble(streamed)
    assert out.content.strip() == "Hi" and [(c.name, json.loads(c.arguments_text)) for c in out.calls] == [("f", {"a": 1})]


def test_vllm_last_call_arguments_need_the_end_of_stream_back_fill():
    spec = resolve("standin_vllm:StandinQwen3CoderToolParser", "qwen3_coder")
    case = next(c for c in faults.load("qwen3_coder") if c["expected"]["calls"])
    parser = spec.factory()
    increments = [parser.parse_streaming_increment(d, case["tools"]) for d in case["deltas"]]
    before = check.assemble(increments)
    last = case["expected"]["calls"][-1]
    assert not before.calls[-1].arguments_text.endswith("}")  # held back, as vLLM parsers do
    after = check.assemble(increments + [parser.finish(case["tools"])])
    assert json.loads(after.calls[-1].arguments_text) == last["arguments"]
    assert parser.inner.streamed_args_for_tool[-1] + "}" == after.calls[-1].arguments_text


def test_back_fill_rule_of_vllm_before_get_remaining_unstreamed_args():
    old = type("Old", (), {})()
    old.prev_tool_call_arr = [{"name": "f", "arguments": {"a": 1}}, {"name": "g", "arguments": {"path": "ä", "n": 2}}]
    old.streamed_args_for_tool = ['{"a": 1}', '{"path": "ä"']
    assert remaining_arguments(old) == ', "n": 2}'
    old.streamed_args_for_tool[1] = '{"other'
    assert remaining_arguments(old) == ""


def test_the_tokenizer_stand_in_has_the_format_special_tokens():
    specials = render.get("deepseek_v31").special_tokens
    tok = SpecialTokenizer(specials)
    assert set(tok.get_vocab()) == set(specials)
    begin = "<｜tool▁calls▁begin｜>"
    ids = tok.encode(f"ab{begin}cd{begin}")
    assert ids == [1, tok.vocab[begin], 1, tok.vocab[begin]]
    assert tok.decode(ids) == begin * 2
    assert tok.encode("") == []


def _write_dist(site: Path, name: str, entry_points: str) -> None:
    info = site / f"{name}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[callscale.parsers]\n" + entry_points)


def test_entry_points_are_found_by_name_and_listed(tmp_path, monkeypatch, capsys):
    (tmp_path / "team_parsers.py").write_text(textwrap.dedent("""
        from callscale import parsers
        def make():
            return parsers.get("deepseek_v31")()
        make.callscale_format = "deepseek_v31"
    """))
    _write_dist(tmp_path, "team_parsers", "team-qwen3 = standin_trtllm:StandinQwen3Parser [qwen3]\n"
                                          "team-v31 = team_parsers:make\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    spec = resolve("team-qwen3")
    assert (spec.format, spec.plugin, spec.factory.engine_class) == ("qwen3", True, standin_trtllm.StandinQwen3Parser)
    spec = resolve("team-v31")
    assert spec.format == "deepseek_v31" and type(spec.factory()).__name__ == "DeepSeekV31Parser"
    assert resolve("team-v31", "deepseek_v3").format == "deepseek_v3"  # --workload-format overrides
    assert cli.main(["parsers"]) == 0
    out = capsys.readouterr().out
    assert "team-qwen3" in out and "entry point standin_trtllm:StandinQwen3Parser [qwen3]" in out
    assert "deepseek_v32" in out and "built-in" in out
    with pytest.raises(PluginError, match="team-qwen3"):
        resolve("team-nope")


@pytest.mark.slow  # makes a virtualenv and counts twice under callgrind (~10-23 s): the slow set
@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed")
def test_metered_child_imports_from_the_callers_virtualenv_and_counts_repeat(tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", "--system-site-packages", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = Path(subprocess.run([str(python), "-c", "import site; print(site.getsitepackages()[0])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    (site / "venv_only_pkg.py").write_text("MARK = 7\n")
    (tmp_path / "venv_plugin.py").write_text(textwrap.dedent("""
        import venv_only_pkg
        from callscale import parsers
        Parser = parsers.get("deepseek_v31")
    """))
    code = ("import json; from callscale.instructions import count_matrix; "
            "print(json.dumps(sorted(count_matrix(['venv_plugin:Parser', 'deepseek_v31'], 'deepseek_v31', "
            "['write_file'], [1024, 2048], 'tokens:4').items())))")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    runs = [subprocess.run([str(python), "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True)
            for _ in range(2)]
    for run in runs:
        assert run.returncode == 0, run.stderr[-2000:]
    first = json.loads(runs[0].stdout)
    assert first == json.loads(runs[1].stdout)
    counts = {(p, n): c for (p, _, n), c in first}
    assert all(c > 0 for c in counts.values()) and len(counts) == 4


def test_the_child_puts_the_callers_path_before_the_base_site_packages():
    from callscale._child import import_path

    own = ["/proj", "/cwd", "/py/lib/python311.zip", "/py/lib/python3.11", "/py/lib/python3.11/site-packages"]
    caller = ["/proj", "/py/lib/python3.11", "/venv/lib/python3.11/site-packages", "/venv/extra"]
    assert import_path(own, caller, ["/proj", "/cwd"]) == [
        "/proj", "/cwd", "/py/lib/python3.11", "/venv/lib/python3.11/site-packages", "/venv/extra",
        "/py/lib/python311.zip"]


def test_known_classes_cover_the_engines_registries():
    """Every class of TensorRT-LLM's, SGLang 0.5.23's and vLLM 0.34.0's registries is known, with the format of
    the name it is registered under (tests/helpers/engine_registries.py, written down from those files)."""
    from callscale.adapters import ALSO_FORMATS, KNOWN_CLASSES, NO_FORMAT_CLASSES

    import engine_registries as reg

    prefixes = {"trtllm": "tensorrt_llm.serve.tool_parser.", "sglang": "sglang.srt.function_call.",
                "vllm": "vllm.tool_parsers."}
    missing, wrong = [], []
    lists = (("trtllm", reg.TRTLLM), ("sglang", reg.SGLANG), ("vllm", reg.VLLM), ("vllm", reg.VLLM_PARSERS))
    for engine, entries in lists:
        for name, target in entries:
            full = target if "." in target.split(":")[0] else prefixes[engine] + target
            fmt = reg.FORMAT_OF_NAME[engine].get(name)
            if fmt is None:
                if full not in NO_FORMAT_CLASSES and full not in KNOWN_CLASSES:
                    missing.append(full)
            elif fmt != KNOWN_CLASSES.get(full) and fmt not in ALSO_FORMATS.get(full, ()):
                wrong.append((name, full, fmt, KNOWN_CLASSES.get(full)))
    assert missing == [] and wrong == []
    assert set(KNOWN_CLASSES).isdisjoint(NO_FORMAT_CLASSES)
    # and no vLLM class is listed that vLLM 0.34 no longer registers (Llama3JsonToolParser: gone in 0.34)
    registered = {"vllm.tool_parsers." + t for _, t in reg.VLLM} | {t for _, t in reg.VLLM_PARSERS}
    listed = {c for c in [*KNOWN_CLASSES, *NO_FORMAT_CLASSES] if c.startswith("vllm.")}
    assert listed - registered == set(adapters.UNRELEASED) \
        and "vllm.tool_parsers.llama_tool_parser:Llama3JsonToolParser" not in listed
    assert set(adapters.UNRELEASED) <= set(KNOWN_CLASSES)
    assert len(reg.VLLM) == 62 and len(reg.SGLANG) == 44 and len(reg.TRTLLM) == 9


def test_a_checkout_request_carries_the_tools_as_the_engines_tool_class(monkeypatch):
    """A vLLM parser loaded from a checkout gets stand-in protocol classes (``callscale.checkout.Record``): the
    request's tools are instances of its ``ChatCompletionToolsParam``, as pydantic makes them, so vLLM's
    ``find_tool_properties`` (an ``isinstance`` test) finds the schema types (plain records are no tools to it:
    every typed value stayed a string)."""
    import types

    from callscale.adapters import vllm as vllm_adapter
    from callscale.checkout import _ProtocolModule

    protocol = _ProtocolModule("standin_checkout_protocol")
    module = types.ModuleType("standin_checkout_parser")
    module.ChatCompletionToolsParam = tool_class = protocol.ChatCompletionToolsParam
    module.ChatCompletionRequest = request_class = protocol.ChatCompletionRequest

    class Parser:
        def __init__(self, tokenizer, tools=None):
            self.tools = tools

        def extract_tool_calls_streaming(self, *args):
            return None

    Parser.__module__ = module.__name__
    monkeypatch.setitem(sys.modules, module.__name__, module)
    adapter = vllm_adapter.factory(Parser, "solar_open2")()
    tools = [{"type": "function", "function": {"name": "search", "parameters": {
        "type": "object", "properties": {"limit": {"type": "integer"}}}}}]
    request = adapter._setup(tools)
    assert type(request) is request_class and [type(t) for t in request.tools] == [tool_class]
    assert request.tools[0].function.parameters.properties.limit == {"type": "integer"}
    assert [type(t) for t in adapter.inner.tools] == [tool_class]


def test_vllm_parser_protocol_through_its_adapter_agrees_with_the_built_in_parser():
    """A vLLM ``Parser`` (``parse_delta``): each delta goes one increment late, the last with ``finished=True``."""
    target = "standin_vllm:StandinHarmonyParser"
    spec = resolve(target, "gpt_oss")
    assert spec.factory.__name__ == "vllm:StandinHarmonyParser" and adapters.engine_of(standin_vllm.StandinHarmonyParser) == "vllm"
    specials = render.get("gpt_oss").special_tokens
    for case in faults.load("gpt_oss"):
        for deltas in (case["deltas"], chunk(case["text"], "tokens:3", specials)):
            ours = check.stream(parsers.get("gpt_oss")(), deltas, case["tools"])
            parser = spec.factory()
            theirs = check.stream(parser, deltas, case["tools"])
            assert _calls(theirs) == _calls(ours) and theirs.reasoning == ours.reasoning
            assert parser.inner.finished_flags == [False] * (len(deltas) - 1) + [True]
        assert _calls(check.whole(spec.factory(), case["text"], case["tools"])) == \
            _calls(check.whole(parsers.get("gpt_oss")(), case["text"], case["tools"]))


@pytest.mark.slow  # vLLM's import takes 20-50 s
def test_vllm_minimax_m3_engine_reads_calls_through_the_stand_in_tokenizer():
    """vLLM 0.33's ``MinimaxM3ToolParser`` through the adapter, on the stand-in tokenizer (no MiniMax one
    ships): ``]<]minimax[>[`` is no special token there (``MODEL_SPECIAL``), so the engine, which drops special
    tokens that are not its terminals, reads the calls (it streamed them as content when the stand-in marked it
    special). Skips without vLLM 0.33."""
    import importlib.metadata

    if importlib.util.find_spec("vllm") is None or not importlib.metadata.version("vllm").startswith("0.33."):
        pytest.skip("vllm 0.33 is not installed (pip download --no-deps vllm==0.33.* and put it on PYTHONPATH)")
    code = textwrap.dedent("""
        import json
        import callscale.adapters.gpu_stubs as s
        s.install(["torch", "triton", "xgrammar"])
        from callscale import check
        from callscale.plugins import resolve
        from callscale.workloads import catalog
        try:
            spec = resolve("vllm.tool_parsers.minimax_m3_tool_parser:MinimaxM3ToolParser", "minimax_m3")
        except Exception as exc:
            print("missing", type(exc).__name__); raise SystemExit(0)
        for workload in ("write_file", "many_short_calls"):
            case = catalog.make(workload, "minimax_m3", 1024)
            got = check.stream(spec.factory(), case.deltas("tokens:4"), case.tools)
            print(json.dumps([workload, [[c.name, json.loads(c.arguments_text)] for c in got.calls],
                              [[c.name, dict(c.arguments)] for c in case.calls], "<tool_call>" in got.content]))
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr[-3000:]
    if proc.stdout.startswith("missing"):
        pytest.skip(f"vLLM's MiniMax-M3 parser does not import here: {proc.stdout.split()[1]}")
    rows = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [row[0] for row in rows] == ["write_file", "many_short_calls"]
    for _, streamed, expected, markup_in_content in rows:
        assert streamed == expected and len(streamed) >= 1
        assert markup_in_content is False


# --------------------------------------------------------------------------- GPU stand-ins as engines use them
def test_gpu_stand_ins_take_item_assignment_operators_and_stay_unions_in_annotations():
    import importlib

    import callscale.adapters.gpu_stubs as s

    s.install(["callscale_no_such_gpu_package"])
    try:
        gpu = importlib.import_module("callscale_no_such_gpu_package")
        config = importlib.import_module("callscale_no_such_gpu_package._inductor.config")
        assert s.is_stub(gpu) and s.is_stub(config)
        config._config["custom_should_partition_ops"] = 1  # vLLM 0.33 vllm/env_override.py, on a class
        del config._config["custom_should_partition_ops"]
        value = gpu.library.infer_schema(len, mutates_args=())  # a call's value, then ``str + value`` (vllm/utils/torch_utils.py)
        value["key"] = 1
        assert "all_reduce" + gpu.library.infer_schema(print, mutates_args=()) == "all_reduce"
        assert 2 * value == 2 and value + 1 is value and -value is value and "x" not in value
        assert bool(value[0]) is False and gpu.Tensor[0] is not None
        union = gpu.Tensor | None  # annotations: a union of the stand-in class, as with the real one
        assert union.__args__ == (gpu.Tensor, type(None)) and (str | gpu.dtype).__args__ == (str, gpu.dtype)
    finally:
        s.uninstall_finder()
        for name in [n for n in sys.modules if n.startswith("callscale_no_such_gpu_package")]:
            del sys.modules[name]


@pytest.mark.slow  # vLLM's import takes 20-50 s
def test_vllm_tool_parser_modules_import_through_the_gpu_stand_ins():
    """Every tool parser vLLM 0.33 or 0.34 registers, and its gpt-oss ``Parser``, imports with torch and triton
    stood in for (xgrammar too where it is not installed; run with vLLM's wheel and its pure-Python
    dependencies importable; vLLM 0.34 checks the stand-in dtypes' sizes at import)."""
    import importlib.metadata

    if importlib.util.find_spec("vllm") is None:
        pytest.skip("vllm is not installed (pip download --no-deps vllm==0.33.* and put it on PYTHONPATH)")
    version = importlib.metadata.version("vllm")
    registered = {"0.33": 58, "0.34": 62}.get(version.rpartition(".")[0])
    if registered is None:
        pytest.skip(f"vllm {version} is installed, not 0.33 or 0.34")
    code = textwrap.dedent("""
        import importlib, sys
        import callscale.adapters.gpu_stubs as s
        s.install(["torch", "triton", "xgrammar"])
        names = []
        try:
            import vllm.tool_parsers as tp
            for module, cls in tp._TOOL_PARSERS_TO_REGISTER.values():
                getattr(importlib.import_module("vllm.tool_parsers." + module), cls)
                names.append(cls)
            getattr(importlib.import_module("vllm.parser.harmony"), "HarmonyParser")
        except ModuleNotFoundError as exc:
            if (exc.name or "").partition(".")[0] in ("torch", "triton", "xgrammar"):
                raise
            print("missing", exc.name); sys.exit(0)
        print("imported", len(names), "HarmonyParser" if s.is_stub(sys.modules.get("torch")) else "torch-installed")
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr[-3000:]
    if proc.stdout.startswith("missing"):
        pytest.skip(f"a dependency of vllm that is no GPU package is missing: {proc.stdout.split()[1]}")
    words = proc.stdout.split()
    # vLLM 0.33.0 registers 58 tool parsers, 0.34.0 62
    assert words[0] == "imported" and int(words[1]) == registered and words[2] in ("HarmonyParser", "torch-installed")


@pytest.mark.slow  # SGLang's import takes 10-40 s
def test_sglang_detectors_import_through_the_gpu_stand_ins():
    """Every detector SGLang 0.5.23 registers imports with torch and triton stood in for, and xgrammar real
    (docs/engines.md: its stand-in breaks the detectors; run where sglang and its pure-Python dependencies are)."""
    import importlib.metadata

    if importlib.util.find_spec("sglang") is None:
        pytest.skip("sglang is not installed (pip install --no-deps sglang==0.5.23)")
    version = importlib.metadata.version("sglang")
    if version != "0.5.23":
        pytest.skip(f"sglang {version} is installed, not 0.5.23")
    import engine_registries as reg

    targets = sorted({t if "." in t.split(":")[0] else "sglang.srt.function_call." + t for _, t in reg.SGLANG})
    code = textwrap.dedent(f"""
        import importlib, sys
        import callscale.adapters.gpu_stubs as s
        s.install(["torch", "triton"])
        done = 0
        for target in {targets!r}:
            module, _, name = target.partition(":")
            try:
                getattr(importlib.import_module(module), name)
            except ModuleNotFoundError as exc:
                if (exc.name or "").partition(".")[0] in ("torch", "triton", "xgrammar"):
                    raise
                print("missing", exc.name); sys.exit(0)
            done += 1
        print("imported", done)
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr[-3000:]
    if proc.stdout.startswith("missing"):
        pytest.skip(f"a dependency of sglang that is no GPU package is missing: {proc.stdout.split()[1]}")
    assert proc.stdout.split() == ["imported", str(len(targets))]
