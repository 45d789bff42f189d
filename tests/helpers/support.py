"""Shared test data: the fault cases and the chunkings every parser test streams under, and the paths.

``HELPERS`` is this folder (tests/helpers/: fixture parsers, stand-ins, data); a test that runs
``callscale`` in a child process passes it as the child's working directory or ``PYTHONPATH``, so
``--parser quadratic_parser:QuadraticParser`` imports there as it does here (tests/conftest.py puts it
first on ``sys.path``). ``ROOT`` is the repository's root.
"""

from __future__ import annotations

from pathlib import Path

from callscale.workloads.chunking import INSIDE_TOKEN_CHUNKINGS
from callscale.workloads.faults import load as load_cases

#: whole, one character, 2, 3, 4 and 7 characters per delta, and 20 seeded
#: random splits of 1-8 characters (these split inside special tokens too).
CHUNKINGS = ["whole", *INSIDE_TOKEN_CHUNKINGS]

HELPERS = Path(__file__).resolve().parent
ROOT = HELPERS.parent.parent

#: Fault cases that today's parsers still get wrong, with the reason (the fault-case and check tests mark
#: them xfail, strict: a fixed case must leave this set).
KNOWN_FAILING: dict[str, str] = {}

__all__ = ["CHUNKINGS", "HELPERS", "ROOT", "KNOWN_FAILING", "load_cases", "stream_outcome", "whole_outcome", "assert_parses", "split_at",
           "split_by_sizes", "json_values", "assert_round_trip", "calls_strategy",
           "assert_arguments_stream", "assert_odd_output_agrees", "typed_tool", "assert_typed_arguments_read_back"]


def split_at(text: str, cuts) -> list[str]:
    """``text`` cut at the positions ``cuts`` (characters; any order, repeats and out-of-range
    positions allowed, clamped), as deltas with none empty. For hypothesis-drawn splits."""
    n = len(text)
    points = [0, *sorted({min(max(c, 0), n) for c in cuts}), n]
    return [text[a:b] for a, b in zip(points, points[1:]) if b > a]


def split_by_sizes(text: str, sizes) -> list[str]:
    """``text`` in deltas of ``sizes[0]``, ``sizes[1]``, ... characters, cycling through ``sizes``."""
    from callscale.hunt import deliver

    return deliver(text, "alternating:" + ",".join(str(k) for k in sizes))


def stream_outcome(parser_name: str, deltas, tools=()):
    """Stream ``deltas`` through a fresh registered parser (finish twice, strict protocol)."""
    from callscale import parsers
    from callscale import check

    return check.stream(parsers.get(parser_name)(), list(deltas), tools)


def whole_outcome(parser_name: str, text: str, tools=()):
    """``detect_and_parse`` of ``text`` by a fresh registered parser."""
    from callscale import parsers
    from callscale import check

    return check.whole(parsers.get(parser_name)(), text, tools)


def assert_parses(parser_name, text, content, calls, tools=(), chunkings=CHUNKINGS, deltas=None,
                  strip_content=False, special_tokens=(), reasoning="", broken=False):
    """Assert the whole-text parse and every chunking give ``content`` and ``calls``.

    ``calls``: list of ``(name, arguments dict)``. ``deltas``: an extra split
    to try. Streamed calls are compared in full (abandoned ones included), so
    a well-formed text must give no malformed call (``broken``: the text holds a call the model wrote
    broken, which a streaming parser may have begun before the break: abandoned calls allowed).
    """
    from callscale import check
    from callscale.workloads.chunking import chunk

    expected = check.outcome_of(content, calls, reasoning)
    splits = {"whole-text detect_and_parse": None}
    for spec in chunkings:
        splits[spec] = chunk(text, spec, special_tokens)
    if deltas is not None:
        splits["own deltas"] = list(deltas)
    for label, split in splits.items():
        got = whole_outcome(parser_name, text, tools) if split is None else stream_outcome(parser_name, split, tools)
        problems = check.compare(got, expected, strip_content=strip_content)
        assert broken or len(got.calls) == len(calls) or problems, f"{label}: abandoned calls in {got.calls!r}"
        assert not problems, f"{parser_name} under {label}: " + "; ".join(problems)


def json_values(text):
    """A hypothesis strategy of JSON values (nested up to 8 leaves) whose strings and object keys come from ``text``."""
    from hypothesis import strategies as st

    leaf = st.one_of(st.none(), st.booleans(), st.integers(-10**12, 10**12),
                     st.floats(allow_nan=False, allow_infinity=False), text)
    return st.recursive(leaf, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                      st.dictionaries(text, inner, max_size=3)), max_leaves=8)


def assert_round_trip(parser_name, calls, content, tail, cuts):
    """Render ``calls`` after ``content`` (then ``tail`` when there are calls), split at ``cuts``:
    streaming and ``detect_and_parse`` give back exactly that content (a whitespace-only ``tail`` is
    layout) and those calls, none abandoned."""
    from callscale import check
    from callscale.workloads import render

    text = render.get(parser_name).render(calls, content) + (tail if calls else "")
    # whitespace-only text after the last call is layout (DESIGN.md, "Content and markup")
    kept_tail = tail if calls and not tail.isspace() else ""
    expected = check.outcome_of(content + kept_tail, [(c.name, dict(c.arguments)) for c in calls])
    streamed = stream_outcome(parser_name, split_at(text, cuts))
    whole = whole_outcome(parser_name, text)
    assert not check.compare(streamed, expected), check.compare(streamed, expected)
    assert not check.compare(whole, expected), check.compare(whole, expected)
    assert len(streamed.calls) == len(calls)


def calls_strategy(special_tokens, alphabet="ab zé東\n\t\"'\\{}[]<>|:,.=0"):
    """Hypothesis strategy: up to 3 :class:`callscale.workloads.render.Call` whose keys and string values mix
    ``alphabet`` characters (and an emoji) with the format's ``special_tokens``."""
    from hypothesis import strategies as st

    from callscale.workloads.render import Call

    text = st.lists(st.one_of(st.text(alphabet=st.sampled_from(list(alphabet) + ["😀"]), max_size=8),
                              st.sampled_from(special_tokens)), max_size=5).map("".join)
    leaf = st.one_of(st.none(), st.booleans(), st.integers(-10**12, 10**12),
                     st.floats(allow_nan=False, allow_infinity=False), text)
    value = st.recursive(leaf, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                        st.dictionaries(text, inner, max_size=3)), max_leaves=8)
    return st.lists(st.builds(Call, st.from_regex(r"[A-Za-z_][A-Za-z0-9_.\-]{0,15}", fullmatch=True),
                              st.dictionaries(text, value, max_size=4)), max_size=3)


def assert_arguments_stream(parser_name, text=None, arguments=None):
    """Stream ``text`` (one call with ``arguments``; default: a long ``write_file`` call rendered in
    the format after ``Writing.``) in 4-character deltas: at least 60% of the arguments JSON must have
    been sent three quarters of the way in, and the pieces must assemble to ``arguments``."""
    import json

    from callscale import parsers
    from callscale.workloads import render
    from callscale.workloads.render import Call

    if text is None:
        arguments = {"path": "a.py", "content": "x = 'é\"\\\n' " * 200}
        text = "Writing." + render.get(parser_name).render([Call("write_file", arguments)])
    p = parsers.get(parser_name)()
    pieces, sent = [], None
    for i in range(0, len(text), 4):
        pieces += [item.parameters for item in p.parse_streaming_increment(text[i:i + 4], []).calls]
        if sent is None and i >= len(text) * 3 // 4:
            sent = len("".join(pieces))
    assert sent >= len(json.dumps(arguments, ensure_ascii=False)) * 0.6
    pieces += [c.parameters for c in p.finish().calls]
    assert json.loads("".join(pieces)) == arguments


def assert_odd_output_agrees(parser_name, pieces, seed, runs=300):
    """Random concatenations of ``pieces`` never raise and give the same outcome streamed by
    characters, in one delta, and (calls that complete) from ``detect_and_parse``."""
    import random

    from callscale import check

    rng = random.Random(seed)
    for _ in range(runs):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 30)))
        by_char = stream_outcome(parser_name, list(text))
        assert not check.compare(by_char, stream_outcome(parser_name, [text])), text
        assert not check.compare(by_char, whole_outcome(parser_name, text)), text


_JSON_TYPE = {str: "string", bool: "boolean", int: "integer", float: "number", list: "array", dict: "object",
              type(None): "null"}


def typed_tool(name, **types):
    """A tool in OpenAI form whose parameters have the given JSON-schema types (``type`` values)."""
    props = {k: {"type": t} for k, t in types.items()}
    return {"type": "function", "function": {"name": name, "parameters": {"type": "object", "properties": props}}}


def assert_typed_arguments_read_back(parser_name, arguments, spec):
    """``arguments`` of one call ``f``, each declared by its JSON type, rendered after content ``"x"``, come back
    whole and streamed under chunking ``spec``: what a schema-typed format's renderer writes, the schema types
    back."""
    from callscale.workloads import render
    from callscale.workloads.chunking import chunk
    from callscale.workloads.render import Call

    tools = [typed_tool("f", **{k: _JSON_TYPE[type(v)] for k, v in arguments.items()})]
    r = render.get(parser_name)
    text = r.render([Call("f", arguments)], content="x")
    for got in (whole_outcome(parser_name, text, tools),
                stream_outcome(parser_name, chunk(text, spec, r.special_tokens), tools)):
        assert got.content == "x" and got.complete_calls() == [("f", arguments)], (spec, text)
def run_main(capsys, *argv: str) -> tuple[int, str, str]:
    """``callscale ARGV`` in this process: (exit status, standard output, standard error)."""
    from callscale.cli import main

    try:
        status = main(list(argv))
    except SystemExit as exc:
        status = exc.code
    out, err = capsys.readouterr()
    return status, out, err


def gate_in_helpers(*argv: str):
    """``callscale gate ARGV`` in a fresh process run from tests/helpers (its fixtures importable), with no
    ``CALLSCALE_*`` variable of the caller's; the ``subprocess.CompletedProcess`` (text)."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if not k.startswith("CALLSCALE_")}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(HELPERS)])
    return subprocess.run([sys.executable, "-m", "callscale", "gate", *argv], cwd=HELPERS, env=env,
                          capture_output=True, text=True, timeout=1200)
