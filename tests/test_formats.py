"""The per-format samples of tests/formats.py: complete for every registered parser, and true."""

from __future__ import annotations

import pytest

from callscale import parsers
from callscale.workloads import render
from callscale.workloads.render import Call
from formats import FORMATS, KEYS
from support import stream_outcome, whole_outcome

NAMES = parsers.names()


def missing(formats, names=None):
    """``(format, key)`` pairs absent from ``formats`` for the registered names (or ``names``)."""
    out = []
    for name in names or NAMES:
        entry = formats.get(name)
        if entry is None:
            out.append((name, "<no entry>"))
            continue
        out.extend((name, key) for key in KEYS if key not in entry)
    return out


def test_every_registered_format_has_every_key():
    assert missing(FORMATS) == [], "tests/formats.py lacks " + ", ".join(f"{n}[{k!r}]" for n, k in missing(FORMATS))


def test_the_completeness_check_names_the_missing_key():
    partial = {name: dict(entry) for name, entry in FORMATS.items()}
    del partial["glm45"]["broken"]
    del partial["gemma4"]
    assert missing(partial) == [("gemma4", "<no entry>"), ("glm45", "broken")] or \
        sorted(missing(partial)) == sorted([("gemma4", "<no entry>"), ("glm45", "broken")])


@pytest.mark.parametrize("name", NAMES)
def test_the_opener_is_what_the_renderer_writes(name):
    assert FORMATS[name]["opener"] in render.get(name).render([Call("get_weather", {"city": "Paris"})])


@pytest.mark.parametrize("name", [n for n in NAMES if FORMATS[n]["empty_envelope"]])
def test_an_empty_envelope_is_markup_never_content(name):
    for env in FORMATS[name]["empty_envelope"]:
        text = "Hi." + env + "Bye."
        for got in (whole_outcome(name, text), stream_outcome(name, list(text))):
            assert (got.content, got.complete_calls()) == ("Hi.Bye.", []), env
