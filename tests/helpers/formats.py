"""One entry per registered format (issues 18 and 28): every per-format fact the shared tests read, in one place.

A new format adds one :class:`Format` row to :data:`FORMATS` and no other table: ``tests/parsers/test_formats.py``
fails, naming the format, while a registered parser has no row (or a row names no parser), and each shared
test reads its field from here:

=====================  ===========================================================================
field                  read by
=====================  ===========================================================================
``opener``             ``test_formats.py`` (the renderer writes it)
``empty_envelope``     ``test_formats.py`` (markup, never content)
``broken``             ``test_content_rules.py`` (prose after a broken call is content)
``stray``              ``test_head_bound.py`` (prose after a stray opener streams as content)
``heads``              ``test_head_bound.py`` (a head of ``MAX_HEAD`` characters is a call, one more is not)
``call_start``         ``test_content_rules.py`` (a cut call, for formats without an opener token)
``json_arguments``     ``test_content_rules.py`` (strict JSON: ``NaN`` / ``Infinity``)
``value_tag``          ``test_content_rules.py`` (whitespace after a value's closing tag is bounded)
``typed``              ``test_typed_escapes.py`` (escapes read alike streamed and whole)
=====================  ===========================================================================

Token strings come from the parser modules (their constants), never spelled again here. Behaviour flags
(``layout_before_call``, ...) and the transition table (``transitions``, tests/parsers/test_transitions.py) are parser
class attributes, and the tokens a model marks special are its renderer's ``model_special``: none is a field
here.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable

from callscale.parsers import (cohere, deepseek, dsml, gemma, glm, harmony, hy_v4, kimi, kimi_k3, llama, minimax,
                               minimax_m3, mistral, muse_glimmer, qwen, sarashina, step3)
from callscale.parsers import inkling, minicpm5, solar_open2
from callscale.workloads import render
from callscale.workloads.render import Call

#: ``n -> (name, text of one call whose head is n characters, its arguments)``.
Head = Callable[[int], "tuple[str, str, dict[str, Any]]"]


@dataclass(frozen=True)
class Format:
    """The facts the shared tests need about one format.

    ``opener``: the text that starts a call block (or a call, for formats without a block).
    ``empty_envelope``: texts of an envelope or a call that holds nothing a call needs (markup, never
    content:); ``()`` where the format has no envelope of its own.
    ``broken``: content ``"Hi."`` (in the format's own markup where it has one), then a call of
    ``get_weather`` the model left broken (its markup stops being a call), with no end; prose written
    after it must come back as content.
    ``stray``: ``(text, content)`` pairs: a stray opener, then text that never ends the head, and the
    content the format's rule for a head that is no call gives (block openers and Kimi's call token are
    not content).
    ``heads``: functions ``n -> (name, text, arguments)``: one call whose head is ``n`` characters.
    ``call_start``: for a format without an opener token, the text after which a rendered
    ``get_weather`` call has started (before it, a cut is text that may be prose); else ``None``.
    ``json_arguments``: the arguments are JSON text the model writes (not values typed by a schema).
    ``value_tag``: a tag closes a parameter value (XML-ish ``</...>``, Kimi K3's ``argument`` closer,
    Gemma 4's string delimiter), so the parser waits on what follows it.
    ``typed``: how a parameter value's text is typed: ``None`` (JSON arguments), ``"schema"`` (by the
    request's schema; the renderer writes a string's text verbatim), ``"schema, type written"`` (by the
    schema, the markup writing a list's type: Kimi K3), ``"string attribute"`` (DSML: JSON unless
    ``string="true"``, else the raw text).
    """

    opener: str
    broken: str
    stray: tuple[tuple[str, str], ...]
    heads: tuple[Head, ...]
    empty_envelope: tuple[str, ...] = ()
    call_start: str | None = None
    json_arguments: bool = False
    value_tag: bool = False
    typed: str | None = None


TYPINGS = (None, "schema", "schema, type written", "string attribute")

# --------------------------------------------------------------------------- shared sample text
ARGS = {"city": "Paris", "days": 3}
CALL = Call("get_weather", ARGS)

_SENTENCES = (
    "The committee met again on Thursday, and nobody could agree on the budget. ",
    "Several members argued that the roads should come first; others wanted the library repaired. ",
    "By noon the chair proposed a compromise, which was rejected within minutes. ",
    "It's worth noting that the same debate took place last year, with the same result. ",
    "Rain kept falling, the coffee ran out, and the minutes grew longer and longer. ",
)


def _prose(n: int) -> str:
    """``n`` characters of plain prose: no newline and none of ``{}<>":`` (no head ends in it)."""
    out, i = [], 0
    while sum(map(len, out)) < n:
        out.append(_SENTENCES[i % len(_SENTENCES)])
        i += 1
    return "".join(out)[:n].rstrip() + "."


PROSE = _prose(5000)
PATH = ("/srv/projects/callscale/build/output/" * 200)[:5000]  # one long "word" of GLM name characters


def _json_args_cut(name: str) -> str:
    """The rendered call up to the end of its arguments object, the rest of its markup missing."""
    text = render.get(name).render([CALL], content="Hi.")
    return text[:text.index(json.dumps(ARGS)) + len(json.dumps(ARGS))]


def _same(text: str) -> tuple[str, str]:
    """A stray case whose whole text is content."""
    return text, text


# --------------------------------------------------------------------------- heads of n characters
def _ds_v3(n):
    name = "f" * (n - len("function" + deepseek.SEP))
    return name, (deepseek.CALLS_BEGIN + deepseek.CALL_BEGIN + "function" + deepseek.SEP + name + "\n"
                  + deepseek.V3_FENCE_OPEN + "{}" + deepseek.V3_FENCE_CLOSE + deepseek.CALL_END
                  + deepseek.CALLS_END), {}


def _ds_v31(n):
    name = "f" * n
    return name, (deepseek.CALLS_BEGIN + deepseek.CALL_BEGIN + name + deepseek.SEP + "{}" + deepseek.CALL_END
                  + deepseek.CALLS_END), {}


def _dsml_head(spelling):
    def make(n):
        name = "f" * (n - len(' name=""'))
        return name, (f'<{spelling.block}>\n<{spelling.invoke} name="{name}">\n</{spelling.invoke}>\n'
                      f'</{spelling.block}>'), {}
    return make


def _qwen3(n):
    name = "f" * (n - len('\n{"name": "", "arguments": '))
    return name, f'{qwen.TOOL_CALL_OPEN}\n{{"name": "{name}", "arguments": {{}}}}\n{qwen.TOOL_CALL_CLOSE}', {}


def _qwen3_args_first(n):
    # the arguments value does not count; the object's last "}" ends the head
    name = "f" * (n - len('{"arguments": , "name": ""'))
    args = '{"content": "' + "x" * 3000 + '"}'
    return (name, f'{qwen.TOOL_CALL_OPEN}{{"arguments": {args}, "name": "{name}"}}{qwen.TOOL_CALL_CLOSE}',
            {"content": "x" * 3000})


def _coder(n):
    name = "f" * (n - len("\n" + qwen.FUNCTION_OPEN))
    return name, (f"{qwen.TOOL_CALL_OPEN}\n{qwen.FUNCTION_OPEN}{name}>\n{qwen.FUNCTION_CLOSE}\n"
                  f"{qwen.TOOL_CALL_CLOSE}"), {}


def _glm(n):
    name = "f" * n
    return name, f"{glm.TOOL_CALL}{name}{glm.TOOL_CALL_END}", {}


def _kimi(n):
    name = "f" * (n - len(kimi.ID_PREFIX + ":0"))
    return name, (kimi.SECTION_BEGIN + kimi.CALL_BEGIN + kimi.ID_PREFIX + name + ":0" + kimi.ARGUMENT_BEGIN
                  + "{}" + kimi.CALL_END + kimi.SECTION_END), {}


def _minimax(mod):
    def make(n):
        name = "f" * (n - len("\n" + mod.INVOKE_OPEN))
        return name, (f"{mod.BLOCK_OPEN}\n{mod.INVOKE_OPEN}{name}{mod.TAG_END}\n{mod.INVOKE_CLOSE}\n"
                      f"{mod.BLOCK_CLOSE}"), {}
    return make


def _kimi_k3(n):
    name = "f" * (n - len(' tool=""'))
    return name, (kimi_k3.TOOLS_OPEN + kimi_k3.CALL_HEAD + f' tool="{name}"' + kimi_k3.SEP + kimi_k3.CALL_CLOSE
                  + kimi_k3.TOOLS_CLOSE), {}


def _step3(n):
    name = "f" * n
    return name, (step3.CALLS_BEGIN + step3.CALL_BEGIN + step3.KIND + step3.SEP + step3.INVOKE_OPEN + name
                  + step3.TAG_END + "\n" + step3.INVOKE_CLOSE + step3.CALL_END + step3.CALLS_END), {}


def _cohere(n):
    name = "f" * (n - len('{"tool_call_id": "0", "tool_name": "", "parameters": '))
    return name, (cohere.START_ACTION + '[\n    {"tool_call_id": "0", "tool_name": "' + name + '", "parameters": {}}\n]'
                  + cohere.END_ACTION), {}


def _solar_open2(n):
    name = "f" * n
    return name, solar_open2.CALL_START + name + solar_open2.NAME_END + solar_open2.CALL_END, {}


def _minicpm5(n):
    name = "f" * n
    return name, minicpm5.FUNCTION_OPEN + name + minicpm5.TAG_END + minicpm5.FUNCTION_CLOSE, {}


def _minicpm5_wrapped(n):
    name = "f" * n  # (the whitespace after <tool_call> is layout, bounded on its own)
    return name, (minicpm5.TOOL_CALL_OPEN + "\n" + minicpm5.FUNCTION_OPEN + name + minicpm5.TAG_END
                  + minicpm5.FUNCTION_CLOSE + "\n" + minicpm5.TOOL_CALL_CLOSE), {}


_HY = hy_v4.tags()


def _hy_v4(n):
    name = "f" * n
    return name, _HY.calls_open + _HY.call_open + name + _HY.call_close + _HY.calls_close, {}


def _gemma(n):
    name = "f" * (n - len(gemma.CALL_PREFIX))
    return name, f"{gemma.CALL_OPEN}{gemma.CALL_PREFIX}{name}{{}}{gemma.CALL_CLOSE}", {}


def _inkling_header(n):
    # the message header names the call; the object has no name of its own
    name = "f" * n
    return name, (inkling.MESSAGE_MODEL + name + inkling.INVOKE_TOOL_JSON + '{"args":{}}' + inkling.END_MESSAGE), {}


def _inkling_object(n):
    # no header: the object's head (outside the args value) is the head
    name = "f" * (n - len('{"name":"","args":'))
    return name, inkling.INVOKE_TOOL_JSON + f'{{"name":"{name}","args":{{}}}}' + inkling.END_MESSAGE, {}


def _sarashina(n):
    # the element is read whole; a name longer than MAX_HEAD is no call (sarashina.py)
    name = "f" * n
    return name, sarashina.TOOL_CALLS + repr([{"name": name, "arguments": {}}]), {}


def _llama3(n):
    name = "f" * (n - len('{"name": "", "parameters": '))
    return name, f'{{"name": "{name}", "parameters": {{}}}}', {}


def _llama4(n):
    name = "f" * (n - len("("))
    return name, f"[{name}()]", {}


def _gpt_oss(n):
    head = "assistant" + harmony.CHANNEL + "commentary to=" + harmony.FUNCTIONS
    name = "f" * (n - len(head + " json"))
    return name, harmony.START + head + name + " json" + harmony.MESSAGE + "{}" + harmony.CALL, {}


def _mistral(n):
    name = "f" * n
    return name, mistral.TOOL_CALLS + name + mistral.ARGS + "{}", {}


# --------------------------------------------------------------------------- the rows
def _dsml(name: str) -> Format:
    sp = dsml.SPELLINGS[name]
    block, invoke = f"<{sp.block}>", f"<{sp.invoke}"
    return Format(
        opener=block,
        empty_envelope=(f"{block}\n</{sp.block}>", f"{block}\n{invoke}>\n</{sp.invoke}>\n</{sp.block}>",
                        f'{block}\n{invoke} name="">\n</{sp.invoke}>\n</{sp.block}>'),
        broken=f'Hi.\n\n{block}\n{invoke} name="get_weather">\n',
        stray=((block + "\n" + invoke + " " + PROSE, invoke + " " + PROSE),),
        heads=(_dsml_head(sp),),
        value_tag=True, typed="string attribute")


def _minimax_row(mod) -> Format:
    return Format(
        opener=mod.BLOCK_OPEN,
        broken=f"Hi.\n{mod.BLOCK_OPEN}\n{mod.INVOKE_OPEN}get_weather{mod.TAG_END}\n",
        stray=(_same(mod.BLOCK_OPEN + "\n" + mod.INVOKE_OPEN + PROSE), _same(mod.BLOCK_OPEN + " " * 2000 + PROSE)),
        heads=(_minimax(mod),), value_tag=True, typed="schema")


_DS_EMPTY = (f"{deepseek.CALLS_BEGIN}{deepseek.CALLS_END}",
             f"{deepseek.CALLS_BEGIN}{deepseek.CALL_BEGIN}{deepseek.CALL_END}{deepseek.CALLS_END}")

FORMATS: dict[str, Format] = {
    "glm45": Format(
        opener=glm.TOOL_CALL, empty_envelope=(f"{glm.TOOL_CALL}{glm.TOOL_CALL_END}", f"{glm.TOOL_CALL}\n{glm.TOOL_CALL_END}"),
        broken=f"Hi.\n{glm.TOOL_CALL}get_weather\n{glm.ARG_KEY}city{glm.ARG_KEY_END}\n",
        stray=(_same(glm.TOOL_CALL + PROSE), _same(glm.TOOL_CALL + PATH)),
        heads=(_glm,), value_tag=True, typed="schema"),
    "glm47": Format(
        opener=glm.TOOL_CALL, empty_envelope=(f"{glm.TOOL_CALL}{glm.TOOL_CALL_END}",),
        broken=f"Hi.{glm.TOOL_CALL}get_weather{glm.ARG_KEY}city{glm.ARG_KEY_END}",
        stray=(_same(glm.TOOL_CALL + PATH),),
        heads=(_glm,), value_tag=True, typed="schema"),
    **{name: _dsml(name) for name in dsml.SPELLINGS},
    "qwen3_coder": Format(
        opener=qwen.TOOL_CALL_OPEN,
        broken=f"Hi.\n{qwen.TOOL_CALL_OPEN}\n{qwen.FUNCTION_OPEN}get_weather>\n",
        stray=(_same(qwen.TOOL_CALL_OPEN + "\n" + qwen.FUNCTION_OPEN + PROSE),
               _same(qwen.TOOL_CALL_OPEN + " " * 2000 + PROSE)),
        heads=(_coder,), value_tag=True, typed="schema"),
    "minimax_m2": _minimax_row(minimax),
    # an M3 block that starts no call is content, as in M2 (minimax_m3.py)
    "minimax_m3": _minimax_row(minimax_m3),
    # the tools element and a call without a tool are markup (kimi_k3.py)
    "kimi_k3": Format(
        opener=kimi_k3.TOOLS_OPEN,
        empty_envelope=(kimi_k3.TOOLS_OPEN + kimi_k3.TOOLS_CLOSE,
                        kimi_k3.TOOLS_OPEN + kimi_k3.CALL_HEAD + kimi_k3.SEP + kimi_k3.CALL_CLOSE + kimi_k3.TOOLS_CLOSE,
                        kimi_k3.TOOLS_OPEN + kimi_k3.CALL_HEAD + ' tool=""' + kimi_k3.SEP + kimi_k3.CALL_CLOSE
                        + kimi_k3.TOOLS_CLOSE),
        broken=(f"Hi.{kimi_k3.RESPONSE_CLOSE}{kimi_k3.TOOLS_OPEN}"
                + kimi_k3.open_tag("call", tool="get_weather", index="1")),
        # a K3 call head that never ends is content, read on in the tools element (kimi_k3.py)
        stray=((kimi_k3.TOOLS_OPEN + kimi_k3.CALL_HEAD + " " + PROSE, kimi_k3.CALL_HEAD + " " + PROSE),
               (kimi_k3.TOOLS_OPEN + kimi_k3.CALL_HEAD + ' tool="' + PATH, kimi_k3.CALL_HEAD + ' tool="' + PATH)),
        heads=(_kimi_k3,), value_tag=True, typed="schema, type written"),
    "gemma4": Format(
        opener=gemma.CALL_OPEN,
        broken=(f"Hi.{gemma.CALL_OPEN}{gemma.CALL_PREFIX}get_weather{{city:{gemma.STRING_DELIM}Paris"
                f"{gemma.STRING_DELIM},days:3}}"),
        stray=(_same(gemma.CALL_OPEN + gemma.CALL_PREFIX + PROSE),),
        heads=(_gemma,), value_tag=True, typed="schema"),
    # the JSON formats
    "deepseek_v3": Format(
        opener=deepseek.CALLS_BEGIN,
        empty_envelope=(_DS_EMPTY[0], f"{deepseek.CALLS_BEGIN}\n{deepseek.CALLS_END}", _DS_EMPTY[1],
                        f"{deepseek.CALLS_BEGIN}{deepseek.CALL_BEGIN}function{deepseek.SEP}{deepseek.CALL_END}"
                        f"{deepseek.CALLS_END}"),
        broken=_json_args_cut("deepseek_v3"),
        stray=((deepseek.CALLS_BEGIN + deepseek.CALL_BEGIN + PROSE, deepseek.CALL_BEGIN + PROSE),
               (deepseek.CALLS_BEGIN + deepseek.CALL_BEGIN + "function" + deepseek.SEP + PROSE,
                deepseek.CALL_BEGIN + "function" + deepseek.SEP + PROSE)),
        heads=(_ds_v3,), json_arguments=True),
    "deepseek_v31": Format(
        opener=deepseek.CALLS_BEGIN,
        empty_envelope=(*_DS_EMPTY, f"{deepseek.CALLS_BEGIN}{deepseek.CALL_BEGIN}{deepseek.SEP}{{}}"
                                    f"{deepseek.CALL_END}{deepseek.CALLS_END}"),
        broken=_json_args_cut("deepseek_v31"),
        stray=((deepseek.CALLS_BEGIN + deepseek.CALL_BEGIN + PROSE, deepseek.CALL_BEGIN + PROSE),),
        heads=(_ds_v31,), json_arguments=True),
    "kimi_k2": Format(
        opener=kimi.SECTION_BEGIN,
        empty_envelope=(kimi.SECTION_BEGIN + kimi.SECTION_END,
                        kimi.SECTION_BEGIN + kimi.CALL_BEGIN + kimi.CALL_END + kimi.SECTION_END,
                        kimi.SECTION_BEGIN + kimi.CALL_BEGIN + kimi.ARGUMENT_BEGIN + kimi.CALL_END + kimi.SECTION_END),
        broken=_json_args_cut("kimi_k2"),
        # text inside a Kimi section outside any call is not content (kimi.py)
        stray=((kimi.SECTION_BEGIN + kimi.CALL_BEGIN + PROSE, ""),),
        heads=(_kimi,), json_arguments=True),
    "qwen3": Format(
        opener=qwen.TOOL_CALL_OPEN,
        empty_envelope=(f"{qwen.TOOL_CALL_OPEN}{qwen.TOOL_CALL_CLOSE}", f"{qwen.TOOL_CALL_OPEN}\n{qwen.TOOL_CALL_CLOSE}",
                        f"{qwen.TOOL_CALL_OPEN}\n{{}}\n{qwen.TOOL_CALL_CLOSE}"),
        broken=_json_args_cut("qwen3"),  # a call cut short: the call object's own "}" missing
        stray=(_same(qwen.TOOL_CALL_OPEN + PROSE), _same(qwen.TOOL_CALL_OPEN + '\n{"name": "' + PROSE),
               _same(qwen.TOOL_CALL_OPEN + '{"name": "f", "note": "' + PROSE)),
        heads=(_qwen3, _qwen3_args_first), json_arguments=True),
    # mistral, gpt_oss, llama3_json: the arguments stop being JSON where the prose starts
    "mistral": Format(
        opener=mistral.TOOL_CALLS, empty_envelope=(mistral.TOOL_CALLS + mistral.ARGS, mistral.TOOL_CALLS + "[]"),
        broken=_json_args_cut("mistral")[:-len("3}")],
        stray=((mistral.TOOL_CALLS + PROSE, PROSE), (mistral.TOOL_CALLS + "f" + mistral.CALL_ID + PROSE, "f" + PROSE)),
        heads=(_mistral,), json_arguments=True),
    "gpt_oss": Format(
        opener=harmony.CHANNEL + "commentary to=" + harmony.FUNCTIONS,
        empty_envelope=(harmony.START + "assistant" + harmony.CHANNEL + "commentary to=" + harmony.FUNCTIONS
                        + "get_weather" + harmony.CALL, harmony.START + "assistant" + harmony.END,
                        harmony.START + "assistant" + harmony.CHANNEL + "final" + harmony.MESSAGE + harmony.RETURN),
        broken=_json_args_cut("gpt_oss")[:-len("3}")],
        stray=((harmony.START + PROSE, PROSE), _same("to=" + PROSE)),
        heads=(_gpt_oss,), json_arguments=True),
    "llama3_json": Format(
        opener='{"name": ', empty_envelope=(llama.PYTHON_TAG,),
        broken=_json_args_cut("llama3_json")[:-len("3}")],
        stray=(_same('{"name": "' + PROSE), (llama.PYTHON_TAG + '{"name": "f", "note": "' + PROSE,
                                             '{"name": "f", "note": "' + PROSE)),
        heads=(_llama3,), call_start='"parameters": {', json_arguments=True),
    "llama4_pythonic": Format(
        opener="[", empty_envelope=(llama.PYTHON_START + llama.PYTHON_END,),
        broken='Hi.[get_weather(city="Paris", days=',
        stray=(_same("[" + PATH.replace("/", "f")),
               (llama.PYTHON_START + "[f(" + " " * 2000 + PROSE, "[f(" + " " * 2000 + PROSE)),
        heads=(_llama4,), call_start="(city="),
    "cohere_command": Format(
        opener=cohere.START_ACTION,
        empty_envelope=(cohere.START_ACTION + cohere.END_ACTION, cohere.START_ACTION + "[]" + cohere.END_ACTION,
                        cohere.START_ACTION + "[\n]" + cohere.END_ACTION),
        broken=_json_args_cut("cohere_command")[:-len("3}")],
        # the action token is markup; a list that starts no call is content (cohere.py)
        stray=((cohere.START_ACTION + PROSE, PROSE),
               (cohere.START_ACTION + '[{"tool_name": "f", "note": "' + PROSE, '[{"tool_name": "f", "note": "' + PROSE)),
        heads=(_cohere,), json_arguments=True),
    "hy_v4": Format(
        opener=_HY.calls_open,
        empty_envelope=(_HY.calls_open + _HY.calls_close, _HY.calls_open + "\n" + _HY.calls_close,
                        _HY.calls_open + _HY.call_open + _HY.call_close + _HY.calls_close,
                        _HY.calls_open + _HY.call_open + " " + _HY.call_close + _HY.calls_close),
        broken=f"Hi.{_HY.calls_open}{_HY.call_open}get_weather{_HY.key_open}city{_HY.key_close}",
        # the block token is markup; a call head that is no call is content (hy_v4.py)
        stray=((_HY.calls_open + PROSE, PROSE), (_HY.calls_open + _HY.call_open + PROSE, _HY.call_open + PROSE),
               _same("<tool_calls" + PROSE)),
        heads=(_hy_v4,), value_tag=True, typed="schema"),
    "step3": Format(
        opener=step3.CALLS_BEGIN,
        empty_envelope=(step3.CALLS_BEGIN + step3.CALLS_END, step3.CALLS_BEGIN + "\n" + step3.CALLS_END,
                        step3.CALLS_BEGIN + step3.CALL_BEGIN + step3.CALL_END + step3.CALLS_END,
                        step3.CALLS_BEGIN + step3.CALL_BEGIN + step3.KIND + step3.SEP + step3.CALL_END + step3.CALLS_END,
                        step3.CALLS_BEGIN + step3.CALL_BEGIN + step3.KIND + step3.SEP + step3.INVOKE_OPEN + step3.TAG_END
                        + "\n" + step3.INVOKE_CLOSE + step3.CALL_END + step3.CALLS_END),
        broken=(f"Hi.{step3.CALLS_BEGIN}\n{step3.CALL_BEGIN}{step3.KIND}{step3.SEP}{step3.INVOKE_OPEN}get_weather"
                f"{step3.TAG_END}\n"),
        # the block tokens are markup; a call head that is no call is content (step3.py)
        stray=((step3.CALLS_BEGIN + PROSE, PROSE), (step3.CALLS_BEGIN + step3.CALL_BEGIN + PROSE, step3.CALL_BEGIN + PROSE),
               (step3.CALLS_BEGIN + step3.CALL_BEGIN + step3.KIND + step3.SEP + step3.INVOKE_OPEN + PROSE,
                step3.CALL_BEGIN + step3.KIND + step3.SEP + step3.INVOKE_OPEN + PROSE)),
        heads=(_step3,), value_tag=True, typed="schema"),
    "solar_open2": Format(
        opener=solar_open2.CALL_START,
        empty_envelope=(solar_open2.CALL_START + solar_open2.CALL_END,
                        solar_open2.CALL_START + solar_open2.NAME_END + solar_open2.CALL_END,
                        solar_open2.CALL_START + solar_open2.CALL_START + solar_open2.CALL_END),
        broken=(f"Hi.{solar_open2.CALL_START}get_weather\n{solar_open2.ARG_START}city{solar_open2.ARG_END}"),
        # the start token is markup; a head with no name line is content (solar_open2.py)
        stray=((solar_open2.CALL_START + PROSE, PROSE), (solar_open2.CALL_START + PATH, PATH)),
        heads=(_solar_open2,), typed="schema"),  # (a value's end token is special: nothing waits on what follows)
    "minicpm5": Format(
        opener=minicpm5.FUNCTION_OPEN,
        empty_envelope=(minicpm5.TOOL_CALL_OPEN + minicpm5.TOOL_CALL_CLOSE,
                        minicpm5.TOOL_CALL_OPEN + "\n" + minicpm5.TOOL_CALL_CLOSE),
        broken=f"Hi.\n{minicpm5.FUNCTION_OPEN}get_weather{minicpm5.TAG_END}",
        # the call's tags are plain text: a head that is no call is content (minicpm5.py)
        stray=(_same(minicpm5.FUNCTION_OPEN + PROSE), _same(minicpm5.TOOL_CALL_OPEN + minicpm5.FUNCTION_OPEN + PATH)),
        heads=(_minicpm5, _minicpm5_wrapped), value_tag=True, typed="schema"),
    "muse_glimmer": Format(
        opener=muse_glimmer.BLOCK_OPEN,
        # a header with no body (its words) and an empty user message are markup (muse_glimmer.py)
        empty_envelope=(muse_glimmer.START + muse_glimmer.ASSISTANT + muse_glimmer.EOM,
                        muse_glimmer.START + muse_glimmer.ASSISTANT + muse_glimmer.TO + "get_weather" + muse_glimmer.EOM,
                        muse_glimmer.START + muse_glimmer.ASSISTANT + muse_glimmer.TO + muse_glimmer.USER
                        + muse_glimmer.MESSAGE + muse_glimmer.EOT),
        broken=(muse_glimmer.TO + muse_glimmer.USER + muse_glimmer.MESSAGE + "Hi." + muse_glimmer.EOM
                + muse_glimmer.START + muse_glimmer.ASSISTANT + muse_glimmer.TO + "get_weather" + muse_glimmer.MESSAGE
                + muse_glimmer.BLOCK_OPEN + "\n" + muse_glimmer.INVOKE_OPEN + "get_weather" + muse_glimmer.TAG_END + "\n"),
        # a header past MAX_HEAD is the model's text, the tokens dropped; a block that starts no call is content
        stray=(_same(muse_glimmer.TO + PROSE), (muse_glimmer.START + PROSE, PROSE),
               _same(muse_glimmer.BLOCK_OPEN + "\n" + muse_glimmer.INVOKE_OPEN + PROSE),
               _same(muse_glimmer.BLOCK_OPEN + " " * 2000 + PROSE)),
        heads=(_minimax(muse_glimmer),), value_tag=True, typed="schema"),
    "sarashina": Format(
        opener=sarashina.TOOL_CALLS,
        empty_envelope=(sarashina.TOOL_CALLS + "[]", sarashina.TOOL_CALLS + "[\n]", sarashina.TOOL_CALLS + " [ ]"),
        broken="Hi." + sarashina.TOOL_CALLS + "[{'name': 'get_weather', 'arguments': {'city': 'Paris', 'days': ",
        # the calls token is markup; text after it that is no list is content (sarashina.py)
        stray=((sarashina.TOOL_CALLS + PROSE, PROSE), (sarashina.TOOL_CALLS + " " * 2000 + PROSE, " " * 2000 + PROSE)),
        heads=(_sarashina,)),
    "inkling": Format(
        opener=inkling.INVOKE_TOOL_JSON,
        empty_envelope=(inkling.INVOKE_TOOL_JSON + inkling.END_MESSAGE, inkling.INVOKE_TOOL_JSON + "\n" + inkling.END_MESSAGE,
                        inkling.MESSAGE_MODEL + "get_weather" + inkling.INVOKE_TOOL_JSON + inkling.END_MESSAGE,
                        inkling.MESSAGE_MODEL + inkling.CONTENT_TEXT + inkling.END_MESSAGE + inkling.END_SAMPLING),
        broken=(inkling.CONTENT_TEXT + "Hi." + inkling.END_MESSAGE + inkling.MESSAGE_MODEL + "get_weather"
                + inkling.INVOKE_TOOL_JSON + '{"name":"get_weather","args":{"city":"Paris","days":'),
        # a tool block that holds no call object is content; a header past MAX_HEAD is the model's text (inkling.py)
        stray=((inkling.INVOKE_TOOL_JSON + PROSE, PROSE), (inkling.MESSAGE_MODEL + PROSE, PROSE),
               (inkling.INVOKE_TOOL_JSON + '{"name":"f","note":"' + PROSE, '{"name":"f","note":"' + PROSE)),
        heads=(_inkling_header, _inkling_object), json_arguments=True),
}
