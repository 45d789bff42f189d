"""Schema typing: one rule that turns a parameter's value text into JSON data by the tool's JSON schema.

Used by every format whose values are text typed by the request's schema:
Qwen3-Coder, GLM-4.5/4.7, MiniMax M2 and Gemma 4 (its ``<|"|>``-delimited
strings and bare scalars at the top level), DSML (a value without a ``string``
attribute). The rule is stated in
``docs/formats.md`` ("Schema typing"); in short:

- :func:`parameter_typing` reads the parameter's schema (``tools`` in OpenAI
  form, dicts or objects with the same attributes): ``type`` as a string or a
  list, ``anyOf`` / ``oneOf`` / ``allOf`` (the union of the branches' types),
  ``enum`` (its members' types when there is no ``type``), ``$ref`` to
  ``#/$defs/...`` or ``#/definitions/...`` of the tool's parameters (nested,
  at most :data:`MAX_REF_DEPTH` deep). The result is a :class:`Typing`:
  the candidate types in :data:`TYPE_ORDER`, whether null is allowed, the
  enum.
- A string-only value streams verbatim; a string-or-null one streams through
  :class:`StringOrNull` (held back only while it may still read as null).
- :func:`convert` reads a value's text (outer whitespace stripped) as each
  candidate type in :data:`TYPE_ORDER` and takes the first that reads (with an
  enum: the first whose value is a member, else the first that reads).
  ``null``/``None`` is JSON null when the parameter allows null or has no
  string type. Integers written ``60.0`` are 60. Objects and arrays are JSON,
  else a Python literal (:func:`read_python_literal`, the first Qwen3-Coder
  template wrote ``{'a': True}``), each as a whole with its own escapes
  (``docs/formats.md``, "Schema typing" 5). Only finite numbers. Text that reads as
  no candidate returns ``(False, None)``: the caller keeps the value as the
  verbatim string (the call is never dropped).

Nothing here compiles text (no ``ast``, no ``eval``) and nothing raises on
any value text or schema; the cost of :func:`convert` is linear in the text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping  # (isinstance without typing's layer: the same check, cheaper)
from typing import Any, NamedTuple, Sequence

from json.encoder import encode_basestring as _encode_string  # json.dumps(str, ensure_ascii=False)

from .jsonscan import NOT_FRAMED_NAME_CHARS, finite_float, is_call_name, strict_loads
from .pyliteral import MAX_LITERAL_DEPTH, SURROGATE, PyLiteralReader, json_text, read_python_literal  # the one Python literal reader

__all__ = [
    "Typing",
    "TYPE_ORDER",
    "MAX_REF_DEPTH",
    "MAX_LITERAL_DEPTH",
    "TypedValue",
    "typed_value",
    "typed_json",
    "json_as_written",
    "json_container_or_string",
    "UNTYPED",
    "tool_list",
    "TOOL_NAME",
    "TOOL_NAME_RUN",
    "is_tool_name",
    "FRAMED_NAME",
    "is_framed_name",
    "tool_name",
    "tool_parameters",
    "tool_parameter_schema",
    "is_new_parameter",
    "takes_no_arguments",
    "declares_tool",
    "split_name_and_key",
    "parameter_typing",
    "parameter_type",
    "schema_typing",
    "resolve_schema",
    "container_schema",
    "convert",
    "StringOrNull",
    "read_python_literal",
    "json_string",
    "json_text",
    "SURROGATE",
]

#: The order in which a value's text is tried against the types a schema
#: allows, most specific first; ``string`` last (it always reads).
TYPE_ORDER = ("boolean", "integer", "number", "object", "array", "string")
#: ``$ref`` chains and nested ``anyOf`` / ``oneOf`` / ``allOf`` are followed this deep.
MAX_REF_DEPTH = 16
#: A Python literal nested deeper than this is not read (JSON writers recurse; Python's own
#: JSON decoder stops near 1000).


class _TypingFields(NamedTuple):
    types: tuple[str, ...] = ()
    nullable: bool = False
    enum: tuple[Any, ...] | None = None


class Typing(_TypingFields):
    """How one parameter's value is typed.

    ``types``: the JSON types the schema allows, without ``null``, in
    :data:`TYPE_ORDER` (empty when the schema says nothing). ``nullable``:
    the schema allows ``null``. ``enum``: the allowed values, or ``None``.
    A tuple of those three (compared as one). ``declared`` (the schema says
    something about the value's type) and ``is_string`` (the value can only
    be a string: sent verbatim, as it arrives) are set when it is made: plain
    attributes, read per value by every typed format without a call; so is
    ``string_or_null`` (:meth:`StringOrNull.wanted`).
    """

    declared: bool
    is_string: bool
    string_or_null: bool

    def __new__(cls, types: tuple[str, ...] = (), nullable: bool = False,
                enum: tuple[Any, ...] | None = None) -> "Typing":
        self = super().__new__(cls, types, nullable, enum)
        self.declared = bool(types) or nullable
        self.is_string = types == ("string",) and not nullable
        self.string_or_null = types == ("string",) and nullable and enum is None
        return self

    @classmethod
    def _make(cls, iterable: Any) -> "Typing":  # (namedtuple's bypasses __new__)
        return cls(*iterable)

    def _replace(self, **changes: Any) -> "Typing":
        return Typing(*(changes.pop(f, getattr(self, f)) for f in self._fields))

    @property
    def main(self) -> str:
        """One type name: the only or first candidate; ``"string"`` when undeclared, ``"null"`` for null alone."""
        if self.types:
            return self.types[0]
        return "null" if self.nullable else "string"


#: The typing of a parameter the schema says nothing about.
UNTYPED = Typing()


# --------------------------------------------------------------------------- tool look-up
def _field(obj: Any, key: str) -> Any:
    if type(obj) is dict or isinstance(obj, Mapping):  # (a dict without the ABC check)
        return obj.get(key)
    return getattr(obj, key, None)


def tool_list(tools: Any) -> Sequence[Any]:
    """The request's tool list as the parsers read it: ``tools`` itself when it is a list or a tuple, else ``()``.

    Anything else (``None``, a dict, a string, a number, an iterator) is no tool list, so it is read as
    no tools: the same answer at every split (an iterator would be used up by the first look-up, a
    number would raise in the middle of a call; docs/formats.md, "Schema typing"). Never raises.
    """
    return tools if type(tools) is list or type(tools) is tuple else ()


#: The characters no tool name may hold in any format (docs/formats.md, "Tool names"): control characters
#: (no client dispatches such a name) and lone surrogates (no server can encode them as UTF-8).
_NOT_FRAMED_NAME = NOT_FRAMED_NAME_CHARS  # (jsonscan's, the lowest layer)
#: The characters a tool name may not hold where a format judges a name by its characters: those, whitespace
#: and the characters formats delimit markup with.
_NOT_NAME = r"""\s""" + _NOT_FRAMED_NAME + r"""<>{}\[\]()"'`,;=|\\"""
#: A tool name as models and clients spell it: one or more characters, none of them whitespace,
#: a control character, a lone surrogate or one of ``< > { } [ ] ( ) " ' ` , ; = | \``. So letters and
#: digits of any script with ``_ - . : / @`` and the like: OpenAI's ``get_weather``, MCP clients'
#: ``server.tool``, ``server/tool``, ``server:tool-name`` (Gemma 4 writes ``call:server:tool-name{``).
#: One rule for every format whose name is bare text in its markup; a JSON format's name is a JSON string
#: (:func:`callscale.parsers.jsonscan.is_call_name`). Whether a name is one of the request's tools is
#: the tool list's to say (:func:`tool_name`), not this rule's.
TOOL_NAME = re.compile(f"[^{_NOT_NAME}]+")
#: A run of tool-name characters, possibly empty (:data:`TOOL_NAME`'s characters), for a name read in pieces.
TOOL_NAME_RUN = re.compile(f"[^{_NOT_NAME}]*")


def is_tool_name(text: str) -> bool:
    """Whether ``text`` (characters, outer whitespace already stripped) is a tool name (:data:`TOOL_NAME`)."""
    return TOOL_NAME.fullmatch(text) is not None


#: A tool name where the format's frame, not its characters, ends it (docs/formats.md, "Tool names"): special
#: tokens around it (DeepSeek V3/V3.1, Kimi K2's call id, gpt-oss's recipient, Mistral's ``[ARGS]``), a
#: quoted attribute (DSML's ``name="..."``) or a JSON string (the JSON formats): one or more characters with
#: no control character and no lone surrogate, not only whitespace. Every :data:`TOOL_NAME` is one.
FRAMED_NAME = re.compile(f"(?=.*\\S)[^{_NOT_FRAMED_NAME}]+", re.DOTALL)


def is_framed_name(text: object) -> bool:
    """Whether ``text`` is a string and a tool name by :data:`FRAMED_NAME` (a name its format's frame delimits).

    The same test as :func:`callscale.parsers.jsonscan.is_call_name` (one rule; written there without a
    pattern lookahead, as the JSON readers call it once a call)."""
    return is_call_name(text)


def tool_name(tool: Any) -> str | None:
    """The function name of one tool in OpenAI form (dict or object)."""
    fn = _field(tool, "function")
    return _field(fn if fn is not None else tool, "name")


def tool_parameters(tools: Sequence[Any] | None, name: str) -> Mapping[str, Any]:
    """The JSON schema of tool ``name``'s parameters (the ``parameters`` object), or ``{}``.

    ``tools`` is the request's tool list in OpenAI form, ``{"type":
    "function", "function": {"name", "parameters"}}``, as dicts or as objects
    with the same attributes (pydantic models). Unknown tools give ``{}``;
    nothing here raises on odd input.
    """
    for tool in tool_list(tools):
        try:
            if tool_name(tool) != name:
                continue
            fn = _field(tool, "function")
            params = _field(fn if fn is not None else tool, "parameters")
            if hasattr(params, "model_dump"):
                params = params.model_dump()
            return params if isinstance(params, Mapping) else {}
        except Exception:  # a tool object of an unexpected shape
            return {}
    return {}


def tool_parameter_schema(tools: Sequence[Any] | None, name: str) -> Mapping[str, Any]:
    """The JSON-schema ``properties`` of tool ``name``, or ``{}`` (see :func:`tool_parameters`)."""
    props = _field(tool_parameters(tools, name), "properties")
    return props if isinstance(props, Mapping) else {}


def is_new_parameter(tools: Sequence[Any] | None, tool: str, key: str, used: Any) -> bool:
    """Whether ``key`` may start a new parameter of a call to ``tool``: non-empty, not in ``used``,
    and one of the schema's properties when the tool's schema lists any.

    The guard of the recoveries that end a value whose closing tag is missing
    at the next parameter's tag (Qwen3-Coder, GLM-4.7): a parameter tag naming
    a key the call already has, or one the tool does not take, is value text.
    """
    if not key or key in used:
        return False
    props = tool_parameter_schema(tools, tool)
    return not props or key in props


def declares_tool(tools: Sequence[Any] | None, name: str) -> bool:
    """Whether the request's tool list declares a tool ``name`` (the guard of recoveries that read
    misplaced markup as a call only for a tool the request offers). Never raises."""
    for tool in tool_list(tools):
        try:
            if tool_name(tool) == name:
                return True
        except Exception:  # a tool object of an unexpected shape
            continue
    return False


def takes_no_arguments(tools: Sequence[Any] | None, name: str) -> bool:
    """Whether the request declares a tool ``name`` whose parameters schema lists no properties.

    The guard of the recoveries that read a call the model wrote with stray markup and no
    arguments as the zero-argument call (GLM's ``<tool_call>NAME</arg_value></tool_call>``,
    docs/formats.md): only a tool that takes nothing can have lost nothing. False for a name the
    list does not declare, for no tool list, and for a tool whose schema has properties.
    """
    for tool in tool_list(tools):
        try:
            if tool_name(tool) == name:
                return not tool_parameter_schema(tools, name)
        except Exception:  # a tool object of an unexpected shape
            return False
    return False


def split_name_and_key(tools: Sequence[Any] | None, text: str) -> tuple[str, str] | None:
    """``(name, key)`` when ``text`` is a declared tool's name run together with one of its parameters.

    The guard of the recovery for a call whose first key lost its opening tag (GLM-4.7's
    ``<tool_call>send_commandcommand</arg_key>``, docs/formats.md): the longest name of the request's
    tools that is a proper prefix of ``text`` and whose schema lists the rest as a property. None
    when there is no such tool (no tool list, a tool that lists no properties, another rest).
    """
    best = None
    for tool in tool_list(tools):
        try:
            name = tool_name(tool)
        except Exception:  # a tool object of an unexpected shape
            continue
        if (isinstance(name, str) and name and len(name) < len(text) and text.startswith(name)
                and (best is None or len(name) > len(best)) and text[len(name):] in tool_parameter_schema(tools, name)):
            best = name
    return None if best is None else (best, text[len(best):])


# --------------------------------------------------------------------------- schema -> typing
_JSON_TYPE = {bool: "boolean", int: "integer", float: "number", str: "string", list: "array", dict: "object"}


def _resolve(spec: Any, root: Mapping[str, Any], depth: int) -> Any:
    """Follow ``$ref`` to ``#/$defs/NAME`` or ``#/definitions/NAME`` (nested), at most ``depth`` steps."""
    while depth > 0 and isinstance(spec, Mapping) and isinstance(spec.get("$ref"), str):
        ref = spec["$ref"]
        target = None
        for prefix in ("#/$defs/", "#/definitions/"):
            if ref.startswith(prefix):
                defs = root.get(prefix[2:-1])
                target = defs.get(ref[len(prefix):]) if isinstance(defs, Mapping) else None
        if target is None:
            return spec
        spec, depth = target, depth - 1
    return spec


def _collect(spec: Any, root: Mapping[str, Any], depth: int, types: set, state: dict) -> None:
    spec = _resolve(spec, root, depth)
    if not isinstance(spec, Mapping) or depth <= 0 or id(spec) in state.setdefault("seen", set()):
        return
    state["seen"].add(id(spec))  # each schema object once: no blow-up on branching cycles
    kind = spec.get("type")
    for k in (kind if isinstance(kind, (list, tuple)) else (kind,)):
        if k == "null":
            state["nullable"] = True
        elif k in TYPE_ORDER:
            types.add(k)
    enum = spec.get("enum")
    if isinstance(enum, (list, tuple)) and enum:
        state["enum"] = state.get("enum", ()) + tuple(enum)
        if kind is None:
            for member in enum:
                if member is None:
                    state["nullable"] = True
                elif type(member) in _JSON_TYPE:
                    types.add(_JSON_TYPE[type(member)])
    if "const" in spec and kind is None:
        member = spec["const"]
        state["enum"] = state.get("enum", ()) + (member,)
        if member is None:
            state["nullable"] = True
        elif type(member) in _JSON_TYPE:
            types.add(_JSON_TYPE[type(member)])
    for union in ("anyOf", "oneOf", "allOf"):
        branches = spec.get(union)
        if isinstance(branches, (list, tuple)):
            for branch in branches:
                _collect(branch, root, depth - 1, types, state)


def parameter_typing(tools: Sequence[Any] | None, tool: str, param: str) -> Typing:
    """The :class:`Typing` of parameter ``param`` of tool ``tool`` (:data:`UNTYPED` when unknown). Never raises."""
    root = tool_parameters(tools, tool)
    props = _field(root, "properties")
    spec = props.get(param) if isinstance(props, Mapping) else None
    if spec is None:
        return UNTYPED
    try:
        types: set = set()
        state: dict = {}
        _collect(spec, root, MAX_REF_DEPTH, types, state)
    except Exception:  # a schema of an unexpected shape (unhashable enum members, ...)
        return UNTYPED
    if "integer" in types and "number" in types:
        types.discard("integer")  # a number reads integers as integers anyway
    ordered = tuple(k for k in TYPE_ORDER if k in types)
    enum = state.get("enum")
    return Typing(ordered, bool(state.get("nullable")), enum)


def schema_typing(spec: Any, root: Mapping[str, Any]) -> Typing:
    """The :class:`Typing` of a value whose schema is ``spec`` (any schema object, nested ones too).

    ``root``: the tool's parameters object, for ``$ref``. For formats whose
    values nest (MiniMax M3's element trees), where a child's schema is a
    property or ``items`` of its parent's. :data:`UNTYPED` for ``None`` or an
    odd shape; never raises.
    """
    if spec is None:
        return UNTYPED
    try:
        types: set = set()
        state: dict = {}
        _collect(spec, root, MAX_REF_DEPTH, types, state)
    except Exception:
        return UNTYPED
    if "integer" in types and "number" in types:
        types.discard("integer")
    return Typing(tuple(k for k in TYPE_ORDER if k in types), bool(state.get("nullable")), state.get("enum"))


def resolve_schema(spec: Any, root: Mapping[str, Any]) -> Any:
    """``spec`` with ``$ref`` followed (:func:`schema_typing`'s rule); never raises."""
    try:
        return _resolve(spec, root, MAX_REF_DEPTH)
    except Exception:
        return None


def container_schema(spec: Any, kind: str, root: Mapping[str, Any] | None = None) -> Any:
    """The schema that describes the members of a ``kind`` (``"object"``/``"array"``) value whose schema is
    ``spec``: ``spec`` itself when it has ``properties`` / ``additionalProperties`` (objects) or ``items``
    (arrays); else, among its ``anyOf`` / ``oneOf`` / ``allOf`` branches, nested ones and ``$ref``
    followed (at most :data:`MAX_REF_DEPTH` deep, each schema once), the first that has them, else the
    first whose ``type`` is ``kind``; else ``spec``. ``None`` when ``spec`` is no schema. Never raises.

    For formats whose values nest (MiniMax M3's element trees): a member's schema is then looked up in
    the answer (a nested union, ``{"anyOf": [{"anyOf": [..., {"type": "array", "items": ...}]}]}``, is
    one union).
    """
    if not isinstance(spec, Mapping):
        return None
    field = "properties" if kind == "object" else "items"
    if field in spec or (kind == "object" and "additionalProperties" in spec):
        return spec
    root = root if isinstance(root, Mapping) else {}
    branches: list[Mapping[str, Any]] = []
    seen = {id(spec)}
    todo = [(spec, MAX_REF_DEPTH)]
    try:
        while todo:
            node, depth = todo.pop(0)
            for union in ("anyOf", "oneOf", "allOf"):
                for b in node.get(union) or ():
                    b = _resolve(b, root, depth)
                    if isinstance(b, Mapping) and id(b) not in seen and depth > 0:
                        seen.add(id(b))
                        branches.append(b)
                        todo.append((b, depth - 1))
    except Exception:  # a schema of an unexpected shape
        return spec
    for branch in branches:  # the first that describes the members, else the first of the type
        if field in branch or (kind == "object" and "additionalProperties" in branch):
            return branch
    for branch in branches:
        if branch.get("type") == kind:
            return branch
    return spec


def parameter_type(tools: Sequence[Any] | None, tool: str, param: str) -> str:
    """The JSON-schema type of one parameter, one name (:attr:`Typing.main`): ``"string"`` when unknown."""
    return parameter_typing(tools, tool, param).main


# --------------------------------------------------------------------------- JSON text
def json_fragment(text: str) -> str:
    """``text`` escaped as the inside of a JSON string literal (no quotes).

    Escaping is a per-character map, so the fragments of consecutive pieces
    concatenate to the escape of the whole: a long string value can stream.
    The escape is ``json.dumps(text, ensure_ascii=False)``'s, called
    directly (its C function; ``json.dumps`` builds an encoder per call).
    """
    return _encode_string(text)[1:-1]


#: ``text`` as a JSON string literal, quotes included: ``json.dumps(text, ensure_ascii=False)``
#: exactly (its C function; ``json.dumps`` builds an encoder per call). For keys.
json_string = _encode_string


# json_text (a value as JSON text) lives in pyliteral, SURROGATE in jsonscan, the lower layers; imported above.


# --------------------------------------------------------------------------- text -> value
_MISSING = object()


#: A JSON integer (RFC 8259), which ``json.loads`` reads with ``int()``.
_JSON_INT = re.compile(r"-?(?:0|[1-9][0-9]*)")
#: A JSON number with a fraction or an exponent, which :func:`_json` reads with ``finite_float``.
_JSON_FLOAT = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?")


def _json(text: str) -> Any:
    """Strict JSON with finite numbers only; raises ``ValueError`` / ``RecursionError``."""
    return strict_loads(text, finite=True)


def typed_json(text: str, typing: Typing) -> str:
    """The arguments JSON of a parameter value ``text`` typed by ``typing`` (:func:`convert`), else the string."""
    ok, value = convert(text, typing)
    return json_text(value) if ok else '"' + json_fragment(text) + '"'


def _read(text: str, kind: str, literal: tuple[bool, Any] | None = None, maybe_json: bool = True) -> Any:
    """``text`` (stripped) read as ``kind``, or ``_MISSING``.

    ``literal``: ``text`` already read as a Python literal (``(ok, value)``),
    and ``maybe_json`` False when it cannot be JSON (:class:`TypedValue`).
    """
    if kind == "boolean":
        low = text.lower()
        return True if low == "true" else False if low == "false" else _MISSING
    if kind in ("integer", "number"):
        if _JSON_INT.fullmatch(text):  # (what json.loads makes of a JSON integer, without a decoder per call)
            try:
                return int(text)
            except ValueError:  # more digits than int() reads: json.loads fails the same way
                return _MISSING
        if _JSON_FLOAT.fullmatch(text):  # (the same for a JSON float: _json's parse_float, called directly)
            try:
                value = finite_float(text)
            except ValueError:
                return _MISSING
            if kind == "integer":
                return int(value) if value.is_integer() else _MISSING
            return value
        try:
            value = _json(text)
        except (ValueError, RecursionError):
            return _MISSING
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return _MISSING
        if kind == "integer" and isinstance(value, float):
            return int(value) if value.is_integer() else _MISSING
        return value
    if kind in ("object", "array"):
        want = dict if kind == "object" else list
        if not text.startswith("{" if want is dict else ("[", "(")):
            return _MISSING
        try:
            if not maybe_json:
                raise ValueError("Python syntax")
            value = _json(text)
        except (ValueError, RecursionError):
            ok, value = literal if literal is not None else read_python_literal(text)
            if not ok:
                return _MISSING
        return value if isinstance(value, want) else _MISSING
    return text  # string


def _enum_key(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def convert(text: str, typing: Typing, literal: tuple[bool, Any] | None = None,
            maybe_json: bool = True) -> tuple[bool, Any]:
    """Read a parameter's value ``text`` as ``typing`` says.

    Returns ``(True, value)`` (JSON data: finite numbers, string keys) or
    ``(False, None)`` when the text reads as none of the candidate types: the
    caller then keeps the verbatim text as a string. An undeclared or
    string-only typing gives ``(False, None)`` (the text is the string).
    The order and the enum rule are in the module docstring. Never raises;
    linear in ``len(text)``. ``literal`` / ``maybe_json``: the text already
    read as a Python literal by :class:`TypedValue` (not read again).
    """
    if typing.is_string or not typing.declared:
        return False, None
    s = text.strip()
    if s in ("null", "None") and (typing.nullable or "string" not in typing.types):
        return True, None
    members = None
    if typing.enum is not None:
        try:
            members = {_enum_key(m) for m in typing.enum}
        except (TypeError, ValueError):
            members = None
    first = _MISSING
    for kind in typing.types:
        value = _read(s, kind, literal, maybe_json)
        if value is _MISSING:
            continue
        if members is None:
            if kind == "string":
                break  # the verbatim text, unstripped: the caller's string
            return True, value
        try:
            if _enum_key(value) in members:
                return True, value
        except (TypeError, ValueError):  # pragma: no cover - readers give JSON data
            pass
        if first is _MISSING and kind != "string":
            first = value
    if first is not _MISSING:
        return True, first
    return False, None


def json_as_written(text: str) -> str:
    """The JSON text of a value written as JSON (DSML's ``string="false"``): the text itself, stripped, when it is
    JSON (strict, :func:`callscale.parsers.jsonscan.strict_loads`), else the text as a JSON string. Never raises."""
    try:
        strict_loads(text)
    except (ValueError, RecursionError):
        return _encode_string(text)
    return text.strip()


def json_container_or_string(text: str) -> str:
    """The JSON text of a value the schema says nothing about, by GLM's rule: a JSON array or object is itself
    (as :func:`json_text` writes it), anything else the text as a JSON string. Never raises."""
    try:
        value = strict_loads(text)
    except (ValueError, RecursionError):
        value = text
    else:
        if not isinstance(value, (list, dict)):
            value = text
    return json_text(value)


#: What :class:`TypedValue` makes of a value whose typing says nothing (``undeclared``).
_UNDECLARED = frozenset(("string", "auto", "json"))


class StringOrNull:
    """The arguments JSON of a string-or-null value (``["string", "null"]``), streamed.

    The text is held back only while it may still read as null (outer
    whitespace, then ``null`` or ``None``, then whitespace: what
    :func:`convert` reads as null); from the first character that rules
    null out it streams as a JSON string. ``fragment`` escapes a piece of
    text for the inside of a JSON string (:func:`callscale.parsers.base.json_fragment`).
    :meth:`feed` and :meth:`end` return the JSON text to send. Each held
    character is looked at once: linear.
    """

    __slots__ = ("_fragment", "_held", "_word", "_k", "_phase", "released")

    def __init__(self, fragment) -> None:
        self._fragment = fragment
        self._held: list[str] = []
        self._word = ""
        self._k = 0
        self._phase = 0  # 0 leading whitespace, 1 in the word, 2 trailing whitespace
        #: True once the value is known to be a string (its text is streaming).
        self.released = False

    @staticmethod
    def wanted(typing: Typing) -> bool:
        """Whether ``typing`` is a string-or-null without an enum (the values this class streams)."""
        return typing.string_or_null

    def _may_be_null(self, ch: str) -> bool:
        phase = self._phase
        if phase == 1:
            if ch != self._word[self._k]:
                return False
            self._k += 1
            if self._k == len(self._word):
                self._phase = 2
            return True
        if ch.isspace():
            return True
        if phase == 0 and ch in "nN":
            self._word = "null" if ch == "n" else "None"
            self._k = 1
            self._phase = 1
            return True
        return False

    def feed(self, text: str) -> str:
        """The next piece of the value's text; returns the JSON text to send now (``""`` while held)."""
        if self.released:
            return self._fragment(text)
        for ch in text:
            if not self._may_be_null(ch):
                self.released = True
                held = "".join(self._held) + text
                self._held = []
                return '"' + self._fragment(held)
        self._held.append(text)
        return ""

    def end(self) -> str:
        """The value ended: the rest of its JSON text (``null``, or the string's end)."""
        if self.released:
            return '"'
        held = "".join(self._held)
        self._held = []
        return "null" if self._phase == 2 else '"' + self._fragment(held) + '"'


# --------------------------------------------------------------------------- the typed value writer
class TypedValue:
    """The one schema-typed value writer: a parameter value's arguments JSON, typed as it streams.

    ``TypedValue(typing)``; :meth:`head` (the JSON text to send when the
    value opens), ``feed(text)`` (each piece of the value's text; returns the
    JSON text to send now) and :meth:`end` (the rest). ``feed`` is an
    instance attribute, the mode's own function (:func:`json_fragment`,
    :meth:`StringOrNull.feed`, or the held reading): a call of it is one
    Python frame (it runs once a delta in a value). What a value becomes is
    :func:`convert`'s rule (``docs/formats.md``, "Schema typing"):

    - a string-only typing streams as a JSON string (``mode`` ``"string"``);
    - a string-or-null streams once null is ruled out (:class:`StringOrNull`, ``"nullable"``);
    - any other declared typing is held (``"held"``: its text must be kept: it may not
      convert, and is then the verbatim string), and where the typing allows a list
      or an object, a value opening with ``[``, ``(`` or ``{`` is read by
      the incremental :class:`callscale.parsers.pyliteral.PyLiteralReader` as it
      arrives, which also writes its JSON text: :meth:`end` then only joins
      (no value is parsed whole in one increment);
    - a typing that says nothing (:data:`UNTYPED`, or no schema) is the format's own rule,
      ``undeclared``: ``"string"`` (the default: a string), ``"auto"`` (GLM: a value
      opening with ``[`` or ``{`` is held, ``mode`` then ``"container"``, and read by
      :func:`json_container_or_string`; any other streams as a string, ``mode`` then
      ``"string"``) or ``"json"`` (DSML's ``string="false"``: held, read by
      :func:`json_as_written`). Another ``undeclared`` raises ``ValueError``.

    This is the one place that decides a value's kind: a format reads ``mode``
    (``"string"``: ``feed`` is :func:`json_fragment`) and never decides it beside it.
    At any split of the text, what it sends is exactly what the mode's whole-value
    rule gives for the whole text (:func:`typed_json`; tests/parsers/test_typed_escapes.py,
    tests/parsers/test_schema.py).
    """

    __slots__ = ("typing", "mode", "feed", "opening", "_gate", "_parts", "_done", "_reader")

    def __init__(self, typing: Typing, undeclared: str = "string") -> None:
        self.typing = typing
        self._gate: StringOrNull | None = None
        self._parts: list[str] = []  # the held text: pieces, and before them joined runs of pieces
        self._done: list[str] = []
        self._reader: PyLiteralReader | None = None
        #: :meth:`head`'s answer (an attribute too: read without a call)
        self.opening = ""
        # the one decision of a value's kind (string, string or null, typed when it ends; else the format's own)
        if not typing.declared:
            mode = undeclared
            if mode not in _UNDECLARED:
                raise ValueError(f"undeclared must be one of {sorted(_UNDECLARED)}, not {mode!r}")
        elif typing.is_string:
            mode = "string"
        elif typing.string_or_null:  # (StringOrNull.wanted)
            mode = "nullable"
        else:
            mode = "held"
        self.mode = mode
        if mode == "string":
            self.feed = json_fragment
            self.opening = '"'
        elif mode == "nullable":
            self._gate = StringOrNull(json_fragment)
            self.feed = self._gate.feed
        elif mode == "held":
            types = typing.types
            # a list or object may stream through the literal reader (_feed_lead decides, then _keep or
            # _feed_read); any other typing is kept whole (a scalar: no reader, no test a piece)
            self.feed = self._feed_lead if "array" in types or "object" in types else self._keep
        elif mode == "auto":
            self.feed = self._feed_auto
        else:  # "json": kept whole, read at its end (json_as_written)
            self.feed = self._keep

    def head(self) -> str:
        """JSON text to send when the value opens (``'"'`` for a streamed string; also :attr:`opening`)."""
        return self.opening

    # ``feed`` of a held value: keep the text (a list or object also read as it arrives); sends nothing. Its
    # first non-whitespace character decides which of the last two reads the rest (no per-piece test of that).
    def _feed_lead(self, text: str) -> str:
        self._keep(text)
        body = text.lstrip()
        if body:
            if body[0] in "[({":  # (the typing allows a list or an object: see __init__)
                self._reader = PyLiteralReader()
                self._reader.feed(body)
                self.feed = self._feed_read
            else:
                self.feed = self._keep
        return ""

    def _keep(self, text: str) -> str:
        parts = self._parts
        parts.append(text)
        if len(parts) > 64:  # so end() joins few pieces
            self._done.append("".join(parts))
            self._parts = []
        return ""

    def _feed_read(self, text: str) -> str:
        parts = self._parts
        parts.append(text)
        if len(parts) > 64:
            self._done.append("".join(parts))
            self._parts = []
        self._reader.feed(text)
        return ""

    # ``feed`` of an "auto" value: its leading whitespace is kept; its first other character decides: ``[`` or
    # ``{`` keeps the rest too (mode "container", read at its end), anything else streams it as a string.
    def _feed_auto(self, text: str) -> str:
        body = text.lstrip()
        if not body:
            return self._keep(text)
        if body[0] in "[{":
            self.mode = "container"
            self.feed = self._keep
            return self._keep(text)
        self._done.append("".join(self._parts))
        held = "".join(self._done) + text
        self._parts = self._done = []
        self.mode = "string"
        self.feed = json_fragment
        return '"' + json_fragment(held)

    def unfinished(self) -> bool:
        """Whether the value's text so far is an array or object still being read that is inside one of its
        strings (:meth:`callscale.parsers.pyliteral.PyLiteralReader.unfinished`). A format's closing tag met
        there is text of the value (docs/formats.md, "Schema typing" 6): the encoder writes such a value with
        ``json.dumps``, whose strings may hold any markup. False for every other value."""
        reader = self._reader
        return reader is not None and reader.unfinished()

    def end(self) -> str:
        """The value ended: the rest of its JSON text."""
        mode = self.mode
        if mode == "string":
            return '"'
        if self._gate is not None:
            return self._gate.end()
        self._done.append("".join(self._parts))
        text = "".join(self._done)
        self._parts = self._done = []
        if mode != "held":
            if mode == "json":
                return json_as_written(text)
            if mode == "container":
                return json_container_or_string(text)
            return '"' + json_fragment(text) + '"'  # "auto" with only whitespace: the string
        reader, self._reader = self._reader, None
        if reader is None:
            return typed_json(text, self.typing)
        literal = reader.end()
        # text JSON reads to the same value needs no second reading (as_json): the literal is it
        ok, value = convert(text, self.typing, literal, reader.maybe_json and not (literal[0] and reader.as_json))
        if not ok:
            return '"' + json_fragment(text) + '"'
        if literal[0] and value is literal[1]:
            return reader.json  # written while the value streamed
        return json_text(value)



#: The one writer of a value that streams as a string: stateless (``feed`` is :func:`json_fragment`, ``end``
#: answers ``'"'``), so every such value shares it (:func:`typed_value`).
_STRING_VALUE = TypedValue(UNTYPED)


def typed_value(typing: Typing, undeclared: str = "string") -> TypedValue:
    """``TypedValue(typing, undeclared)``, made once where the value streams as a string (a declared string,
    or no typing with ``undeclared`` ``"string"``): that writer keeps nothing, so one serves every such value
    (a value a call's parameter: no writer made per parameter of many short calls)."""
    if typing.is_string or (not typing.declared and undeclared == "string"):
        return _STRING_VALUE
    return TypedValue(typing, undeclared)
