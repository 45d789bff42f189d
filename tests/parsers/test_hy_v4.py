"""The Hunyuan V4 parser (``hy_v4``): rendered calls read back under every split and every token suffix, typed
values, literal closing tags, empty and broken calls, cut output, SMG's test cases (docs/formats.md,
"Hunyuan V4")."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from callscale import parsers
from callscale.parsers.hy_v4 import SUFFIX, tags
from callscale.workloads import render
from callscale.workloads.chunking import chunk
from callscale.workloads.render import Call
from callscale.workloads.render.hy_v4 import HyV4Renderer
from support import CHUNKINGS, assert_parses, json_values, stream_outcome, whole_outcome

P = "hy_v4"
R = render.get(P)
#: the suffixes of SMG's tests: none, the public checkpoints', another checkpoint's
SUFFIXES = ("", SUFFIX, ":another-checkpoint")


def tool(name, /, **types):
    """A tool in OpenAI form whose parameters have the given JSON-schema types (or schemas)."""
    props = {k: (t if isinstance(t, dict) else {"type": t}) for k, t in types.items()}
    return {"type": "function", "function": {"name": name, "parameters": {"type": "object", "properties": props}}}


def block(t, *calls):
    return t.calls_open + "".join(calls) + t.calls_close


def call(t, name, *params):
    return t.call_open + name + "".join(params) + t.call_close


def param(t, key, value):
    return t.key_open + key + t.key_close + t.value_open + value + t.value_close


def check_all(text, content, calls, tools=(), suffix=SUFFIX):
    assert_parses(P, text, content, calls, tools=tools, chunkings=CHUNKINGS, special_tokens=tags(suffix).tokens)


def test_registered_with_a_renderer():
    assert P in parsers.names() and P in render.names()
    assert parsers.get(P).name == P and R.opener == "<tool_calls:6124c78e>"


def test_the_renderer_writes_the_engines_layout():
    # vLLM's hy_v4 structural tag: the tags back to back, no separator; values verbatim
    text = R.render([Call("get_weather", {"city": "Paris", "days": 3}), Call("ping", {})], content="Hi.")
    assert text == ("Hi.<tool_calls:6124c78e><tool_call:6124c78e>get_weather<arg_key:6124c78e>city</arg_key:6124c78e>"
                    "<arg_value:6124c78e>Paris</arg_value:6124c78e><arg_key:6124c78e>days</arg_key:6124c78e>"
                    "<arg_value:6124c78e>3</arg_value:6124c78e></tool_call:6124c78e><tool_call:6124c78e>ping"
                    "</tool_call:6124c78e></tool_calls:6124c78e>")


@pytest.mark.parametrize("suffix", SUFFIXES)
@pytest.mark.parametrize("calls,content", [
    ([Call("get_weather", {"city": "Paris", "days": 3})], "Hi."),
    ([Call("a", {"x": "1"}), Call("b", {}), Call("c", {"y": "z", "w": ""})], ""),
    ([Call("write_file", {"path": "a.py", "content": "if a < b:\n    print('<tag>')\n"})], "Writing.\n"),
])
def test_rendered_calls_read_back_under_every_split_and_suffix(calls, content, suffix):
    tools = [tool("get_weather", city="string", days="integer"), tool("a", x="string"),
             tool("c", y="string", w="string"), tool("write_file", path="string", content="string")]
    text = HyV4Renderer(suffix).render(calls, content=content)
    check_all(text, content, [(c.name, dict(c.arguments)) for c in calls], tools, suffix)


def test_smg_all_split_points_case():
    # SMG's hy4_all_split_points_and_typed_arguments, for each suffix: a value holding </tool_call> and quotes,
    # an anyOf string/boolean typed TRUE -> true, a zero-argument call, text after the block
    tools = [tool("run", text="string", count="integer", mixed={"anyOf": [{"type": "string"}, {"type": "boolean"}]})]
    for suffix in SUFFIXES:
        t = tags(suffix)
        value = f'  中文🙂"true" &amp; {t.call_close}  '
        text = "hello" + block(t, call(t, "run", param(t, "text", value), param(t, "count", "42"),
                                       param(t, "mixed", "true")), call(t, "run")) + "tail"
        check_all(text, "hellotail", [("run", {"text": value, "count": 42, "mixed": True}), ("run", {})], tools, suffix)


def test_the_suffix_is_learned_per_block():
    a, b = tags(""), tags(SUFFIX)
    text = "x" + block(a, call(a, "f", param(a, "k", "1"))) + "y" + block(b, call(b, "g")) + "z"
    got = whole_outcome(P, text)
    assert (got.content, got.complete_calls()) == ("xyz", [("f", {"k": "1"}), ("g", {})])
    # another suffix's tokens inside a block are text of the block, not its markup
    text = block(b, call(b, "f", param(b, "k", a.value_close + "v")))
    got = whole_outcome(P, text)
    assert got.complete_calls() == [("f", {"k": a.value_close + "v"})]


@pytest.mark.parametrize("text", ["<tool_calls foo>", "<tool_calls:>", "<tool_calls: x>", "<tool_callsx>",
                                  "<tool_calls:" + "a" * 64 + ">"])
def test_an_opener_with_a_bad_suffix_is_text(text):
    check_all("a " + text + " b", "a " + text + " b", [])


def test_values_are_typed_by_the_schema():
    t = tags()
    tl = tool("f", n="integer", x="number", ok="boolean", items="array", opts="object", maybe=["string", "null"])
    text = block(t, call(t, "f", param(t, "n", "42"), param(t, "x", "1.5"), param(t, "ok", "true"),
                         param(t, "items", '[1, "two"]'), param(t, "opts", '{"k": null}'), param(t, "maybe", "null")))
    check_all(text, "", [("f", {"n": 42, "x": 1.5, "ok": True, "items": [1, "two"], "opts": {"k": None},
                                "maybe": None})], [tl])


def test_without_a_schema_a_value_is_its_text():
    t = tags()
    check_all(block(t, call(t, "f", param(t, "n", "42"), param(t, "s", " padded "))), "",
              [("f", {"n": "42", "s": " padded "})])


def test_literal_closing_tags_in_a_value_are_value_text():
    t = tags()
    value = f"a{t.value_close} b\n{t.call_close} c{t.value_close}x"
    check_all("Hi." + block(t, call(t, "f", param(t, "code", value), param(t, "n", "1"))), "Hi.",
              [("f", {"code": value, "n": "1"})])


def test_whitespace_between_tags_is_layout():
    # the captures in public repositories show a newline after the block's opener
    t = tags()
    text = t.calls_open + "\n" + call(t, "f", "\n" + param(t, "k", "v") + "\n") + "\n" + t.calls_close
    check_all("Hi." + text, "Hi.", [("f", {"k": "v"})])


@pytest.mark.parametrize("env", ["{o}{c}", "{o}\n{c}", "{o}{co}{cc}{c}", "{o}{co} \n{cc}{c}"])
def test_an_empty_call_or_block_is_markup(env):
    t = tags()
    env = env.format(o=t.calls_open, c=t.calls_close, co=t.call_open, cc=t.call_close)
    check_all("Hi." + env + "Bye.", "Hi.Bye.", [])


def test_text_in_a_block_outside_a_call_is_content_and_ends_the_block():
    t = tags()
    check_all("Hi." + t.calls_open + "\nI changed my mind.", "Hi.\nI changed my mind.", [])


@pytest.mark.parametrize("bad", [
    "{ko}x{kc}missing_value",  # SMG: an argument without its value is no call
    "<parameter>x</parameter>",  # SMG: unannounced markup
    '{ko}bad"\nkey{kc}{vo}v{vc}',  # a bad parameter name
])
def test_a_broken_calls_text_up_to_its_end_is_dropped_and_the_next_call_is_read(bad):
    t = tags()
    bad = bad.format(ko=t.key_open, kc=t.key_close, vo=t.value_open, vc=t.value_close)
    text = "Hi." + block(t, t.call_open + "f" + bad + t.call_close, call(t, "g", param(t, "k", "v"))) + "Bye."
    for got in [whole_outcome(P, text)] + [stream_outcome(P, chunk(text, s, t.tokens)) for s in CHUNKINGS]:
        assert (got.content, got.complete_calls()) == ("Hi.Bye.", [("g", {"k": "v"})])


def test_prose_after_a_broken_call_without_its_end_is_content():
    t = tags()
    text = f"Hi.{t.calls_open}{t.call_open}f{t.key_open}k{t.key_close}wait, no. Let me explain."
    got = whole_outcome(P, text)
    assert (got.content, got.complete_calls()) == ("Hi.wait, no. Let me explain.", [])


def test_output_cut_inside_a_call_leaves_no_markup_and_abandons_the_call_until_its_end():
    t = tags()
    text = R.render([Call("f", {"a": "x" * 50})], content="Hi.")
    inside = {i for tok in t.tokens for at in range(len(text)) if text.startswith(tok, at)
              for i in range(at + 1, at + len(tok))}
    for k in range(text.index(t.calls_open) + len(t.calls_open), len(text)):
        if k in inside:
            continue  # (a special token arrives whole)
        got = whole_outcome(P, text[:k])
        done = [("f", {"a": "x" * 50})] if t.call_close in text[:k] else []
        assert (got.content, got.complete_calls()) == ("Hi.", done), (k, text[:k][-20:])


def test_a_long_value_streams_before_the_call_ends():
    t = tags()
    parser = parsers.get(P)()
    text = "Hi." + t.calls_open + t.call_open + "write_file" + t.key_open + "content" + t.key_close + t.value_open
    text += "x" * 1000
    sent = []
    for i in range(0, len(text) - 400, 7):
        sent += [c.parameters for c in parser.parse_streaming_increment(text[i:i + 7], ()).calls]
    assert len("".join(sent)) > 500


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(st.text("abk_", min_size=1, max_size=4),
                       json_values(st.text("ab zé\n\t\"'\\{}[]<>|/:,.=0", max_size=8)), max_size=3),
       st.sampled_from(CHUNKINGS), st.sampled_from(SUFFIXES))
def test_generated_arguments_read_back(arguments, spec, suffix):
    types = {k: {str: "string", bool: "boolean", int: "integer", float: "number", list: "array", dict: "object",
                 type(None): "null"}[type(v)] for k, v in arguments.items()}
    tools = [tool("f", **types)]
    text = HyV4Renderer(suffix).render([Call("f", arguments)], content="x")
    for got in (whole_outcome(P, text, tools), stream_outcome(P, chunk(text, spec, tags(suffix).tokens), tools)):
        assert got.content == "x" and got.complete_calls() == [("f", arguments)], (spec, text)


def test_outputs_of_many_suffixes_leave_no_marker_sets_behind():
    # a suffix comes from the output: its marker sets are made per block (the first _TAGS_KEPT kept), never
    # into scanner.markers' cache, which keeps every set it made for the process's life
    from callscale.parsers.scanner import markers

    before = markers.cache_info().currsize
    for n in range(200):
        t = tags(f":ckpt{n:04d}")
        got = whole_outcome(P, "x" + block(t, call(t, "f", param(t, "k", "1"))))
        assert got.complete_calls() == [("f", {"k": "1"})]
    assert markers.cache_info().currsize == before
