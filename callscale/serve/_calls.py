"""Engine-neutral glue: one stream's calls as an engine's serving layer reads them.

The engines' serving layers read two lists off a tool parser at the end of a
stream (vLLM ``ToolParser.get_remaining_unstreamed_args``, SGLang
``serving_chat._check_for_unstreamed_tool_args``): ``prev_tool_call_arr``
(per call ``{"name", "arguments"}``, the arguments parsed so far) and
``streamed_args_for_tool`` (per call, the argument text sent). The engine
sends the difference of the last call's two as a last piece. callscale's
parsers send every argument piece they parse at once, so the two agree and
the difference is empty: :class:`StreamedCalls` records the pieces and
builds both lists only when read (joining the pieces per delta would copy
each call's arguments anew every delta: quadratic).
"""

from __future__ import annotations

import json
from typing import Any, Iterator


class StreamedCalls:
    """The calls of one stream: per tool index its name and argument pieces (characters).

    ``add(item)`` records one ``ToolCallItem`` (O(1)); :meth:`records` and
    :meth:`streamed` join the pieces (O(arguments)), read at the end of a stream.
    ``dict_arguments``: a record's ``arguments`` is the decoded object when
    the text is a complete JSON object (SGLang's convention), else the text
    (vLLM's).
    """

    __slots__ = ("names", "pieces", "dict_arguments")

    def __init__(self, dict_arguments: bool = False) -> None:
        self.names: list[str | None] = []
        self.pieces: list[list[str]] = []
        self.dict_arguments = dict_arguments

    def __len__(self) -> int:
        return len(self.names)

    def add(self, index: int, name: str | None, parameters: str) -> bool:
        """Record one piece of call ``index``; True when it is the call's first (its name)."""
        names = self.names
        new = index >= len(names)
        while index >= len(names):
            names.append(None)
            self.pieces.append([])
        if name is not None and names[index] is None:
            names[index] = name
        if parameters:
            self.pieces[index].append(parameters)
        return new

    def clear(self) -> None:
        self.names.clear()
        self.pieces.clear()

    def streamed(self) -> list[str]:
        """Per call, the argument text sent."""
        return ["".join(p) for p in self.pieces]

    def records(self) -> list[dict[str, Any]]:
        """Per call ``{"name": ..., "arguments": ...}`` (see the class docstring)."""
        out = []
        for name, text in zip(self.names, self.streamed()):
            arguments: Any = text
            if self.dict_arguments and text:
                try:
                    decoded = json.loads(text)
                except ValueError:
                    decoded = None
                if isinstance(decoded, dict):
                    arguments = decoded
            out.append({"name": name, "arguments": arguments})
        return out


def merged(items: Any) -> Iterator[tuple[int, str | None, str]]:
    """``(tool_index, name, parameters)`` per run of consecutive pieces of one call (a result may hold
    several pieces of a call; an engine's client wants one per call and chunk). A piece with a name
    starts a new run."""
    index, name, parts = None, None, []
    for item in items:
        if item.tool_index != index or item.name is not None:
            if index is not None:
                yield index, name, "".join(parts)
            index, name, parts = item.tool_index, item.name, [item.parameters or ""]
        else:
            parts.append(item.parameters or "")
    if index is not None:
        yield index, name, "".join(parts)


def whole_calls(items: Any) -> list[tuple[str | None, str]]:
    """``(name, arguments)`` per call, in index order, from the pieces a whole-text parse returned."""
    calls: dict[int, list] = {}
    for item in items:
        entry = calls.setdefault(item.tool_index, [None, []])
        if item.name is not None and entry[0] is None:
            entry[0] = item.name
        entry[1].append(item.parameters or "")
    return [(calls[i][0], "".join(calls[i][1])) for i in sorted(calls)]


class CallRecord:
    """Mixin (before the engine's base class): ``prev_tool_call_arr`` and ``streamed_args_for_tool``
    read from ``self._calls`` (a :class:`StreamedCalls`); assigning an empty list (the engine's base
    ``__init__``, a test resetting a parser) clears the record. Set ``self._calls`` before the base
    class's ``__init__`` runs."""

    _calls: StreamedCalls

    @property
    def prev_tool_call_arr(self) -> list:
        return self._calls.records()

    @prev_tool_call_arr.setter
    def prev_tool_call_arr(self, value: list) -> None:
        if not value:
            self._calls.clear()

    @property
    def streamed_args_for_tool(self) -> list:
        return self._calls.streamed()

    @streamed_args_for_tool.setter
    def streamed_args_for_tool(self, value: list) -> None:
        if not value:
            self._calls.clear()


class DetectorGlue(CallRecord):
    """The detector protocol SGLang and TensorRT-LLM share, around callscale's parser of :attr:`format`.

    A subclass names the engine's result types (:attr:`result_type`, :attr:`item_type`: pydantic
    ``StreamingParseResult`` and ``ToolCallItem``) and comes before the engine's base class.
    ``parse_streaming_increment`` / ``finish``: per call and result, the call's name alone
    (``parameters=""``, its first item, as the engines' own detectors send it) then one item with the
    arguments parsed in that result (one item with both where :attr:`name_alone` is False: the
    engine's detector of the format sends whole calls); ``detect_and_parse``: one item per call, by a
    fresh parser;
    ``has_tool_call``: True when callscale's parser finds a call or markup in the text; structural
    tags: not supported (``NotImplementedError``).
    """

    format: str = ""
    result_type: Any = None
    item_type: Any = None
    #: A call's first streamed item carries its name alone (``parameters=""``); False: name and arguments.
    name_alone: bool = True

    def _glue_init(self) -> None:
        from callscale import parsers

        self._parser = parsers.get(self.format)()

    def _result(self, result: Any) -> Any:
        calls = []
        for index, name, arguments in merged(result.calls):
            if self._calls.add(index, name, arguments):
                self.current_tool_id = index
                self.current_tool_name_sent = True
            if name is not None and arguments and self.name_alone:  # the name alone first
                calls.append(self.item_type(tool_index=index, name=name, parameters=""))
                name = None
            calls.append(self.item_type(tool_index=index, name=name, parameters=arguments))
        return self.result_type(normal_text=result.normal_text, calls=calls)

    def parse_streaming_increment(self, new_text: str, tools: Any) -> Any:
        return self._result(self._parser.parse_streaming_increment(new_text, tools))

    def finish(self, tools: Any) -> Any:
        return self._result(self._parser.finish(tools))

    def detect_and_parse(self, text: str, tools: Any) -> Any:
        from callscale import parsers

        result = parsers.get(self.format)().detect_and_parse(text, tools)
        calls = [self.item_type(tool_index=i, name=name, parameters=arguments)
                 for i, (name, arguments) in enumerate(whole_calls(result.calls))]
        return self.result_type(normal_text=result.normal_text, calls=calls)

    def has_tool_call(self, text: str) -> bool:
        from callscale import parsers

        result = parsers.get(self.format)().detect_and_parse(text, ())
        return bool(result.calls) or result.normal_text != text

    def supports_structural_tag(self) -> bool:
        return False

    def structure_info(self) -> Any:
        raise NotImplementedError(f"callscale_{self.format}: structural tags (constrained tool calls) are not "
                                  "supported by callscale's parsers")


def class_name(fmt: str, suffix: str) -> str:
    """``Callscale<Format><suffix>``: ``("qwen3_coder", "ToolParser")`` -> ``CallscaleQwen3CoderToolParser``."""
    return "Callscale" + "".join(part.capitalize() for part in fmt.split("_")) + suffix


def register_formats(base: type, module: str, suffix: str, what: str, attributes, add) -> dict[str, type]:
    """One subclass of ``base`` per callscale format, named :func:`class_name` ``(fmt, suffix)`` in ``module``,
    with ``format`` and ``attributes(fmt)`` (a dict) set, handed to ``add(name, cls)`` (the engine's registry)
    under ``callscale_<format>``; returns ``{name: class}``. ``what``: the docstring's "as ..." (an SGLang
    detector)."""
    from callscale.serve import engine_name, formats

    made = {}
    for fmt in formats():
        name = engine_name(fmt)
        cls = type(class_name(fmt, suffix), (base,), {
            "format": fmt, **attributes(fmt), "__module__": module,
            "__doc__": f"callscale's {fmt} parser as {what} ({name})."})
        add(name, cls)
        made[name] = cls
    return made
