"""The per-format rows of tests/helpers/formats.py: one for every registered parser and none other, and true."""

from __future__ import annotations

import dataclasses

import pytest

from callscale import parsers
from callscale.workloads import render
from callscale.workloads.chunking import chunk
from callscale.workloads.render import Call
from formats import FORMATS, TYPINGS, Format
from support import stream_outcome, whole_outcome

NAMES = parsers.names()
#: The chunkings of tests/parsers/test_content_rules.py.
CHUNKINGS = ["whole", "char", "fixed:3", "tokens:1", "random:5:8"]


def missing(formats, names=None):
    """What ``formats`` lacks for the registered names (or ``names``): ``(format, "<no row>")`` for a
    registered parser without a row, ``(format, "<no parser>")`` for a row that names no parser."""
    names = NAMES if names is None else names
    return ([(name, "<no row>") for name in names if name not in formats]
            + [(name, "<no parser>") for name in formats if name not in names])


def test_every_registered_format_has_one_row_and_no_row_names_no_parser():
    assert missing(FORMATS) == [], "tests/helpers/formats.py: " + ", ".join(f"{n} {what}" for n, what in missing(FORMATS))


def test_the_completeness_check_names_the_format():
    partial = dict(FORMATS)
    del partial["gemma4"]
    partial["step0"] = FORMATS["glm45"]
    assert missing(partial) == [("gemma4", "<no row>"), ("step0", "<no parser>")]


def test_a_row_must_state_the_facts_without_a_default():
    required = {f.name for f in dataclasses.fields(Format) if f.default is dataclasses.MISSING}
    assert required == {"opener", "broken", "stray", "heads"}
    with pytest.raises(TypeError):
        Format(opener="<x>", broken="Hi.<x>", stray=())  # no heads


@pytest.mark.parametrize("name", NAMES)
def test_the_row_is_well_formed(name):
    row = FORMATS[name]
    assert "Hi." in row.broken and row.stray and row.heads
    assert row.typed in TYPINGS
    assert not (row.json_arguments and row.typed), "JSON arguments are typed by the model, not by a schema"


@pytest.mark.parametrize("name", NAMES)
def test_the_opener_is_what_the_renderer_writes(name):
    assert FORMATS[name].opener in render.get(name).render([Call("get_weather", {"city": "Paris"})])


@pytest.mark.parametrize("name", [n for n in NAMES if FORMATS[n].empty_envelope])
def test_an_empty_envelope_is_markup_never_content(name):
    # "Hi.<tool_call></tool_call>Bye." gave the envelope as content
    specials = render.get(name).special_tokens
    for env in FORMATS[name].empty_envelope:
        text = "Hi." + env + "Bye."
        for spec in CHUNKINGS:
            got = whole_outcome(name, text) if spec == "whole" else stream_outcome(name, chunk(text, spec, specials))
            assert (got.content, got.complete_calls()) == ("Hi.Bye.", []), (env, spec)
