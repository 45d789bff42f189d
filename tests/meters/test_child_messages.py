"""The metered child's protocol: one ``{"kind": ...}`` shape, every kind listed once (``_metered.MESSAGES``),
every listed kind sent by the child and handled by the parent (``instructions._Counting``)."""

from __future__ import annotations

import inspect
import json
import re

import pytest

from callscale import _child, _metered, instructions


def test_every_kind_listed_is_sent_and_every_kind_sent_is_listed():
    source = inspect.getsource(_metered)
    sent = set(re.findall(r'\b(?:say|line)\("(\w+)"', source))  # said now, or made ahead (_Run.prepare)
    assert sent == set(_metered.MESSAGES), (sent, set(_metered.MESSAGES))


def test_the_parent_has_one_handler_per_kind():
    handlers = {name[3:] for name, _ in inspect.getmembers(instructions._Counting, inspect.isfunction)
                if name.startswith("on_") and name != "on_deadline"}
    assert handlers == set(_metered.MESSAGES)


def test_a_message_is_one_kind_and_its_fields():
    line = _metered.message("ended", number="000000003", status="-009")
    assert json.loads(line) == {"kind": "ended", "number": "000000003", "status": "-009"}
    with pytest.raises(ValueError, match="message 'case' takes \\('index', 'pid'\\), got \\('number',\\)"):
        _metered.message("case", number="000000001")
    with pytest.raises(KeyError):
        _metered.message("import", parser="x")  # never sent


def test_every_request_kind_has_a_handler_in_the_child():
    source = inspect.getsource(_child.main)
    for kind in _child.REQUESTS:
        assert f'"{kind}": {kind}' in source


def test_the_metered_child_imports_nothing_of_the_harness_before_it_counts():
    """The metered child's module imports the standard library alone at its top; what it imports of the
    project later is named in the module docstring (a count depends on those, not on the harness)."""
    source = inspect.getsource(_metered)
    top = [line for line in source.splitlines() if line.startswith(("import ", "from "))]
    assert top == ["from __future__ import annotations", "import gc", "import json", "import os", "import sys"]
    inner = set(re.findall(r"^\s+from (callscale[\w.]*) import", source, re.MULTILINE))
    assert inner == {"callscale", "callscale.streaming", "callscale.plugins"}
