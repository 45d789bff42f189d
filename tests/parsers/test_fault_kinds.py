"""The kinds of fault real outputs still found, each fixed once in the shared layer.

Each kind is tested for every format it applies to, under every chunking of ``support.CHUNKINGS``
(whole, one character, fixed sizes, seeded random splits inside special tokens too).
"""

from __future__ import annotations

import tracemalloc

import pytest

from callscale import check, parsers
from callscale.parsers.schema import tool_list
from callscale.workloads import render
from callscale.workloads.chunking import chunk
from callscale.workloads.render import Call
from support import CHUNKINGS, assert_parses

NAMES = parsers.names()
ARGS = {"city": "Paris", "days": 3}
TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}}}}]


def _drive(name, deltas, tools):
    """Stream ``deltas`` through a fresh parser passing ``tools`` exactly as given (no copy into a list)."""
    parser = parsers.get(name)()
    results = [parser.parse_streaming_increment(d, tools) for d in deltas]
    results.append(parser.finish(tools))
    return check.assemble(results)


# --------------------------------------------------------------------------- a bad tool list
#: ``tools`` that is not a list: no tools (schema.tool_list), the same at every split.
BAD_TOOLS = [5, 2.5, True, "get_weather", b"x", {"type": "function", "function": TOOLS[0]["function"]},
             object()]


def test_tool_list_keeps_lists_and_tuples_only():
    assert tool_list(TOOLS) is TOOLS
    assert tool_list(tuple(TOOLS)) == tuple(TOOLS)
    for bad in [None, *BAD_TOOLS, iter(TOOLS)]:
        assert tool_list(bad) == ()


@pytest.mark.parametrize("name", NAMES)
def test_a_tool_list_that_is_no_list_reads_as_no_tools_at_any_split(name):
    """qwen3_coder with ``tools=5``: whole, the call was abandoned and its text came back as content;
    by characters it was a call: now both read the call as without tools (values untyped)."""
    r = render.get(name)
    text = r.render([Call("get_weather", ARGS)], content="Hi.")
    want = _drive(name, [text], [])
    assert want.content.strip() == "Hi." and [c for c, _ in want.complete_calls()] == ["get_weather"]
    for bad in BAD_TOOLS + [iter(TOOLS)]:
        for spec in CHUNKINGS[:4]:
            got = _drive(name, chunk(text, spec, r.special_tokens), bad)
            assert not check.compare(got, want), (bad, spec, check.compare(got, want))
        assert not check.compare(check.whole(parsers.get(name)(), text, ()), want)


def test_qwen3_coder_integer_value_with_a_number_as_tools():
    # the report's case: `\n12\n</parameter>...` reached content whole (the int tools raised mid-call)
    text = "<tool_call>\n<function=f>\n<parameter=a>\n12\n</parameter>\n</function>\n</tool_call>"
    for deltas in ([text], list(text), chunk(text, "fixed:3")):
        got = _drive("qwen3_coder", deltas, 5)
        assert (got.content, got.complete_calls()) == ("", [("f", {"a": "12"})]), deltas


# --------------------------------------------------------------------------- held whitespace
def _peak(name, prefix, ws, n):
    parser = parsers.get(name)()
    parser.parse_streaming_increment(prefix, [])
    piece = ws * 4
    tracemalloc.start()
    try:
        for _ in range(n // 4):
            parser.parse_streaming_increment(piece[:], [])
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("name", ["deepseek_v3", "deepseek_v31"])
def test_whitespace_inside_a_calls_block_is_held_bounded(name):
    """Whitespace between the block opener and a call was kept as a list of its pieces (64k spaces: 1 MB);
    now as run lengths (base.Layout): memory does not grow with it."""
    opener = "Hi.<｜tool▁calls▁begin｜>"
    for ws in (" ", "\n"):
        small, large = _peak(name, opener, ws, 4096), _peak(name, opener, ws, 65536)
        assert large < 8000 and large < small * 2 + 2000, (ws, small, large)


@pytest.mark.parametrize("name", ["deepseek_v3", "deepseek_v31"])
def test_whitespace_inside_a_calls_block_is_layout_until_text_or_past_the_bound(name):
    from callscale.parsers.base import MAX_LAYOUT_RUNS

    r = render.get(name)
    block = r.render([Call("get_weather", ARGS)])
    opener = "<｜tool▁calls▁begin｜>"
    assert block.startswith(opener)
    calls = [("get_weather", ARGS)]
    assert_parses(name, "Hi." + opener + " " * 300 + "\n" + block[len(opener):], "Hi.", calls)
    # whitespace of more runs than the bound is decided as content, by the same rule at every split
    many = " \n" * MAX_LAYOUT_RUNS
    assert_parses(name, "Hi." + opener + many + block[len(opener):], "Hi." + many, calls)


# --------------------------------------------------------------------------- a namespaced tool name
#: Names as MCP clients and other gateways spell them (schema.TOOL_NAME: one rule for every format).
NAMESPACED = ["server:tool-name", "mcp.server/read_file", "@org/pkg.tool", "github__create_issue", "工具.搜索"]
#: Python call syntax (vLLM reads these calls with ``ast``): a name is a dotted Python name (docs/formats.md).
PYTHON_SYNTAX = {"llama4_pythonic"}


@pytest.mark.parametrize("name", NAMES)
def test_a_namespaced_tool_name_is_a_call_at_any_split(name):
    r = render.get(name)
    for tool in NAMESPACED:
        if name in PYTHON_SYNTAX and not tool.replace(".", "").replace("_", "").isalnum():
            continue
        text = r.render([Call(tool, {"city": "Paris"})], content="Hi.")
        tools = [{"type": "function", "function": {"name": tool, "parameters": {
            "type": "object", "properties": {"city": {"type": "string"}}}}}]
        assert_parses(name, text, "Hi.", [(tool, {"city": "Paris"})], tools=tools,
                      special_tokens=r.special_tokens, strip_content=True)


def test_gemma4_mcp_call_from_the_report():
    # Gemma 4 calling an MCP tool: the whole well-formed call came back as content (":" was barred)
    text = 'Let me look.<|tool_call>call:fs:read-file{path:<|"|>/tmp/a.txt<|"|>,lines:20}<tool_call|>'
    assert_parses("gemma4", text, "Let me look.", [("fs:read-file", {"path": "/tmp/a.txt", "lines": 20})])


@pytest.mark.parametrize("name", ["gemma4", "glm47", "minimax_m2", "minimax_m3", "kimi_k3", "qwen3_coder"])
def test_a_name_with_markup_characters_is_still_no_call(name):
    """The rule's other side: a head whose name holds whitespace or a markup character is no call."""
    r = render.get(name)
    for bad in ["get weather", "a{b", 'a"b', "a,b"]:
        text = r.render([Call(bad, {"city": "Paris"})], content="Hi.")
        for got in (check.whole(parsers.get(name)(), text, []),
                    _drive(name, list(text), [])):
            assert got.complete_calls() == [], (bad, got)


#: The formats whose frame, not the characters, ends a name (schema.FRAMED_NAME; docs/formats.md, "Tool names").
FRAMED = ["deepseek_v3", "deepseek_v31", "deepseek_v32", "deepseek_v4", "deepseek_v41", "kimi_k2", "gpt_oss",
          "mistral", "qwen3", "llama3_json"]
#: Names no client dispatches or no server encodes: a control character, a lone surrogate, only whitespace.
UNSERVABLE = ["get\x01weather", "get\nweather", "x\ud800", "\t", "\x7f"]


def test_every_tool_name_is_a_framed_name():
    from callscale.parsers.schema import FRAMED_NAME, TOOL_NAME, is_framed_name, is_tool_name

    for text in NAMESPACED + ["get_weather", "a", "名前", "get weather", "a<b>", 'q"', "a{b}", " x "] + UNSERVABLE:
        assert not is_tool_name(text) or is_framed_name(text), text
    assert [is_framed_name(t) for t in UNSERVABLE] == [False] * len(UNSERVABLE)
    assert [is_framed_name(t) for t in ["get weather", "a<b>", "a{b}", "名前"]] == [True] * 4
    assert not is_framed_name(None) and not is_framed_name("") and not is_framed_name(" ")
    assert TOOL_NAME.pattern.startswith("[^\\s") and "\\ud800" in FRAMED_NAME.pattern


@pytest.mark.parametrize("name", FRAMED)
def test_a_framed_name_no_client_dispatches_is_no_call(name):
    """The one rule's part that holds in every format: no control character, no lone surrogate, not only whitespace."""
    r = render.get(name)
    for bad in UNSERVABLE:
        if name == "gpt_oss" and bad.strip() and not bad.isprintable() and any(c.isspace() for c in bad):
            continue  # a harmony header ends the recipient at whitespace: 'functions.get' is the frame's name
        text = r.render([Call(bad, {"city": "Paris"})], content="Hi.")
        for got in (check.whole(parsers.get(name)(), text, []), _drive(name, list(text), [])):
            assert got.complete_calls() == [], (bad, got)


@pytest.mark.parametrize("name", ["deepseek_v3", "deepseek_v31", "deepseek_v32", "deepseek_v4", "kimi_k2", "qwen3",
                                  "llama3_json"])
def test_a_framed_name_with_markup_characters_is_a_call(name):
    """Where the frame ends the name, its characters are the tool list's to judge (as vLLM's parsers take them)."""
    r = render.get(name)
    for tool in ["get weather", "a{b}", "工具 搜索"]:
        text = r.render([Call(tool, {"city": "Paris"})], content="Hi.")
        assert_parses(name, text, "Hi.", [(tool, {"city": "Paris"})], special_tokens=r.special_tokens,
                      strip_content=True)


# --------------------------------------------------------------------------- repeated tags, stray closers (reports)
@pytest.mark.parametrize("name", ["glm45", "glm47"])
def test_a_key_tag_written_twice_is_read_once(name):
    # vLLM PR #54971: '<arg_key>path</arg_key></arg_key>' gave the key 'path</arg_key>'
    tools = [{"type": "function", "function": {"name": "ls", "parameters": {
        "type": "object", "properties": {"path": {"type": "string"}, "n": {"type": "integer"}}}}}]
    for text in ["<tool_call>ls<arg_key>path</arg_key></arg_key><arg_value>/tmp</arg_value></tool_call>",
                 "<tool_call>ls<arg_key><arg_key>path</arg_key><arg_value>/tmp</arg_value></tool_call>",
                 "<tool_call>ls<arg_key>path</arg_key>\n</arg_key>\n<arg_value>/tmp</arg_value>"
                 "<arg_key>n</arg_key></arg_key><arg_value>2</arg_value></tool_call>"]:
        args = {"path": "/tmp", "n": 2} if "<arg_key>n" in text else {"path": "/tmp"}
        assert_parses(name, "Hi." + text, "Hi.", [("ls", args)], tools=tools)
    # key text before a second opener is still a broken key: no call, no markup in content
    assert_parses(name, "Hi.<tool_call>ls<arg_key>pa<arg_key>th</arg_key><arg_value>x</arg_value></tool_call>Bye.",
                  "Hi.Bye.", [], tools=tools, broken=True)


NO_ARG_TOOLS = [{"type": "function", "function": {"name": "tool_12", "parameters": {"type": "object", "properties": {}}}},
                {"type": "function", "function": {"name": "now"}}]


@pytest.mark.parametrize("name", ["glm45", "glm47"])
def test_a_stray_closer_after_a_declared_no_argument_tool_is_that_call(name):
    # fw-ai-external/python-sdk #119: GLM 5.2 writes '<tool_call>tool_12</arg_value>' on no-argument calls
    for tool in ("tool_12", "now"):
        for tag in ("</arg_value>", "<arg_value>", "</arg_key>"):
            assert_parses(name, f"Hi.<tool_call>{tool}{tag}</tool_call>Bye.", "Hi.Bye.", [(tool, {})],
                          tools=NO_ARG_TOOLS)
            assert_parses(name, f"Hi.<tool_call>{tool}{tag}\n</tool_call>", "Hi.", [(tool, {})], tools=NO_ARG_TOOLS)
            # not followed by </tool_call>: still broken (its text is no call)
            assert_parses(name, f"Hi.<tool_call>{tool}{tag} Bye.", "Hi. Bye.", [], tools=NO_ARG_TOOLS)
    # a tool that takes arguments, or one the request does not declare: broken, as before
    assert_parses(name, "Hi.<tool_call>get_weather</arg_value></tool_call>Bye.", "Hi.Bye.", [], tools=TOOLS)
    assert_parses(name, "Hi.<tool_call>other</arg_value></tool_call>Bye.", "Hi.Bye.", [], tools=NO_ARG_TOOLS)


@pytest.mark.parametrize("name", ["glm45", "glm47"])
def test_a_declared_name_run_together_with_its_first_key_is_read_apart(name):
    # vLLM PR #47190: '<tool_call>send_command_to_shellcommand</arg_key>' (the first <arg_key> missing)
    tools = [{"type": "function", "function": {"name": "send", "parameters": {
        "type": "object", "properties": {"command": {"type": "string"}, "n": {"type": "integer"}}}}},
             {"type": "function", "function": {"name": "send_command", "parameters": {
                 "type": "object", "properties": {"x": {"type": "string"}}}}}]
    text = "<tool_call>sendcommand</arg_key><arg_value>ls</arg_value><arg_key>n</arg_key><arg_value>2</arg_value></tool_call>"
    assert_parses(name, text, "", [("send", {"command": "ls", "n": 2})], tools=tools)
    # the longest declared name whose parameter the rest is
    text = "<tool_call>send_commandx</arg_key><arg_value>1</arg_value></tool_call>"
    assert_parses(name, text, "", [("send_command", {"x": "1"})], tools=tools)
    # no declared name with that parameter, or no tool list: broken, as before
    for tools_ in (tools, []):
        assert_parses(name, "Hi.<tool_call>sendpath</arg_key><arg_value>ls</arg_value></tool_call>", "Hi.", [],
                      tools=tools_)


@pytest.mark.parametrize("name", ["glm45", "glm47"])
def test_a_call_opener_in_place_of_the_first_key_opener(name):
    # getsigit/sigit #94, ormandj/sglang-glm53-flash-sm120 #5: '<tool_call>run_command<tool_call>command</arg_key>'
    tools = [{"type": "function", "function": {"name": "run", "parameters": {
        "type": "object", "properties": {"command": {"type": "string"}, "n": {"type": "integer"}}}}}]
    text = "<tool_call>run<tool_call>command</arg_key><arg_value>ls -l</arg_value><arg_key>n</arg_key><arg_value>2</arg_value></tool_call>"
    assert_parses(name, "Hi." + text, "Hi.", [("run", {"command": "ls -l", "n": 2})], tools=tools)
    # an undeclared tool, or a key the tool does not take: as before (the first opener is text, the second's
    # name breaks at the stray </arg_key>)
    for tools_, key in (([], "command"), (tools, "path")):
        text = f"<tool_call>run<tool_call>{key}</arg_key><arg_value>ls</arg_value></tool_call>Bye."
        assert_parses(name, "Hi." + text, "Hi.<tool_call>runBye.", [], tools=tools_)
    # the second opener starting a real call: the first opener and its name are text, as before
    call = "<tool_call>run<arg_key>command</arg_key><arg_value>ls</arg_value></tool_call>"
    assert_parses(name, "Hi.<tool_call>run" + call, "Hi.<tool_call>run", [("run", {"command": "ls"})], tools=tools)


@pytest.mark.parametrize("name", ["deepseek_v32", "deepseek_v4"])
def test_dsml_reads_the_other_versions_block_name(name):
    # sglang #40236: a V4 model writes V3.2's <｜DSML｜function_calls>
    from callscale.parsers.dsml import SPELLINGS, V32, V4

    other = V4 if SPELLINGS[name] is V32 else V32
    r = render.get(name)
    text = r.render([Call("get_weather", ARGS)], content="Hi.").replace(SPELLINGS[name].block, other.block)
    assert other.block in text
    assert_parses(name, text, "Hi.", [("get_weather", ARGS)], tools=TOOLS, special_tokens=r.special_tokens)


@pytest.mark.parametrize("name", ["deepseek_v32", "deepseek_v4", "deepseek_v41"])
def test_dsml_a_parameter_closer_with_no_opener_breaks_the_call(name):
    # sglang PR #39435: '<parameter name="enabled">true</｜DSML｜parameter>' (the opener misspelled) made set_flag({})
    from callscale.parsers.dsml import SPELLINGS

    sp = SPELLINGS[name]
    text = (f'Hi.\n\n<{sp.block}>\n<{sp.invoke} name="set_flag">\n<parameter name="enabled">true</{sp.parameter}>\n'
            f'</{sp.invoke}>\n</{sp.block}>')
    assert_parses(name, text, "Hi.", [], special_tokens=render.get(name).special_tokens, broken=True)
    # stray text in an invoke with no such closer after it is still content, as before
    text = f'<{sp.block}>\n<{sp.invoke} name="f">\n oops \n</{sp.invoke}>\n</{sp.block}>'
    assert_parses(name, text, "oops", [("f", {})], special_tokens=render.get(name).special_tokens)


@pytest.mark.parametrize("text,args", [
    ('call:f{q:Paris, France<|"|>,n:5}', {"q": "Paris, France", "n": 5}),     # sglang PR #39240
    ('call:f{q:weather in Tokyo<|"|>}', {"q": "weather in Tokyo"}),
    ('call:f{q:<|"|>look<|"|>n:90}', {"q": "look", "n": 90}),                   # yzma PR #243
    ('call:f{q:<|"|>a<|"|> n:[1,2]}', {"q": "a", "n": [1, 2]}),
    ('call:f{q:["x", \'y\'],n:{"k": "v\\"w"}}', {"q": ["x", "y"], "n": {"k": 'v"w'}}),  # vLLM #51284
    ("call:f{\"q\":'it\\'s'}", {"q": "it's"}),
    ("call:f{'q':1,\"\":2}", {"'q'": 1, '""': 2}),  # a bare key with quotes stays as written (the template's)
])
def test_gemma4_recovers_strings_written_otherwise(text, args):
    assert_parses("gemma4", "Hi.<|tool_call>" + text + "<tool_call|>", "Hi.", [("f", args)],
                  special_tokens=render.get("gemma4").special_tokens)


@pytest.mark.parametrize("text", [
    'call:f{q:Paris,n:<|"|>x<|"|>}',   # a closing <|"|> must be followed by , } or ]: here it opens a string
    'call:f{q:"x}',                   # an unterminated quote ends at the call's token
    "call:f{q:<|\"|>a<|\"|>n}",         # no key after the missing comma
])
def test_gemma4_string_recoveries_stay_bounded(text):
    got = check.whole(parsers.get("gemma4")(), "Hi.<|tool_call>" + text + "<tool_call|>Bye.", [])
    assert got.complete_calls() == [] and got.content == "Hi.Bye."


# --------------------------------------------------------------------------- an empty envelope
#: Envelopes that hold only whitespace: markup (base._s_envelope, one state for the envelope formats).
ENVELOPES = ["<tool_call></tool_call>", "<tool_call>\n</tool_call>", "<tool_call>\n  \n\t</tool_call>"]


@pytest.mark.parametrize("name", ["qwen3", "qwen3_coder"])
def test_an_empty_envelope_is_dropped_as_markup_at_any_split(name):
    for env in ENVELOPES:
        assert_parses(name, "Hi." + env + "Bye.", "Hi.Bye.", [])
        assert_parses(name, "Hi.\n" + env + "\nBye.", "Hi.Bye.", [])  # the format's layout newlines around it
        # then a real call: the envelope does not change it
        call = render.get(name).render([Call("get_weather", ARGS)])
        assert_parses(name, "Hi." + env + call, "Hi.", [("get_weather", ARGS)], tools=TOOLS, strip_content=True)


@pytest.mark.parametrize("name", ["qwen3", "qwen3_coder"])
def test_an_envelope_with_other_text_stays_content(name):
    for text in ["Hi.<tool_call>\n</x>Bye.", "Hi.<tool_call> see </tool_call>"]:
        assert_parses(name, text, text, [])
    # cut by the end of the output inside the closing tag: a cut call's markup, dropped
    assert_parses(name, "Hi.<tool_call>\n</tool_", "Hi.", [])


# --------------------------------------------------------------------------- a stray closer
@pytest.mark.parametrize("name", ["glm45", "glm47"])
def test_a_stray_closer_after_the_name_is_a_broken_call(name):
    """``<tool_call>NAME</arg_value></tool_call>`` (glm47, as reported): no call, no markup in content; the base
    broken-call state drops it up to ``</tool_call>``; prose after it without that tag is content."""
    for tag in ("</arg_value>", "<arg_value>", "</arg_key>"):
        assert_parses(name, "Hi.<tool_call>get_weather" + tag + "</tool_call>Bye.", "Hi.Bye.", [])
        assert_parses(name, "Hi.<tool_call>" + tag + "</tool_call>Bye.", "Hi.Bye.", [])
        assert_parses(name, "Hi.<tool_call>get_weather" + tag + " Bye.", "Hi. Bye.", [])
        # another call after it is read as usual
        call = render.get(name).render([Call("get_weather", ARGS)])
        assert_parses(name, "Hi.<tool_call>x" + tag + call, "Hi.", [("get_weather", ARGS)], tools=TOOLS,
                      strip_content=True)


# --------------------------------------------------------------------------- a closing tag inside an array value
def _array_tools(kind):
    return [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {
        "a": {"type": kind}, "b": {"type": "string"}}}}}]


#: A format's closing tags as text inside a JSON string of an array or object value (schema typing 6).
CLOSERS_IN_JSON = {
    "kimi_k3": ["<|close|>argument<|sep|><|open|>argument", "<|close|>argument<|sep|><|close|>call<|sep|>"],
    "glm45": ["</arg_value>\n<arg_key>", "</arg_value>"],
    "glm47": ["</arg_value><arg_key>", "</arg_value></tool_call>"],
}


@pytest.mark.parametrize("name", sorted(CLOSERS_IN_JSON))
def test_a_closing_tag_inside_a_json_string_of_an_array_value_is_value_text(name):
    r = render.get(name)
    for closer in CLOSERS_IN_JSON[name]:
        for value, kind in ((["x" + closer + "y"], "array"), ({"k": closer}, "object"), ([[closer], 1], "array")):
            args = {"a": value, "b": "z"}
            text = r.render([Call("f", args)], content="Hi.")
            assert_parses(name, text, "Hi.", [("f", args)], tools=_array_tools(kind),
                          special_tokens=r.special_tokens, chunkings=CHUNKINGS[:6])


def test_kimi_k3_the_minimal_case_from_the_property_test():
    # tests/parsers/test_kimi_k3.py::test_rendered_calls_parse_back_under_any_split, minimized: the value's
    # closing tag inside a JSON string of an array, confirmed by "<|open|>argument" after it
    text = render.get("kimi_k3").render([Call("f", {"a": ["<|close|>argument<|sep|><|open|>argument"]})])
    assert_parses("kimi_k3", text, "", [("f", {"a": ["<|close|>argument<|sep|><|open|>argument"]})])


# --------------------------------------------------------------------------- MiniMax M3: a member's schema in a nested union
def test_minimax_m3_an_array_member_typed_through_a_nested_union():
    # tests/parsers/test_minimax_m3.py's property test, minimized: {'A': [[None], [None, [None]]]}; the items schema is
    # a union whose array branch sits in a nested anyOf: its members were untyped ("null" the string)
    items = {"anyOf": [{"type": "null"}, {"anyOf": [{"type": "null"},
                                                    {"type": "array", "items": {"type": "null"}}]}]}
    tools = [{"type": "function", "function": {"name": "A", "parameters": {"type": "object", "properties": {
        "A": {"type": "array", "items": {"type": "array", "items": items}}}}}}]
    args = {"A": [[None], [None, [None]]]}
    r = render.get("minimax_m3")
    assert_parses("minimax_m3", r.render([Call("A", args)]), "", [("A", args)], tools=tools,
                  special_tokens=r.special_tokens)


def test_container_schema_follows_nested_unions_and_refs():
    from callscale.parsers.schema import container_schema

    arr = {"type": "array", "items": {"type": "integer"}}
    assert container_schema({"anyOf": [{"type": "null"}, {"oneOf": [{"type": "string"}, arr]}]}, "array") is arr
    root = {"$defs": {"L": arr}}
    assert container_schema({"anyOf": [{"$ref": "#/$defs/L"}]}, "array", root) is arr
    obj = {"type": "object", "additionalProperties": {"type": "string"}}
    assert container_schema({"allOf": [{"anyOf": [obj]}]}, "object") is obj
    cyclic = {"anyOf": []}
    cyclic["anyOf"].append(cyclic)
    assert container_schema(cyclic, "array") is cyclic  # nothing found: the schema itself, no endless walk
    assert container_schema("not a schema", "array") is None


# --------------------------------------------------------------------------- MiniMax M3: an omitted opening tag
NS = "]<]minimax[>["


def _m3(body):
    return (f'Saving.\n{NS}<tool_call>\n{NS}<invoke name="save_file">{body}{NS}</invoke>{NS}</tool_call>')


def test_minimax_m3_reads_a_first_parameter_whose_opening_tag_is_omitted():
    # vLLM #51073 / PR #51075: deployed M3 checkpoints write the first parameter without its opening tag
    text = _m3(f"{NS}offerta.docx{NS}</filename>{NS}<content>Hello{NS}</content>")
    want = [("save_file", {"filename": "offerta.docx", "content": "Hello"})]
    assert_parses("minimax_m3", text, "Saving.", want)
    tools = [{"type": "function", "function": {"name": "save_file", "parameters": {"type": "object", "properties": {
        "filename": {"type": "string"}, "content": {"type": "string"}, "copies": {"type": "integer"}}}}}]
    assert_parses("minimax_m3", text, "Saving.", want, tools=tools)
    # the value is typed by its key's schema once the closing tag names it
    text = _m3(f"{NS}3{NS}</copies>{NS}<filename>a.txt{NS}</filename>")
    assert_parses("minimax_m3", text, "Saving.", [("save_file", {"copies": 3, "filename": "a.txt"})], tools=tools)


def test_minimax_m3_an_omitted_opening_tag_without_its_key_is_a_broken_call():
    tools = [{"type": "function", "function": {"name": "save_file", "parameters": {"type": "object", "properties": {
        "filename": {"type": "string"}}}}}]
    for body in (f"{NS}x{NS}<filename>a{NS}</filename>",   # an opening tag after the value
                 f"{NS}x{NS}</other>",                      # a key the tool does not take
                 f"{NS}<filename>a{NS}</filename>{NS}x{NS}</filename>"):  # a repeated key
        text = _m3(body)
        # the call's name and "{" may have streamed before it broke (abandoned: DESIGN.md, invariant 5)
        for got in [check.whole(parsers.get("minimax_m3")(), text, tools)] + [
                _drive("minimax_m3", chunk(text, spec, (NS,)), tools) for spec in CHUNKINGS[:6]]:
            assert (got.content, got.complete_calls()) == ("Saving.", []), (body, got)


# --------------------------------------------------------------------------- \r\n runs after a call
@pytest.mark.parametrize("name", NAMES)
def test_a_run_of_crlf_after_a_call_gives_one_answer_at_any_split(name):
    """``\\r\\n`` repeated is two runs a pair: past base.MAX_LAYOUT_RUNS it is content, decided at the run that
    passes the bound. llama3_json held the whitespace after that run again and dropped it at the end (by
    characters one ``\\n`` fewer than whole): whitespace after the decision stays content."""
    r = render.get(name)
    one = r.render([Call("get_weather", ARGS)])
    for k in (31, 33, 40):
        ws = "\r\n" * k
        for text in (one + ws, one + ws + one, "Hi." + one + ws + "Bye."):
            whole = check.whole(parsers.get(name)(), text, [])
            assert len(whole.complete_calls()) == text.count(one)
            for spec in CHUNKINGS[:8]:
                got = _drive(name, chunk(text, spec, r.special_tokens), [])
                assert not check.compare(got, whole), (k, text[-20:], spec, check.compare(got, whole))
