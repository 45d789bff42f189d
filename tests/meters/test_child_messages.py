"""The callgrind child's protocol: one ``{"kind": ...}`` shape, every kind listed once (``_child.MESSAGES``),
every listed kind sent by the child and handled by the parent (``instructions._Counting``)."""

from __future__ import annotations

import inspect
import json
import re

import pytest

from callscale import _child, instructions


def test_every_kind_listed_is_sent_and_every_kind_sent_is_listed():
    source = inspect.getsource(_child)
    sent = set(re.findall(r'\bsay\("(\w+)"', source))
    assert sent == set(_child.MESSAGES), (sent, set(_child.MESSAGES))


def test_the_parent_has_one_handler_per_kind():
    handlers = {name[3:] for name, _ in inspect.getmembers(instructions._Counting, inspect.isfunction)
                if name.startswith("on_") and name != "on_deadline"}
    assert handlers == set(_child.MESSAGES)


def test_a_message_is_one_kind_and_its_fields():
    line = _child.message("ended", number="000000003", status="-009")
    assert json.loads(line) == {"kind": "ended", "number": "000000003", "status": "-009"}
    with pytest.raises(ValueError, match="message 'case' takes \\('index',\\), got \\('number',\\)"):
        _child.message("case", number="000000001")
    with pytest.raises(KeyError):
        _child.message("import", parser="x")  # the old docstring's message, never sent


def test_every_request_kind_has_a_handler_in_the_child():
    source = inspect.getsource(_child.main)
    for kind in _child.REQUESTS:
        assert f'"{kind}": {kind}' in source
