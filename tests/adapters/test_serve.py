"""callscale.serve: callscale's parsers registered in the engines (stand-in engines, no engine installed).

tests/helpers/standin_vllm.py, standin_sglang.py and standin_trtllm.py are installed
under the engines' module names (``vllm.tool_parsers``, ...), so
``import callscale.serve.<engine>`` runs as it does inside the engine; each
stand-in's serving layer (vLLM's end of stream, SGLang's
``FunctionCallParser`` and unstreamed-arguments check) drives the glue, and
what a client assembles must equal callscale's own parser on every fault case
of every format and on the headline workloads.
"""

import importlib
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

import standin_sglang
import standin_trtllm
import standin_vllm
from callscale import check, parsers, serve, workloads
from callscale.plugins import resolve
from callscale.workloads import faults, render
from callscale.workloads.chunking import chunk
from support import ROOT

FORMATS = parsers.names()
ENGINE_ROOTS = ("vllm", "sglang", "tensorrt_llm")


def _cases(fmt):
    """The format's fault cases, then two headline workloads at 1k (text, deltas, tools)."""
    for case in faults.load(fmt):
        if case.get("broken"):  # a call the model wrote broken, begun then abandoned: tests/parsers/test_fault_cases.py's
            continue
        yield case["id"], case["text"], case["deltas"], case["tools"]
    for workload in ("many_short_calls", "parallel_calls"):
        case = workloads.make(workload, fmt, 1024)
        yield workload, case.text, case.deltas("tokens:4"), list(case.tools)


def _reference(fmt, deltas, tools):
    out = check.stream(parsers.get(fmt)(), deltas, tools)
    return out.content, [(c.name, json.loads(c.arguments_text)) for c in out.calls]


def _assemble(content_pieces, call_pieces):
    """Client side: content concatenated; per index the name and the arguments pieces."""
    calls = {}
    for index, call_id, name, arguments in call_pieces:
        entry = calls.setdefault(index, [None, None, []])
        entry[0] = entry[0] or call_id
        entry[1] = entry[1] or name
        entry[2].append(arguments or "")
    return "".join(content_pieces), [(calls[i][0], calls[i][1], "".join(calls[i][2])) for i in sorted(calls)]


def _json(calls):
    return [(name, json.loads(arguments)) for _, name, arguments in calls]


@pytest.fixture
def vllm_serve(monkeypatch):
    standin_vllm.install(monkeypatch)
    return importlib.import_module("callscale.serve.vllm")


@pytest.fixture
def sglang_serve(monkeypatch):
    standin_sglang.install(monkeypatch)
    return importlib.import_module("callscale.serve.sglang")


@pytest.fixture
def trtllm_serve(monkeypatch):
    standin_trtllm.install(monkeypatch)
    return importlib.import_module("callscale.serve.trtllm")


# --- the command line, with no engine -------------------------------------------------------------


def test_list_and_path_import_no_engine():
    code = ("import sys, contextlib, io\n"
            "from callscale.serve.__main__ import main\n"
            "out = io.StringIO()\n"
            "with contextlib.redirect_stdout(out):\n"
            "    main(['--list']); main(['vllm', '--path']); main(['sglang', '--list'])\n"
            f"assert not [m for m in sys.modules if m.split('.')[0] in {ENGINE_ROOTS!r}], 'an engine was imported'\n"
            "print(out.getvalue())\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    lines = done.stdout.splitlines()
    vllm_line = next(line for line in lines if line.startswith("vllm: "))
    assert vllm_line.split()[1:] == [f"callscale_{f}" for f in FORMATS]
    path = Path(next(line for line in lines if line.endswith(".py")))
    assert path == serve.plugin_path("vllm") and path.is_file() and path.stem == "callscale_vllm"
    assert "callscale_qwen3_coder" in lines  # sglang --list: one a line


@pytest.mark.parametrize("argv,message", [
    (["nosuch", "--path"], "unknown engine 'nosuch'"),
    (["--path"], "--path needs an engine"),
    (["vllm"], "give one of --list or --path"),
])
def test_bad_arguments_one_line_exit_2(argv, message):
    done = subprocess.run([sys.executable, "-m", "callscale.serve", *argv], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 2 and done.stdout == ""
    assert len(done.stderr.splitlines()) == 1 and message in done.stderr


def test_names_and_formats():
    assert serve.names("trtllm") == [f"callscale_{f}" for f in FORMATS]
    assert serve.format_of("callscale_glm47") == "glm47"
    with pytest.raises(ValueError, match="not a callscale parser name"):
        serve.format_of("glm47")
    with pytest.raises(ValueError, match="unknown engine"):
        serve.names("tgi")


# --- vLLM -----------------------------------------------------------------------------------------


def test_vllm_import_registers_every_format(vllm_serve):
    registry = standin_vllm.ToolParserManager.tool_parsers
    assert sorted(registry) == sorted(serve.names("vllm"))
    cls = registry["callscale_qwen3_coder"]
    assert issubclass(cls, standin_vllm.ToolParser) and cls.format == "qwen3_coder" and cls.engine_based_streaming
    assert getattr(vllm_serve, cls.__name__) is cls  # module:Class for --parser vllm:callscale.serve.vllm:...


def test_vllm_plugin_file_loads_as_vllm_loads_it(vllm_serve, monkeypatch):
    """vLLM's ``import_from_path``: the file is imported as a module named after its stem."""
    standin_vllm.ToolParserManager.tool_parsers.clear()
    monkeypatch.delitem(sys.modules, "callscale.serve.vllm")
    path = serve.plugin_path("vllm")
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, path.stem, module)
    spec.loader.exec_module(module)
    assert sys.modules["vllm"].ToolParserManager is standin_vllm.ToolParserManager  # the engine is not shadowed
    assert sorted(standin_vllm.ToolParserManager.tool_parsers) == sorted(serve.names("vllm"))


@pytest.mark.parametrize("fmt", FORMATS)
def test_vllm_stream_through_the_serving_layer_equals_our_parser(vllm_serve, fmt):
    cls = standin_vllm.ToolParserManager.get_tool_parser(f"callscale_{fmt}")
    for case_id, text, deltas, tools in _cases(fmt):
        request = standin_vllm.ChatCompletionRequest(messages=[], tools=tools, tool_choice="auto")
        parser = cls(None, request.tools)
        messages = standin_vllm.serve_stream(parser, deltas, request)
        pieces = [(tc.index, tc.id, tc.function.name, tc.function.arguments) for m in messages for tc in m.tool_calls]
        content, calls = _assemble([m.content or "" for m in messages], pieces)
        assert (content, _json(calls)) == _reference(fmt, deltas, tools), case_id
        firsts = [p for p in pieces if p[2] is not None]
        assert [p[0] for p in firsts] == list(range(len(calls))), case_id  # one name per index, in order
        ids = [p[1] for p in firsts]
        assert all(ids) and len(set(ids)) == len(ids), case_id  # an id on each call's first piece, distinct
        assert all(p[1] is None for p in pieces if p[2] is None), case_id
        assert parser.get_remaining_unstreamed_args() == ""
        assert [a["name"] for a in parser.prev_tool_call_arr] == [c[1] for c in calls]
        assert parser.streamed_args_for_tool == [c[2] for c in calls]
        whole = parser.extract_tool_calls(text, request)
        assert whole.tools_called == bool(calls)
        assert [(c.function.name, json.loads(c.function.arguments)) for c in whole.tool_calls] == \
            _reference(fmt, [text], tools)[1], case_id


def test_vllm_reset_by_assignment_and_a_second_finish(vllm_serve):
    cls = standin_vllm.ToolParserManager.get_tool_parser("callscale_qwen3")
    parser = cls(None, [])
    request = standin_vllm.ChatCompletionRequest(messages=[], tools=None, tool_choice="auto")
    text = 'Hi <tool_call>\n{"name": "f", "arguments": {"a": 1}}\n</tool_call>'
    messages = standin_vllm.serve_stream(parser, chunk(text, "fixed:5"), request)
    assert [tc.function.name for m in messages for tc in m.tool_calls if tc.function.name] == ["f"]
    assert parser.prev_tool_call_arr == [{"name": "f", "arguments": '{"a": 1}'}]
    assert parser.finish_streaming() is None  # vLLM flushes once
    parser.prev_tool_call_arr = []  # as vLLM's tests reset a parser
    assert parser.prev_tool_call_arr == [] and parser.streamed_args_for_tool == []


@pytest.mark.parametrize("fmt,keeps", [("kimi_k2", True), ("glm47", True), ("gpt_oss", True), ("qwen3", False),
                                       ("deepseek_v32", False)])
def test_vllm_adjust_request_keeps_special_tokens_where_the_markers_are_special(vllm_serve, fmt, keeps):
    cls = standin_vllm.ToolParserManager.get_tool_parser(f"callscale_{fmt}")
    tools = [{"type": "function", "function": {"name": "f"}}]
    request = standin_vllm.ChatCompletionRequest(messages=[], tools=tools, tool_choice="auto")
    assert cls(None, request.tools).adjust_request(request).skip_special_tokens is (not keeps)
    none = standin_vllm.ChatCompletionRequest(messages=[], tools=tools, tool_choice="none")
    assert cls(None, none.tools).adjust_request(none).skip_special_tokens is True


def test_vllm_reasoning_goes_to_the_reasoning_field(vllm_serve):
    cls = standin_vllm.ToolParserManager.get_tool_parser("callscale_gpt_oss")
    parser = cls(None, [])
    request = standin_vllm.ChatCompletionRequest(messages=[], tools=None, tool_choice="auto")
    text = "<|channel|>analysis<|message|>think first<|end|><|start|>assistant<|channel|>final<|message|>Done."
    messages = standin_vllm.serve_stream(parser, chunk(text, "tokens:4", render.get("gpt_oss").special_tokens), request)
    assert "".join(m.reasoning or "" for m in messages) == "think first"
    assert "".join(m.content or "" for m in messages) == "Done."


def test_vllm_adapter_drives_the_plugged_class_as_our_parser(vllm_serve):
    """``callscale gate --parser vllm:callscale.serve.vllm:...``: the harness's model of vLLM's serving layer."""
    spec = resolve("vllm:callscale.serve.vllm:CallscaleQwen3CoderToolParser", "qwen3_coder")
    assert spec.factory.__name__ == "vllm:CallscaleQwen3CoderToolParser"
    for case in faults.load("qwen3_coder"):
        theirs = check.stream(spec.factory(), case["deltas"], case["tools"])
        assert (theirs.content, [(c.name, json.loads(c.arguments_text)) for c in theirs.calls]) == \
            _reference("qwen3_coder", case["deltas"], case["tools"]), case["id"]


# --- SGLang ---------------------------------------------------------------------------------------


def test_sglang_import_registers_every_format(sglang_serve):
    registry = standin_sglang.FunctionCallParser.ToolCallParserEnum
    assert sorted(registry) == sorted(serve.names("sglang"))
    assert issubclass(registry["callscale_kimi_k2"], standin_sglang.BaseFormatDetector)


@pytest.mark.parametrize("fmt", FORMATS)
def test_sglang_stream_and_whole_equal_our_parser(sglang_serve, fmt):
    for case_id, text, deltas, tools in _cases(fmt):
        tool_models = [standin_sglang.Tool.model_validate(t) for t in tools]
        fcp = standin_sglang.FunctionCallParser(tool_models, f"callscale_{fmt}")
        content, pieces = [], []
        for delta in deltas:
            normal, calls = fcp.parse_stream_chunk(delta)
            content.append(normal)
            pieces += [(c.tool_index, None, c.name, c.parameters) for c in calls]
        normal, calls = fcp.parse_stream_end()
        content.append(normal)
        pieces += [(c.tool_index, None, c.name, c.parameters) for c in calls]
        assert standin_sglang.unstreamed_tool_args(fcp.detector) == "", case_id  # nothing sent twice
        got_content, got_calls = _assemble(content, pieces)
        assert (got_content, _json(got_calls)) == _reference(fmt, deltas, tools), case_id
        normal, calls = standin_sglang.FunctionCallParser(tool_models, f"callscale_{fmt}").parse_non_stream(text)
        reference_content, reference_calls = _reference(fmt, [text], tools)
        assert [(c.name, json.loads(c.parameters)) for c in calls] == reference_calls, case_id
        assert [c.tool_index for c in calls] == list(range(len(calls)))
        assert normal == reference_content, case_id


def test_sglang_a_call_whole_in_one_chunk_sends_its_name_alone_then_its_arguments(sglang_serve):
    """SGLang's detectors send a call's name with ``parameters=""`` and the arguments in the next item
    (SGLang's test_deepseekv31_detector.py asserts it); one chunk holding a whole call gives both."""
    detector = standin_sglang.FunctionCallParser.ToolCallParserEnum["callscale_deepseek_v31"]()
    text = ("<\uff5ctool\u2581calls\u2581begin\uff5c><\uff5ctool\u2581call\u2581begin\uff5c>get_weather"
            "<\uff5ctool\u2581sep\uff5c>{\"city\": \"Tokyo\"}<\uff5ctool\u2581call\u2581end\uff5c>"
            "<\uff5ctool\u2581calls\u2581end\uff5c>")
    calls = detector.parse_streaming_increment(text, []).calls
    assert [(c.tool_index, c.name, c.parameters) for c in calls] == [
        (0, "get_weather", ""), (0, None, '{"city": "Tokyo"}')]
    assert detector.prev_tool_call_arr == [{"name": "get_weather", "arguments": {"city": "Tokyo"}}]
    assert detector.streamed_args_for_tool == ['{"city": "Tokyo"}']
    more = detector.parse_streaming_increment("", []).calls
    assert more == []


def test_sglang_pythonic_sends_a_whole_call_in_one_item(sglang_serve):
    """SGLang's PythonicDetector sends a call's name and arguments in one item (its tests count one item
    per call); callscale_llama4_pythonic does the same for a call whole in one chunk."""
    detector = standin_sglang.FunctionCallParser.ToolCallParserEnum["callscale_llama4_pythonic"]()
    calls = detector.parse_streaming_increment("[get_weather(city='Paris')]", []).calls
    assert [(c.tool_index, c.name, json.loads(c.parameters)) for c in calls] == [(0, "get_weather", {"city": "Paris"})]


def test_sglang_has_tool_call_and_no_structural_tags(sglang_serve):
    detector = standin_sglang.FunctionCallParser.ToolCallParserEnum["callscale_qwen3"]()
    assert detector.has_tool_call('x <tool_call>\n{"name": "f", "arguments": {}}\n</tool_call>')
    assert detector.has_tool_call("x <tool_call>\n{\"name\"")  # a cut call: markup, not content
    assert not detector.has_tool_call("just prose")
    assert detector.supports_structural_tag() is False
    with pytest.raises(NotImplementedError, match="not supported"):
        detector.structure_info()


# --- TensorRT-LLM ---------------------------------------------------------------------------------


def test_trtllm_import_registers_every_format(trtllm_serve):
    assert sorted(standin_trtllm.ToolParserFactory.parsers) == sorted(serve.names("trtllm"))
    parser = standin_trtllm.ToolParserFactory.create_tool_parser("callscale_deepseek_v31")
    assert isinstance(parser, standin_trtllm.BaseToolParser) and parser.format == "deepseek_v31"


@pytest.mark.parametrize("fmt", FORMATS)
def test_trtllm_stream_with_finish_equals_our_parser(trtllm_serve, fmt):
    for case_id, text, deltas, tools in _cases(fmt):
        tool_models = [standin_trtllm.Tool.model_validate(t) for t in tools]
        parser = standin_trtllm.ToolParserFactory.create_tool_parser(f"callscale_{fmt}")
        results = [parser.parse_streaming_increment(d, tool_models) for d in deltas] + [parser.finish(tool_models)]
        content, calls = _assemble([r.normal_text for r in results],
                                   [(c.tool_index, None, c.name, c.parameters) for r in results for c in r.calls])
        assert (content, _json(calls)) == _reference(fmt, deltas, tools), case_id
        whole = parser.detect_and_parse(text, tool_models)
        assert [(c.name, json.loads(c.parameters)) for c in whole.calls] == _reference(fmt, [text], tools)[1]


def test_held_text_reaches_the_client_through_the_engines_end_of_stream(vllm_serve, sglang_serve, trtllm_serve):
    """``Hello <tool_c``: the parser holds ``<tool_c`` (a possible opener) until the end of the output;
    vLLM's ``finish_streaming`` and SGLang's ``finish`` release it, TensorRT-LLM has no end of stream."""
    text, deltas = "Hello <tool_c", ["Hello <tool", "_c"]
    request = standin_vllm.ChatCompletionRequest(messages=[], tools=None, tool_choice="auto")
    parser = standin_vllm.ToolParserManager.get_tool_parser("callscale_qwen3")(None, [])
    messages = standin_vllm.serve_stream(parser, deltas, request)
    assert "".join(m.content or "" for m in messages) == text
    fcp = standin_sglang.FunctionCallParser([], "callscale_qwen3")
    streamed = "".join(fcp.parse_stream_chunk(d)[0] for d in deltas)
    assert streamed == "Hello " and streamed + fcp.parse_stream_end()[0] == text
    trt = standin_trtllm.ToolParserFactory.create_tool_parser("callscale_qwen3")
    assert "".join(trt.parse_streaming_increment(d, []).normal_text for d in deltas) == "Hello "  # "<tool_c" lost
    assert trt.finish([]).normal_text == "<tool_c"  # for a server that calls it


def test_vllm_kimi_k2_ids_are_the_models_spelling(vllm_serve):
    """Kimi K2's template reads ids back as ``functions.<name>:<n>``, ``n`` counting the conversation's calls."""
    cls = standin_vllm.ToolParserManager.get_tool_parser("callscale_kimi_k2")
    history = [{"role": "assistant", "tool_calls": [{"id": "functions.f:0"}, {"id": "functions.g:1"}]},
               {"role": "tool", "content": "ok"}]
    request = standin_vllm.ChatCompletionRequest(messages=history, tools=None, tool_choice="auto")
    text = ("Hi <|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:2<|tool_call_argument_begin|>"
            '{"city": "Oslo"}<|tool_call_end|><|tool_call_begin|>functions.search:3<|tool_call_argument_begin|>'
            '{"q": "x"}<|tool_call_end|><|tool_calls_section_end|>')
    parser = cls(None, [])
    messages = standin_vllm.serve_stream(parser, chunk(text, "tokens:4", render.get("kimi_k2").special_tokens), request)
    assert [tc.id for m in messages for tc in m.tool_calls if tc.id] == ["functions.get_weather:2", "functions.search:3"]
    assert [c.id for c in parser.extract_tool_calls(text, request).tool_calls] == \
        ["functions.get_weather:2", "functions.search:3"]
    other = standin_vllm.ToolParserManager.get_tool_parser("callscale_qwen3")(None, [])
    whole = other.extract_tool_calls('<tool_call>\n{"name": "f", "arguments": {}}\n</tool_call>', request)
    assert whole.tool_calls[0].id.startswith("chatcmpl-tool-")
