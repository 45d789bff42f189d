"""The axes a parser's cost can grow on besides one value's length, and the default row that grows them all.

Each axis is a workload (``catalog.AXES``) whose structure grows with the length: calls, keys, nesting,
array items, text between calls, the request's tools; the content kinds ``bidi`` and ``nfd`` and the
``alternate:K1/K2/...`` delivery add characters and delta patterns. ``tests/helpers/hidden_terms.py`` holds
a fixture per axis: a correct parser with a hidden quadratic term only that axis triggers; the default
exact gate must fail each (the slow test at the end) while our parsers pass it.
"""

from __future__ import annotations

import itertools
import os
import re
import shutil
import unicodedata
from pathlib import Path

import pytest

from callscale import cli, config, parsers
from callscale.verify import verify_stream
from callscale.workloads import catalog, chunking, content, render, team
from callscale.workloads.tools import MAX_DEPTH
from support import HELPERS

#: Formats whose layouts differ most: JSON in special tokens, XML parameters, Python calls, JSON lists,
#: messages that end the turn after a calls block.
FORMATS = ("deepseek_v31", "qwen3_coder", "llama4_pythonic", "mistral", "muse_glimmer", "kimi_k2")

#: The default row that grows every structure axis at once.
STRUCTURE_ROW = "structure@mixed+alternate:1/50/1/50/512"


def _depth(value: object) -> int:
    """How deep ``value`` nests (objects and arrays), without recursion."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, (dict, list)):
            deepest = max(deepest, level + 1)
            stack.extend((v, level + 1) for v in (item.values() if isinstance(item, dict) else item))
    return deepest


# ----------------------------------------------------------------- each axis grows with the length


def _measure(axis: str, case) -> int:
    """The size of ``case`` along ``axis``."""
    if axis == "value":
        return len(case.calls[0].arguments["content"])
    if axis == "calls":
        return len(case.calls)
    if axis == "keys":
        return len(case.calls[0].arguments)
    if axis == "depth":
        return sum(_depth(tree) for tree in case.calls[0].arguments["trees"])
    if axis == "items":
        return len(case.calls[0].arguments["ids"])
    if axis == "between":
        return len(case.content)
    assert axis == "tools"
    return len(case.tools)


@pytest.mark.parametrize("axis", sorted(catalog.AXES))
def test_each_axis_grows_about_fourfold_when_the_length_does(axis):
    workload = catalog.AXES[axis]
    small, large = (catalog.make(workload, "deepseek_v31", n) for n in (4096, 16384))
    growth = _measure(axis, large) / _measure(axis, small)
    assert 3.5 < growth < 4.6, (axis, _measure(axis, small), _measure(axis, large))
    assert 4096 <= len(small.text) < 4096 * 1.12 and 16384 <= len(large.text) < 16384 * 1.12


def test_the_axes_name_registered_workloads_and_each_workload_once():
    assert set(catalog.AXES) == {"value", "calls", "keys", "depth", "items", "between", "tools"}
    assert all(name in catalog.names() for name in catalog.AXES.values())
    assert len(set(catalog.AXES.values())) == len(catalog.AXES)


def test_tiny_calls_are_the_smallest_calls_and_many_tools_calls_the_last_tool():
    case = catalog.make("many_tiny_calls", "llama4_pythonic", 4096)
    assert all(c == catalog.TINY_CALL for c in case.calls) and len(case.calls) > 400  # "ls()" and a comma
    tools = catalog.make("many_tools", "qwen3", 8192)
    assert len(tools.tools) == 8192 // catalog.CHARACTERS_PER_TOOL
    assert [c.name for c in tools.calls] == [tools.tools[-1]["function"]["name"]] == ["tool_0127"]


def test_the_nesting_grows_to_the_limit_and_the_brackets_past_it():
    shallow = catalog.make("deep_value", "deepseek_v31", 2048).calls[0].arguments["trees"]
    deep = catalog.make("deep_value", "deepseek_v31", 65536).calls[0].arguments["trees"]
    assert len(shallow) == 1 and 30 < _depth(shallow[0]) < MAX_DEPTH
    assert max(_depth(tree) for tree in deep) == MAX_DEPTH - 2 and len(deep) > 5  # the arguments: MAX_DEPTH
    limited = catalog.make("deep_value", "minimax_m3", 65536).calls[0].arguments["trees"]
    assert max(_depth(tree) for tree in limited) == render.get("minimax_m3").max_value_depth - 1


def test_text_between_calls_is_content_between_calls_blocks():
    case = catalog.make("text_between", "qwen3", 4096)
    assert len(case.calls) > 10 and case.content.startswith(catalog.READ_INTRO)
    at = [case.text.index(c.arguments["path"]) for c in case.calls[:3]]
    sentence = case.content[len(catalog.READ_INTRO):].split(" ")[1]
    assert at[0] < case.text.index(sentence) < at[1]  # the second sentence sits between the first two calls


def test_structure_holds_every_structure_axis():
    case = catalog.make("structure@mixed", "qwen3", 16384)
    names = [c.name for c in case.calls]
    assert names[:3] == ["configure", "save_tree", "tag_items"] and set(names[3:]) == {"ls"}
    assert len(case.calls[0].arguments) > 100 and len(case.calls[2].arguments["ids"]) > 300
    assert 100 < _depth(case.calls[1].arguments["trees"]) <= MAX_DEPTH - 1  # the list of chains, then a chain
    assert len(case.tools) == 4 + 16384 // catalog.CHARACTERS_PER_TOOL
    assert len(names) > 50 and len(case.content) > 2000


# ----------------------------------------------------------------- every format's renderer, parsed right


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_axes_workloads_are_parsed_right_by_our_parsers(fmt):
    factory = parsers.get(fmt)
    for name in [*catalog.AXES.values(), "structure@mixed", "many_keys@bidi", "text_between@nfd"]:
        case = catalog.make(name, fmt, 1536)
        for split in ("tokens:4", "alternate:1/50/1/50/512", "char"):
            assert verify_stream(factory, case, split) is None, (fmt, name, split)


# ----------------------------------------------------------------- content kinds and the delivery


def test_bidi_holds_every_bidirectional_control_and_nfd_combining_marks():
    text = content.text("bidi", 8192)
    controls = {"\u061c", "\u200e", "\u200f", *map(chr, range(0x202A, 0x202F)), *map(chr, range(0x2066, 0x206A))}
    assert controls <= set(text) and len(text) == 8192
    decomposed = content.text("nfd", 4096, seed=3)
    assert len(decomposed) == 4096 and unicodedata.normalize("NFD", decomposed) == decomposed
    assert sum(unicodedata.combining(ch) != 0 for ch in decomposed) > 200
    mixed = content.text("mixed", 4096)
    assert controls & set(mixed) and any(unicodedata.combining(ch) for ch in mixed)  # both in @mixed by 4k


def test_alternate_cycles_its_sizes_and_keeps_special_tokens_whole():
    case = catalog.make("many_tiny_calls", "deepseek_v31", 2048)
    deltas = case.deltas("alternate:1/50/1/50/512")
    assert "".join(deltas) == case.text
    sizes = [len(d) for d in chunking.chunk("x" * 700, "alternate:1/50/1/50/512")]
    assert sizes == [1, 50, 1, 50, 512, 1, 50, 1, 34]
    cuts = set(itertools.accumulate(len(d) for d in deltas))
    inside = {at for token in set(case.special_tokens) for m in re.finditer(re.escape(token), case.text)
              for at in range(m.start() + 1, m.end())}
    assert len(cuts) > 15 and not cuts & inside  # a cut never falls inside a special token
    assert str(chunking.parse_chunking("alternate:1/50")) == "alternate:1/50"


@pytest.mark.parametrize("spec, message", [
    ("alternate:1,50", "expected whole"),
    ("alternate:0/5", "every size must be at least 1"),
    ("alternate:" + "/".join(["1"] * 65), "at most 64 sizes"),
])
def test_a_bad_alternate_spec_is_one_line(spec, message):
    with pytest.raises(ValueError, match=message):
        chunking.parse_chunking(spec)
    with pytest.raises(KeyError, match=message):
        catalog.check_name(f"write_file+{spec}")


# ----------------------------------------------------------------- the default row


def test_the_default_rows_hold_the_structure_row():
    assert STRUCTURE_ROW in config.Settings().workloads
    assert STRUCTURE_ROW in config.load(Path(__file__).resolve().parents[2]).workloads  # pyproject.toml's too
    assert team.MAX_DEPTH == MAX_DEPTH


@pytest.mark.parametrize("name", ["GrowsWithKeys", "GrowsWithItems", "JoinsEarlierCalls", "ScansEveryTool",
                                  "GrowsWithTextBetween", "GrowsWithDepth"])
def test_each_hidden_term_fixture_parses_right_and_does_its_extra_work(name):
    import hidden_terms

    case = catalog.make("structure@mixed", "deepseek_v31", 2048)
    made = []

    def factory():
        made.append(getattr(hidden_terms, name)())
        return made[-1]

    assert verify_stream(factory, case, "alternate:1/50/1/50/512") is None
    assert (made[-1].found if name == "ScansEveryTool" else made[-1].rereads) > 0  # the hidden term ran


@pytest.fixture
def importable_tests(monkeypatch):
    """Children import the fixtures (module:Class) from tests/helpers; the gate reads the project's pyproject.toml."""
    monkeypatch.chdir(HELPERS)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in (str(HELPERS), os.environ.get("PYTHONPATH")) if p))


needs_valgrind = pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind not installed")

#: Each hidden-term fixture and the default row that fails it.
CAUGHT_BY = {
    "RereadsOnBidi": "write_file@mixed+tokens:16",
    "RereadsOnDecomposed": "write_file@mixed+tokens:16",
    "RereadsOnAlternation": STRUCTURE_ROW,
    "RereadsOnBundles": STRUCTURE_ROW,
    "GrowsWithKeys": STRUCTURE_ROW,
    "GrowsWithDepth": STRUCTURE_ROW,
    "GrowsWithItems": STRUCTURE_ROW,
    "JoinsEarlierCalls": STRUCTURE_ROW,
    "ScansEveryTool": STRUCTURE_ROW,
    "GrowsWithTextBetween": STRUCTURE_ROW,
}


@needs_valgrind
@pytest.mark.slow  # the exact gate on 11 parsers x 2 rows at the gate's lengths: minutes under callgrind
def test_the_default_exact_gate_fails_each_hidden_term(importable_tests, tmp_path):
    import pandas as pd

    args = ["gate", "--meter", "instructions", "--jobs", "2", "--no-progress", "--out", str(tmp_path),
            "--workload", ",".join(sorted(set(CAUGHT_BY.values()))), "--parser", "deepseek_v31"]
    for name in CAUGHT_BY:
        args += ["--parser", f"hidden_terms:{name}", "--format", "deepseek_v31"]
    assert cli.main(args) == 1
    fits = pd.read_csv(tmp_path / "scaling-fits.csv", keep_default_na=False, na_values=[""])
    verdict = {(row["parser"].split(":")[-1], row["workload"]): row["verdict"] for row in fits.to_dict("records")}
    assert {v for (p, _), v in verdict.items() if p == "deepseek_v31"} == {"ok"}
    for name, row in CAUGHT_BY.items():
        assert verdict[(name, row)] == "FAIL", (name, row, fits[fits["parser"].str.endswith(name)].to_dict("records"))
