"""Format aliases (``callscale.parsers.ALIASES``): GLM-5.x and Poolside V1 (Laguna) are ``glm47``, Qwen3.5/3.6,
Step-3.5, BerryLM and Nemotron 3 are ``qwen3_coder`` (docs/formats.md, "GLM-5.x and Qwen3.5 / Qwen3.6", "Step-3",
"Poolside V1", "BerryLM and Nemotron 3")."""

import json

import pytest

from callscale import parsers
from callscale.cli import main
from callscale.parsers.qwen import FUNCTION_CLOSE, FUNCTION_OPEN, PARAMETER_CLOSE, PARAMETER_OPEN, TOOL_CALL_CLOSE, \
    TOOL_CALL_OPEN
from callscale.plugins import resolve
from callscale.workloads import catalog, render
from callscale.workloads.render import Call
from support import assert_parses

EXPECTED = {"berrylm": "qwen3_coder", "glm5": "glm47", "nemotron_v3": "qwen3_coder", "poolside_v1": "glm47", "qwen3_5": "qwen3_coder", "qwen3_6": "qwen3_coder",
            "step3p5": "qwen3_coder"}


def test_each_alias_is_its_format_everywhere_a_name_is_read():
    assert parsers.ALIASES == EXPECTED
    for alias, fmt in EXPECTED.items():
        assert parsers.get(alias) is parsers.get(fmt)
        assert render.get(alias) is render.get(fmt)
        spec = resolve(alias)
        assert (spec.name, spec.format, spec.factory) == (alias, fmt, parsers.get(fmt))
        assert resolve("callscale.parsers.glm:Glm47Parser", alias).format == fmt
    # aliases are not formats of their own: every built-in is measured once
    assert not set(EXPECTED) & set(parsers.names()) and not set(EXPECTED) & set(catalog.formats())


def test_an_unknown_name_lists_the_aliases():
    with pytest.raises(KeyError, match="aliases: berrylm, glm5, nemotron_v3, poolside_v1, qwen3_5, qwen3_6, step3p5"):
        parsers.get("glm6")


def test_callscale_parsers_lists_the_aliases(capsys):
    assert main(["parsers"]) == 0
    rows = {line.split()[0]: line.split()[1:] for line in capsys.readouterr().out.splitlines()[1:]}
    for alias, fmt in EXPECTED.items():
        assert rows[alias][:4] == [fmt, "alias", "of", fmt]


def qwen35_value(value):
    """A parameter value as the Qwen3.5/3.6 chat template writes it: strings verbatim, the rest ``tojson``."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def qwen35_render(calls, content=""):
    """Tool calls as the Qwen3.5/3.6 ``chat_template.jinja`` lays them out (docs/formats.md)."""
    blocks = []
    for c in calls:
        params = "".join(f"{PARAMETER_OPEN}{k}>\n{qwen35_value(v)}\n{PARAMETER_CLOSE}\n" for k, v in c.arguments.items())
        blocks.append(f"{TOOL_CALL_OPEN}\n{FUNCTION_OPEN}{c.name}>\n{params}{FUNCTION_CLOSE}\n{TOOL_CALL_CLOSE}")
    return (content + "\n\n" if content.strip() else "") + "\n".join(blocks)


def tool(name, **props):
    return {"type": "function", "function": {"name": name, "parameters": {"type": "object", "properties": props}}}


ARGS = {"path": "a.py", "force": True, "mode": None, "retries": 3, "ratio": 1.5, "tags": ["x", "y"],
        "opts": {"k": [1, None]}}
TOOLS = [tool("edit", path={"type": "string"}, force={"type": "boolean"}, mode={"type": ["string", "null"]},
              retries={"type": "integer"}, ratio={"type": "number"}, tags={"type": "array"},
              opts={"type": "object"})]


@pytest.mark.parametrize("alias", ["qwen3_5", "qwen3_6"])
def test_qwen35_scalars_written_as_json_read_as_qwen3_coder_reads_its_own(alias):
    """The one difference from Qwen3-Coder: ``true``/``null`` where Qwen3-Coder writes ``True``/``None``."""
    calls = [Call("edit", ARGS), Call("edit", {"path": "b.py", "force": False})]
    text = qwen35_render(calls, content="Editing.")
    assert "<parameter=force>\ntrue\n</parameter>" in text and "<parameter=mode>\nnull\n</parameter>" in text
    coder = render.get("qwen3_coder").render(calls, content="Editing.")
    assert text.replace("true", "True").replace("false", "False").replace("\nnull\n", "\nNone\n") == coder
    assert_parses(alias, text, "Editing.", [(c.name, dict(c.arguments)) for c in calls], tools=TOOLS)
    assert_parses(alias, coder, "Editing.", [(c.name, dict(c.arguments)) for c in calls], tools=TOOLS)


def test_glm5_writes_glm47s_text():
    """GLM-5.x's template writes ``<tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value>...</tool_call>``
    with no layout, values verbatim when strings and ``tojson`` otherwise: GLM-4.7's text."""
    calls = [Call("get_weather", {"city": "Paris", "days": 3}), Call("noop", {})]
    text = render.get("glm5").render(calls, content="Hi.")
    assert text == ("Hi.<tool_call>get_weather<arg_key>city</arg_key><arg_value>Paris</arg_value>"
                    "<arg_key>days</arg_key><arg_value>3</arg_value></tool_call><tool_call>noop</tool_call>")
    assert_parses("glm5", text, "Hi.", [("get_weather", {"city": "Paris", "days": 3}), ("noop", {})],
                  tools=[tool("get_weather", city={"type": "string"}, days={"type": "integer"})])


def laguna_render(calls, content="", newlines=False):
    """Tool calls as Poolside Laguna writes them: ``content``, then per call ``<tool_call>NAME``, per argument
    ``<arg_key>K</arg_key><arg_value>V</arg_value>`` (V verbatim when a string, else JSON), ``</tool_call>``;
    ``newlines``: the layout of the tool instructions SGLang's and TensorRT-LLM's Poolside readers quote (a
    newline after the name and after each tag pair, as GLM-4.5 writes)."""
    nl = "\n" if newlines else ""
    out = [content]
    for c in calls:
        out.append(f"<tool_call>{c.name}{nl}")
        for k, v in c.arguments.items():
            v = v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)
            out.append(f"<arg_key>{k}</arg_key>{nl}<arg_value>{v}</arg_value>{nl}")
        out.append("</tool_call>")
    return "".join(out)


@pytest.mark.parametrize("newlines", [False, True])
def test_poolside_v1_writes_text_glm47_reads(newlines):
    """Laguna's calls: the ``glm47`` renderer's text exactly (no layout), and GLM-4.5's layout read the same."""
    calls = [Call("edit", ARGS), Call("noop", {}), Call("write_file", {"path": "x.py", "content": "a < b\n</x>\n"})]
    text = laguna_render(calls, content="Editing.", newlines=newlines)
    if not newlines:
        assert text == render.get("poolside_v1").render(calls, content="Editing.")
    tools = TOOLS + [tool("write_file", path={"type": "string"}, content={"type": "string"})]
    assert_parses("poolside_v1", text, "Editing.", [(c.name, dict(c.arguments)) for c in calls], tools=tools)
