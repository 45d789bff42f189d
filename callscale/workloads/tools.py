"""The request's tool list for a case's calls (:func:`tools_for`): one OpenAI-form tool per tool name, with a JSON
schema typed from the argument values. The catalog's workloads and a team's own records both declare their tools
with it."""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence

from .render import Call

__all__ = ["tools_for", "MAX_DEPTH"]

#: The deepest nesting of a call's arguments (objects and arrays) callscale writes (the ``deep_value``
#: workload) or takes from a recorded output (a ``file:`` workload; deeper is refused with one line):
#: the tool typing here, the comparison of results and the renderers' ``json.dumps`` recurse per level
#: (a record 400 deep exhausted Python's recursion limit), while the format parsers read JSON 512 deep
#: (``callscale.parsers.jsonscan.MAX_JSON_DEPTH``) and Python literals 256
#: (``callscale.parsers.pyliteral.MAX_LITERAL_DEPTH``).
MAX_DEPTH = 200


_DESCRIPTIONS = {
    "write_file": "Write text to a file, replacing what it held.",
    "read_file": "Read a text file.",
    "get_weather": "Current weather in a city.",
    "search": "Search the web.",
    "set_timer": "Start a countdown timer.",
    "tag_items": "Attach labels to items.",
}


def _schema(value: Any) -> dict[str, Any]:
    """A JSON schema whose type matches ``value`` (nested for arrays and objects)."""
    if isinstance(value, bool):
        return {"type": "boolean"}
    if isinstance(value, int):
        return {"type": "integer"}
    if isinstance(value, float):
        return {"type": "number"}
    if isinstance(value, str):
        return {"type": "string"}
    if value is None:
        return {"type": "null"}
    if isinstance(value, Mapping):
        return {"type": "object", "properties": {k: _schema(v) for k, v in value.items()}}
    if isinstance(value, (list, tuple)):
        schema: dict[str, Any] = {"type": "array"}
        items = _merge_all(_schema(v) for v in value)
        if items is not None:
            schema["items"] = items
        return schema
    raise TypeError(f"not a JSON value: {value!r}")


def _merge_all(schemas: Iterable[dict[str, Any]]) -> dict[str, Any] | None:
    merged = None
    for schema in schemas:
        merged = schema if merged is None else _merge(merged, schema)
    return merged


def _merge(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """One schema that both values fit: integer and number give number; other mixes a type list."""
    ta, tb = a["type"], b["type"]
    if ta == tb:
        if ta == "object":
            props = dict(a["properties"])
            for key, sub in b["properties"].items():
                props[key] = _merge(props[key], sub) if key in props else sub
            return {"type": "object", "properties": props}
        if ta == "array" and "items" in b:
            return {"type": "array", "items": _merge(a["items"], b["items"]) if "items" in a else b["items"]}
        return a
    # a type is a name or (after an earlier mix) a list of names
    types = list(dict.fromkeys((ta if isinstance(ta, list) else [ta]) + (tb if isinstance(tb, list) else [tb])))
    if "integer" in types and "number" in types:  # every integer is a number
        types.remove("integer")
    return {"type": types[0] if len(types) == 1 else types}


def tools_for(calls: Sequence[Call]) -> list[dict[str, Any]]:
    """The request's tool list for ``calls``: one OpenAI-form tool per tool name, in first-call order.

    Each is ``{"type": "function", "function": {"name", "description",
    "parameters"}}`` with a JSON schema whose property types match the
    argument values (string, integer, number, boolean, array with ``items``,
    object with ``properties``, null); a parameter present in every call of
    the tool is ``required``. Schema-typed formats (``Renderer.schema_typed``)
    read values as strings without one. Raises ``TypeError`` for an argument
    value that is not JSON.
    """
    props: dict[str, dict[str, dict[str, Any]]] = {}
    seen_in: dict[str, list[set[str]]] = {}
    for call in calls:
        tool = props.setdefault(call.name, {})
        seen_in.setdefault(call.name, []).append(set(call.arguments))
        for key, value in call.arguments.items():
            schema = _schema(value)
            tool[key] = _merge(tool[key], schema) if key in tool else schema
    tools = []
    for name, properties in props.items():
        required = [k for k in properties if all(k in keys for keys in seen_in[name])]
        tools.append({
            "type": "function",
            "function": {
                "name": name,
                "description": _DESCRIPTIONS.get(name, f"The {name} tool."),
                "parameters": {"type": "object", "properties": properties, "required": required},
            },
        })
    return tools
