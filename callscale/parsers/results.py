"""What a parser method returns: :class:`StreamingParseResult` and its :class:`ToolCallItem` pieces.

The shapes of the contract (``callscale/parsers/base.py`` describes it; ``base`` re-exports both
names). A module of their own: the shapes apart from the machinery that builds them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["ToolCallItem", "StreamingParseResult"]


@dataclass(slots=True)
class ToolCallItem:
    """One piece of one streamed tool call.

    ``tool_index``: 0, 1, 2, ... in the order calls start. ``name``: the
    function name, set on the first piece of a call only (``None`` after).
    ``parameters``: a piece of the arguments JSON text (may be ``""``).
    """

    tool_index: int
    name: str | None = None
    parameters: str = ""


@dataclass(slots=True)
class StreamingParseResult:
    """What one call of a parser method returns.

    ``normal_text``: content for the client (characters). ``calls``: tool-call
    pieces, in order. ``reasoning_text``: the model's reasoning (characters),
    for formats that mark it (gpt-oss's ``analysis`` channel, Mistral's
    ``[THINK]``); ``""`` for the others. Reasoning is neither content nor
    dropped.
    """

    normal_text: str = ""
    calls: list[ToolCallItem] = field(default_factory=list)
    reasoning_text: str = ""


#: ``object.__new__``: a result without the generated ``__init__``'s frame (its fields then set one by one).
new_result = object.__new__
