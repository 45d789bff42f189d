"""The one broken-call mechanism (``base.ToolParser._s_broken``): the resume state is a property of
the end token (``broken_resume``), and every format uses the base's ``broken`` state (no copies)."""

import pytest

from callscale import parsers
from callscale.parsers import gemma
from callscale.parsers import kimi_k3 as k3
from callscale.parsers import minimax as m2
from callscale.parsers import minimax_m3 as m3
from callscale.parsers.base import ToolParser
from callscale.workloads import render
from callscale.workloads.chunking import chunk
from support import CHUNKINGS, stream_outcome, whole_outcome


def test_a_mapping_gives_the_end_tokens_and_the_state_after_each():
    class Two(ToolParser):
        broken_resume = {"</call>": "block", "</block>": "content"}
        broken_restarts = ("<call>",)

    assert Two.broken_ends == ("</call>", "</block>")
    assert Two._broken_resume_at == {"</call>": "block", "</block>": "content"}

    class One(ToolParser):
        broken_ends = ("</a>", "</b>")
        broken_resume = "block"

    assert One._broken_resume_at == {"</a>": "block", "</b>": "block"}


def test_end_tokens_that_disagree_with_the_mapping_are_refused_at_class_creation():
    with pytest.raises(TypeError, match="broken_resume"):
        class Bad(ToolParser):  # noqa: F841
            broken_ends = ("</a>",)
            broken_resume = {"</b>": "content"}


def test_no_format_keeps_its_own_broken_state():
    for name in parsers.names():
        assert parsers.get(name)._states["broken"] is ToolParser._s_broken, name
    # the four that kept a copy (a "skip" state) until it was folded into the base's
    for name in ("gemma4", "kimi_k3", "minimax_m2", "minimax_m3"):
        assert "skip" not in parsers.get(name)._states, name


# Per format: a broken call (held text "junk"), then each way its text is decided.
# (prefix written before the call, a broken call without its end, the call end, the block end,
#  a good call "g" with no arguments, a restart opener as the format writes it before a good call)
K3 = dict(
    prefix="Hi." + k3.RESPONSE_CLOSE + k3.TOOLS_OPEN,
    broken=k3.open_tag("call", tool="f", index="1") + "junk",
    call_end=k3.CALL_CLOSE, block_end=k3.TOOLS_CLOSE,
    good=k3.open_tag("call", tool="g", index="2") + k3.CALL_CLOSE, reopen="",
)
M2 = dict(
    prefix="Hi.\n" + m2.BLOCK_OPEN + "\n",
    broken='<invoke name="f">\njunk', call_end=m2.INVOKE_CLOSE + "\n", block_end=m2.BLOCK_CLOSE,
    good='<invoke name="g">\n' + m2.INVOKE_CLOSE + "\n", reopen=m2.BLOCK_OPEN + "\n",
)
M3 = dict(
    prefix="Hi.\n" + m3.BLOCK_OPEN + "\n",
    broken=m3.INVOKE_OPEN + 'f">\n' + m3.NS + "</nothing>junk", call_end=m3.INVOKE_CLOSE + "\n",
    block_end=m3.BLOCK_CLOSE, good=m3.INVOKE_OPEN + 'g">\n' + m3.INVOKE_CLOSE + "\n",
    reopen=m3.BLOCK_OPEN + "\n",
)
G4 = dict(
    prefix="Hi.", broken="<|tool_call>call:f{a:1,,junk", call_end=gemma.CALL_CLOSE, block_end="",  # no block
    good="<|tool_call>call:g{}" + gemma.CALL_CLOSE, reopen="",
)
FORMATS = {"gemma4": G4, "kimi_k3": K3, "minimax_m2": M2, "minimax_m3": M3}


def _cases(f):
    return {
        # the call's end: its text dropped, the next call of the block read
        "call end": (f["prefix"] + f["broken"] + f["call_end"] + f["good"] + f["block_end"] + " Bye.",
                     "Hi. Bye.", [("g", {})]),
        # the block's end: its text dropped, what follows is content
        "block end": (f["prefix"] + f["broken"] + f["block_end"] + " Bye.", "Hi. Bye.", []),
        # a new call opener first: the held text is content, the new call read
        "restart": (f["prefix"] + f["broken"] + f["reopen"] + f["good"] + f["block_end"],
                    "Hi." + f["broken"][f["broken"].index("junk"):], [("g", {})]),
        # the end of the output first: the held text is content
        "end of output": (f["prefix"] + f["broken"], "Hi.junk", []),
    }


@pytest.mark.parametrize("name,case", [(n, c) for n in sorted(FORMATS) for c in _cases(FORMATS[n])
                                       if FORMATS[n]["block_end"] or c != "block end"])  # gemma4: no block
def test_a_broken_call_resumes_in_the_state_of_its_end_token(name, case):
    text, content, calls = _cases(FORMATS[name])[case]
    whole = whole_outcome(name, text)
    assert (whole.content, whole.complete_calls()) == (content, calls)
    specials = render.get(name).special_tokens
    for spec in CHUNKINGS:
        got = stream_outcome(name, chunk(text, spec, specials))
        assert (got.content, got.complete_calls()) == (content, calls), spec
