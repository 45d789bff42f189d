"""MiniMax M3 tool calls and reasoning (``minimax_m3``): namespaced element trees.

The format (sources: the model's ``chat_template.jinja`` as vLLM 0.33,
TensorRT-LLM and SGLang describe it; its ``ns_token`` is ``]<]minimax[>[``)
and every reading rule: ``docs/formats.md``, "MiniMax M3" (the one place)::

    CONTENT
    ]<]minimax[>[<tool_call>
    ]<]minimax[>[<invoke name="create_order">
    ]<]minimax[>[<user_id>42]<]minimax[>[</user_id>
    ]<]minimax[>[<items>]<]minimax[>[<item>]<]minimax[>[<sku>b-1]<]minimax[>[</sku>]<]minimax[>[</item>]<]minimax[>[</items>
    ]<]minimax[>[</invoke>
    ]<]minimax[>[</tool_call>

This module holds the tokens, markers, the value tree (``_Frame``) and the
``_s_<state>`` steps; the shared mechanisms (driver, ``think`` state,
broken calls, bounded heads, confirmed closers, typing) are base.py's and
schema.py's (``callscale/parsers/README.md``).
"""

from __future__ import annotations

# The transition table, as h11 writes its rules: {state: {what it reads: next state}} (the states are the
# ``_s_<state>`` methods; "content", "think" and "broken" are base.ToolParser's; ``ws``: whitespace; "a / b": the
# one the reading decides; tests/parsers/test_transitions.py holds the states to the class's).
# (NS: the namespace ]<]minimax[>[; states "block" and "broken" are MiniMaxBlocks', minimax.BLOCK_TRANSITIONS)
MINIMAX_M3_TRANSITIONS = {
    "content": {"text": "content", "[\\n]NS<tool_call>": "block", "<mm:think>": "think",
                "</mm:think> (stray: dropped)": "content"},
    "think": {"text </mm:think>": "content"},
    "name": {'NAME ">': "body", "no name, or past MAX_HEAD (content)": "content"},
    "body": {"ws NS<": "tag", "ws NS, no < (an omitted opening tag, in an object)": "elided",
             "anything else": "broken"},
    "elided": {"text NS<": "elided_tag"},
    "elided_tag": {"/KEY> (a new key: the value ends)": "body", "anything else": "broken"},
    "tag": {"/NAME> of the open element (the invoke's: the call ends)": "body / block",
            "NAME> of a string": "text", "NAME> of another": "opened",
            "a bad or repeated name, too deep, or past MAX_HEAD": "broken"},
    "opened": {"ws, its own closing tag (an empty element)": "body", "ws NS< (a container)": "tag",
               "anything else": "text"},
    "text": {"text, its own closing tag": "confirm", "the end of the output inside the call": "content"},
    "confirm": {"ws NS (left unread)": "body", "the end of the output": "body",
                "anything else (the tag was value text)": "text"},
}

import logging
import re
from collections.abc import Mapping  # (isinstance without typing's layer)
from typing import Any

from . import register
from .minimax import BLOCK_TRANSITIONS, MiniMaxBlocks
from .scanner import OVER, PARTIAL, markers
from .schema import (UNTYPED, TypedValue, Typing, container_schema, json_string, resolve_schema, schema_typing,
                     tool_parameters)

log = logging.getLogger(__name__)

__all__ = [
    "MiniMaxM3Parser", "NS", "BLOCK_OPEN", "BLOCK_CLOSE", "INVOKE_OPEN", "INVOKE_CLOSE", "TAG_END",
    "ELEMENT_OPEN", "ITEM", "THINK_OPEN", "THINK_CLOSE", "LAYOUT_NEWLINE", "SPECIAL_TOKENS", "MAX_DEPTH",
    "open_tag", "close_tag",
]

#: The namespace every tag carries (the template's ``ns_token``).
NS = "]<]minimax[>["
BLOCK_OPEN = NS + "<tool_call>"
BLOCK_CLOSE = NS + "</tool_call>"
#: An invoke opens with ``INVOKE_OPEN + name + TAG_END``.
INVOKE_OPEN = NS + '<invoke name="'
INVOKE_CLOSE = NS + "</invoke>"
TAG_END = '">'
#: Any element: ``ELEMENT_OPEN + NAME + ">"`` ... ``ELEMENT_OPEN + "/" + NAME + ">"``.
ELEMENT_OPEN = NS + "<"
#: The element name of a list member.
ITEM = "item"
THINK_OPEN = "<mm:think>"
THINK_CLOSE = "</mm:think>"
LAYOUT_NEWLINE = "\n"
SPECIAL_TOKENS = (NS, THINK_OPEN, THINK_CLOSE)
#: Elements nest at most this deep (vLLM's ``MAX_ELEMENT_DEPTH``).
MAX_DEPTH = 128


def open_tag(name: str) -> str:
    return f"{ELEMENT_OPEN}{name}>"


def close_tag(name: str) -> str:
    return f"{ELEMENT_OPEN}/{name}>"


_CONTENT = markers(LAYOUT_NEWLINE + BLOCK_OPEN, BLOCK_OPEN, THINK_OPEN, THINK_CLOSE)
_THINK = markers(THINK_CLOSE)
_ELEMENT = markers(ELEMENT_OPEN)
_HEAD_END = markers(">")
_NS = markers(NS)
_CLOSE_SCAN = markers(ELEMENT_OPEN + "/").scan().search  # a closing tag's start, or a proper prefix of it ending the text
#: The writer of a string value (stateless: shared by every string element).
_STRING = TypedValue(UNTYPED)

_KEY = re.compile(r"[^\s<>/][^<>\n]*")


class _Frame:
    """One open element: its name, schema, typing and what it turned out to be."""

    __slots__ = ("name", "spec", "typing", "kind", "count", "keys", "parts", "closer", "value")

    def __init__(self, name: str, spec: Any, typing: Typing, kind: str) -> None:
        self.name = name
        self.closer = ELEMENT_OPEN + "/" + name + ">"  # its closing tag (close_tag)
        self.spec = spec
        self.typing = typing
        self.kind = kind  # "open" (undecided), "string", "typed", "list?" (container, first child next), "object", "array"
        self.count = 0
        self.keys: set[str] = set()
        self.parts: list[str] = []  # an undecided element's leading whitespace
        self.value: TypedValue | None = None  # a typed text value's writer (schema.TypedValue)


@register("minimax_m3")
class MiniMaxM3Parser(MiniMaxBlocks):
    """Streaming parser of MiniMax M3 tool calls; rules: ``docs/formats.md``, "MiniMax M3".

    States (``_s_<state>``, run by the base driver): ``content``, ``think``,
    ``block`` (between invokes), ``name`` (an invoke's name), ``body`` (in a
    container element, the invoke included, between children), ``tag`` (an
    element tag after the namespace and ``<``), ``opened`` (an element not yet
    known as text or container), ``text`` (a text value), ``confirm`` (after a
    text value's closing tag), and the base's ``broken`` (a broken call's text,
    :meth:`ToolParser._s_broken`).
    """

    transitions = {**BLOCK_TRANSITIONS, **MINIMAX_M3_TRANSITIONS}

    writes_reasoning = True
    reasoning_end = _THINK
    layout_before_call = LAYOUT_NEWLINE
    block_open = BLOCK_OPEN
    block_close = BLOCK_CLOSE
    invoke_open = INVOKE_OPEN
    invoke_close = INVOKE_CLOSE
    _content_markers = _CONTENT

    def __init__(self) -> None:
        super().__init__()
        self._root: Mapping[str, Any] = {}
        self._frames: list[_Frame] = []
        self._typed_tools: Any = None  # the tools list self._typed_cache was made for
        # per tool name: (parameters, their schema); per (root, container schema, kind, name): _child's answer
        self._typed_cache: dict[Any, tuple] = {}

    # ------------------------------------------------------------------ driver
    def _at_end(self) -> None:  # (the end-of-output step as base's hook: the per-delta loop is base's)
        if self._frames:
            log.debug("minimax_m3: call %r never closed; abandoned", self._call_name)
            self._abandon_call()
            self._frames = []
        self._raw = []
        self._state = "content"

    # ------------------------------------------------------------------ outside calls
    def _open(self, marker: str, final: bool) -> bool:
        """A marker in content (base ``_s_content`` over ``_content_markers``): a block, reasoning, or a
        stray ``</mm:think>`` (dropped)."""
        if marker == THINK_OPEN:
            self._state = "think"
        elif marker != THINK_CLOSE:
            self._open_block(marker)
        return True

    def _invoke_started(self) -> None:
        cache = self._cache()
        hit = cache.get(self._call_name)  # (the tool's parameters and their schema, once per tools list)
        if hit is None:
            root = tool_parameters(self.tools, self._call_name)
            hit = cache[self._call_name] = (root, resolve_schema(root, root))
        self._root = hit[0]
        self._emit_arguments("{")
        self._frames = [_Frame("invoke", hit[1], UNTYPED, "object")]
        self._state = "body"

    # ------------------------------------------------------------------ inside a call
    def _s_body(self, final: bool) -> bool:
        marker = self.scanner.match_after_space(_ELEMENT, final)
        if marker is PARTIAL:
            return False  # a partial tag, or nothing unread
        if marker is not None:
            self.scanner.head_begin()
            self._state = "tag"
            return True
        if self._cut_by_end(final, _ELEMENT):
            return False
        if self._frames[-1].kind == "object" and self.scanner.match_literal(NS) is True:
            # MiniMax M3 checkpoints omit the first parameter's opening tag (vLLM #51073): the value runs to
            # a closing tag that names its key (docs/formats.md, "MiniMax M3"); held, as its key comes last
            self._frames.append(_Frame("", None, UNTYPED, "elided"))
            self._state = "elided"
            return True
        return self._fail("text beside elements")

    def _s_elided(self, final: bool) -> bool:
        """The value of an element whose opening tag was omitted: its text up to the next tag, held."""
        text, marker = self.scanner.find(_ELEMENT, final)
        if text:
            self._frames[-1].parts.append(text)
        if marker is None:
            return False  # (final: _at_end abandons the call)
        self.scanner.head_begin()
        self._state = "elided_tag"
        return True

    def _s_elided_tag(self, final: bool) -> bool:
        """The tag after an omitted opening tag's value: ``/KEY>`` of a new key ends it, anything else breaks the call."""
        _, marker = self.scanner.head_find(_HEAD_END, final)
        if marker is None or marker is OVER:
            return self._fail("a tag longer than MAX_HEAD") if marker is OVER else False
        tag = self.scanner.head_text()
        name = tag[1:]
        frame = self._frames.pop()
        parent = self._frames[-1]
        props = parent.spec.get("properties") if isinstance(parent.spec, Mapping) else None
        if tag[:1] != "/" or _KEY.fullmatch(name) is None or name in parent.keys or (
                isinstance(props, Mapping) and props and name not in props):
            return self._fail(f"no key closes an omitted opening tag's value ({tag!r})")
        spec, typing = self._child(parent.spec, parent.kind, name)
        value = TypedValue(typing)
        text = "".join(frame.parts)
        parent.keys.add(name)
        head = (", " if parent.count else "") + json_string(name) + ": "
        parent.count += 1
        self._emit_arguments(head + value.opening + value.feed(text) + value.end())
        self._state = "body"
        return True

    def _s_tag(self, final: bool) -> bool:
        _, marker = self.scanner.head_find(_HEAD_END, final)
        if marker is None or marker is OVER:
            return self._fail("a tag longer than MAX_HEAD") if marker is OVER else False
        name = self.scanner.head_text()
        parent = self._frames[-1]
        if name.startswith("/"):
            if name[1:] != parent.name or parent.kind == "list?":
                return self._fail(f"closing tag {name!r} inside {parent.name!r}")
            self._close_container()
            return True
        if _KEY.fullmatch(name) is None or len(self._frames) > MAX_DEPTH:
            return self._fail(f"bad element {name!r}")
        if parent.kind == "list?":  # the first child decides the container
            kinds = parent.typing.types
            array = name == ITEM if ("array" in kinds) == ("object" in kinds) else "array" in kinds
            parent.kind = "array" if array else "object"
            parent.spec = container_schema(parent.spec, parent.kind, self._root)
            self._emit_arguments("[" if array else "{")
        if parent.kind == "object" and name in parent.keys:
            return self._fail(f"repeated key {name!r}")
        spec, typing = self._child(parent.spec, parent.kind, name)
        head = ", " if parent.count else ""
        if parent.kind == "object":
            parent.keys.add(name)
            head += json_string(name) + ": "
        parent.count += 1
        frame = _Frame(name, spec, typing, "open")
        self._frames.append(frame)
        if typing.is_string:
            frame.kind = "string"
            frame.value = _STRING
            self._emit_arguments(head + '"')
            self._state = "text"
        else:
            if head:
                self._emit_arguments(head)
            self._state = "opened"
        return True

    def _s_opened(self, final: bool) -> bool:
        sc = self.scanner
        frame = self._frames[-1]
        ws = sc.skip_whitespace()
        if ws:
            frame.parts.append(ws)
        # the element's closing tag (an empty element), a child's tag (a container), or its text
        closed = sc.match_literal(frame.closer, final)
        if closed is PARTIAL:
            return False  # (a partial namespace or closing tag, or nothing unread)
        if closed:
            types = frame.typing.types
            if "string" not in types and ("array" in types or "object" in types):
                self._emit_arguments("[]" if "array" in types else "{}")
                self._pop()
                return True
            self._start_text(frame)
            self._end_text()
            return True
        if sc.match_literal(ELEMENT_OPEN, final) is True:  # a container: its first child's tag follows
            frame.kind = "list?"
            frame.parts = []
            self.scanner.head_begin()
            self._state = "tag"
            return True
        self._start_text(frame)
        self._state = "text"
        return True

    def _cache(self) -> dict:
        """Schema look-ups for ``self.tools`` (:meth:`_invoke_started`, :meth:`_child`): dropped when
        another tools list is passed, and bounded."""
        if self.tools is not self._typed_tools or len(self._typed_cache) > 4096:
            self._typed_tools, self._typed_cache = self.tools, {}
        return self._typed_cache

    def _child(self, spec: Any, kind: str, name: str) -> tuple[Any, Typing]:
        """The schema of element ``name`` in a container (``kind`` ``"object"``/``"array"``) whose
        schema is ``spec`` (``items``, else ``properties[name]``, else ``additionalProperties``),
        ``$ref`` followed, and its typing (schema.py): looked up once per container schema and name.

        The cache keeps the objects it was asked for (so their ids stay theirs) and is dropped
        when another tools list is passed (bounded); elements repeat their keys call after call.
        """
        root = self._root
        cache = self._cache()
        key = (id(root), id(spec), kind, name)
        hit = cache.get(key)
        if hit is not None and hit[0] is root and hit[1] is spec:
            return hit[2], hit[3]
        child = None
        if isinstance(spec, Mapping):
            if kind == "array":
                child = spec.get("items")
            else:
                props = spec.get("properties")
                child = props.get(name) if isinstance(props, Mapping) else None
                if child is None and isinstance(spec.get("additionalProperties"), Mapping):
                    child = spec["additionalProperties"]
        resolved = resolve_schema(child, root) if child is not None else None
        typing = schema_typing(resolved, root)
        cache[key] = (root, spec, resolved, typing)
        return resolved, typing

    def _start_text(self, frame: _Frame) -> None:
        """An undecided element is text: a string unless its schema types it (the one typed value writer)."""
        if frame.typing.declared:
            frame.kind = "typed"
            frame.value = TypedValue(frame.typing)
        else:
            frame.kind = "string"
            frame.value = _STRING
        value = frame.value
        self._emit_arguments(value.opening + value.feed("".join(frame.parts)) if frame.parts else value.opening)
        frame.parts = []

    def _s_text(self, final: bool) -> bool:
        # up to the element's own closing tag (one search for any closing tag: no pattern per element name)
        frame = self._frames[-1]
        text, found = self.scanner.until_value(_CLOSE_SCAN, frame.closer, frame.value, final)
        if text:  # (a held value sends nothing until its end)
            self._emit_arguments(text)
        if not found:
            return False
        self._confirm_ws.clear()
        self._state = "confirm"
        return True

    def _s_confirm(self, final: bool) -> bool:
        sc = self.scanner
        if sc.peek(len(NS)) == NS:  # (the confirming match's answer at once: the namespace, here left unread)
            self._confirm_ws.clear()
            self._end_text()
            return True
        marker = self.scanner.match(_NS, final, self._confirm_ws)
        if marker is PARTIAL:
            return False
        if marker is None:
            if self._cut_by_end(final, _NS):  # the end of the output follows: the value ends
                self._confirm_ws.clear()
                self._end_text()
                return False
            frame = self._frames[-1]  # the closing tag was value text
            self._emit_arguments(frame.value.feed(frame.closer + self._confirm_text()))
            self._state = "text"
            return True
        sc.unread(len(marker))  # the namespace starts the next tag, read in state "body"
        self._confirm_ws.clear()
        self._end_text()
        return True

    def _end_text(self) -> None:
        self._emit_arguments(self._frames[-1].value.end())
        self._pop()

    def _close_container(self) -> None:
        frame = self._frames[-1]
        self._emit_arguments("]" if frame.kind == "array" else "}")
        if len(self._frames) == 1:  # the invoke closed: the call is complete
            self._frames = []
            self._end_call()
            self._state = "block"
            return
        self._pop()

    def _pop(self) -> None:
        self._frames.pop()
        self._state = "body"

    def _fail(self, why: str) -> bool:
        log.debug("minimax_m3: call %r broken: %s", self._call_name, why)
        self._frames = []
        self._confirm_ws.clear()
        self._raw = []  # resumed after the call's </invoke>: a block that has a call
        self._block_has_call = True
        return self._broken()
