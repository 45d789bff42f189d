"""The Muse Glimmer parser (``muse_glimmer``): rendered calls read back under every split, the message framing
(headers, reasoning, user and tool messages), channel scoping, typed values, literal closing tags, cut and broken
output (docs/formats.md, "Muse Glimmer")."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from callscale import parsers
from callscale.parsers.muse_glimmer import (ASSISTANT, BLOCK_CLOSE, BLOCK_OPEN, EOM, EOT, INVOKE_CLOSE, INVOKE_OPEN,
                                            MESSAGE, PARAM_CLOSE, PARAM_OPEN, START, TAG_END, TO)
from callscale.workloads import render
from callscale.workloads.render import Call
from support import (CHUNKINGS, assert_arguments_stream, assert_odd_output_agrees, assert_parses, assert_round_trip,
                     calls_strategy)

P = "muse_glimmer"
R = render.get(P)
SPECIALS = R.special_tokens


def tool(name, **types):
    props = {k: {"type": t} for k, t in types.items()}
    return {"type": "function", "function": {"name": name, "parameters": {"type": "object", "properties": props}}}


def header(recipient, first=False):
    return ("" if first else START + ASSISTANT) + TO + recipient + MESSAGE


def block(name, *params):
    return (f"{BLOCK_OPEN}\n{INVOKE_OPEN}{name}{TAG_END}\n" + "".join(f"{PARAM_OPEN}{k}{TAG_END}{v}{PARAM_CLOSE}\n"
                                                                       for k, v in params)
            + f"{INVOKE_CLOSE}\n{BLOCK_CLOSE}")


def check_all(text, content, calls, tools=(), reasoning=""):
    assert_parses(P, text, content, calls, tools=tools, chunkings=CHUNKINGS, special_tokens=SPECIALS,
                  reasoning=reasoning)


def test_registered_with_a_renderer():
    assert P in parsers.names() and P in render.names()
    assert parsers.get(P).name == P and R.opener == BLOCK_OPEN


def test_the_renderer_writes_the_templates_layout():
    # llama.cpp's muse-glimmer.jinja: one message a call after the prompt's <|start|>assistant, render_atem's lines
    # joined by newlines, the last message's end token <|eot|>
    text = R.render([Call("get_weather", {"city": "Paris", "days": 3, "hot": True, "tags": ["a"]})], content="Hi.")
    assert text == (' to=user<|message|>Hi.<|eom|><|start|>assistant to=get_weather<|message|><atem:function_calls>\n'
                    '<atem:invoke name="get_weather">\n<atem:parameter name="city">Paris</atem:parameter>\n'
                    '<atem:parameter name="days">3</atem:parameter>\n<atem:parameter name="hot">true</atem:parameter>\n'
                    '<atem:parameter name="tags">["a"]</atem:parameter>\n</atem:invoke>\n</atem:function_calls><|eot|>')


def test_reasoning_answer_and_two_tool_messages():
    text = (header("self", True) + "Two calls." + EOM + header("user") + "On it." + EOM
            + header("get_weather") + block("get_weather", ("city", "Paris"), ("days", "3")) + EOM
            + header("get_time") + block("get_time", ("tz", "UTC")) + EOM)
    tools = [tool("get_weather", city="string", days="integer"), tool("get_time", tz="string")]
    check_all(text, "On it.", [("get_weather", {"city": "Paris", "days": 3}), ("get_time", {"tz": "UTC"})], tools,
              reasoning="Two calls.")


def test_atem_markup_in_reasoning_or_an_answer_is_no_call():
    quoted = block("rm", ("path", "/"))
    text = header("self", True) + "I could write " + quoted + EOM + header("user") + "Or " + quoted + "." + EOT
    check_all(text, "Or " + quoted + ".", [], reasoning="I could write " + quoted)


def test_a_block_whose_header_the_model_left_out_is_a_call():
    # llama.cpp's trigger on <atem:function_calls> alone: the header is optional
    check_all(block("ping") + EOM, "", [("ping", {})])
    check_all(header("user", True) + "Hi." + EOM + block("ping") + EOM, "Hi.", [("ping", {})])


def test_a_bare_message_token_opens_content_and_no_header_is_content():
    check_all(MESSAGE + "Hello." + EOT, "Hello.", [])
    check_all("Hello, world to=you.", "Hello, world to=you.", [])


def test_a_tool_message_without_a_block_is_content():
    check_all(header("get_weather", True) + "not a block" + EOM, "not a block", [])


def test_values_are_typed_by_the_schema_and_strings_kept_verbatim():
    text = header("f", True) + block("f", ("n", "12"), ("s", " 12 "), ("o", '{"a": [1, null]}'), ("b", "false")) + EOM
    check_all(text, "", [("f", {"n": 12, "s": " 12 ", "o": {"a": [1, None]}, "b": False})],
              [tool("f", n="integer", s="string", o="object", b="boolean")])


def test_closing_tags_inside_a_value_are_its_text():
    value = f"a {PARAM_CLOSE} b {INVOKE_CLOSE}\n{BLOCK_CLOSE} c"
    text = header("write_file", True) + block("write_file", ("content", value)) + EOM
    check_all(text, "", [("write_file", {"content": value})], [tool("write_file", content="string")])


def test_a_call_cut_by_the_end_of_the_output_is_dropped():
    full = header("user", True) + "Hi." + EOM + header("f") + block("f", ("a", "1")) + EOM
    cut = full.index(START + ASSISTANT + TO + "f")
    inside = {i for t in SPECIALS for j in range(len(full)) if full.startswith(t, j) for i in range(j + 1, j + len(t))}
    for k in range(cut, len(full) - len(f"{INVOKE_CLOSE}\n{BLOCK_CLOSE}{EOM}")):
        if k in inside:  # (a special token is whole)
            continue
        got = parsers.get(P)().detect_and_parse(full[:k], [tool("f", a="integer")])
        assert got.normal_text == "Hi." and all(c.name is None or c.name == "f" for c in got.calls), k


def test_arguments_stream_before_the_call_ends():
    assert_arguments_stream(P)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(calls=calls_strategy(SPECIALS), content=st.sampled_from(["", "Hi.", "a <b> c"]),
       cuts=st.lists(st.integers(0, 2000), max_size=6))
def test_round_trip_under_any_split(calls, content, cuts):
    calls = [Call(c.name, {k: v for k, v in c.arguments.items() if isinstance(v, str) and k.strip()})
             for c in calls]  # (untyped: strings; keys the template writes)
    calls = [c for c in calls if all('"' not in k and "<" not in k and ">" not in k and "\n" not in k
                                     for k in c.arguments)]
    assert_round_trip(P, calls, content, "", cuts)


def test_odd_output_agrees_streamed_and_whole():
    pieces = [START, ASSISTANT, TO, "self", "user", "f", MESSAGE, EOM, EOT, BLOCK_OPEN, BLOCK_CLOSE, INVOKE_OPEN,
              INVOKE_CLOSE, PARAM_OPEN, PARAM_CLOSE, TAG_END, "x", " ", "\n", "<", "to="]
    assert_odd_output_agrees(P, pieces, seed=7)


def test_a_tool_message_whose_block_follows_whitespace_or_prose_is_a_call():
    # docs/formats.md, Muse Glimmer: a tool message holds one ATEM block (its body is content only when it holds
    # none); DESIGN.md: markup never reaches content. A newline after <|message|> (or prose before the block) made
    # the whole body content: the call was lost and its ATEM markup came out as content.
    for before, content in [("\n", ""), ("\n\n  ", ""), (" ", ""), ("Calling now.\n", "Calling now.\n")]:
        text = header("user", True) + "Hi." + EOM + header("f") + before + block("f", ("a", "1")) + EOM + " ok"
        check_all(text, "Hi." + content + " ok", [("f", {"a": "1"})])
    # a tool message with no block stays content, its whitespace too
    check_all(header("f", True) + "\n not a block" + EOM, "\n not a block", [])
    check_all(header("f", True) + "\n " + EOM + "x", "\n x", [])
    # the whitespace is kept where the block starts no call (its text content), or the body is only whitespace
    check_all(header("f", True) + "\n" + BLOCK_OPEN + "\n" + EOM + " after", "\n" + BLOCK_OPEN + "\n after", [])
    check_all(header("f", True) + "\n", "\n", [])
