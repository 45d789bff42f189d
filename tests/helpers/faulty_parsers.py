"""Parsers with faults public stacks shipped, for tests that prove the checker catches them.

Each wraps a correct parser and breaks one thing.
"""

from callscale.parsers.deepseek import CALL_END, DeepSeekV31Parser


class DropsWhitespaceDeltas(DeepSeekV31Parser):
    """Drops every content piece that is only whitespace (the 'newlines leak / vanish' fault)."""

    def parse_streaming_increment(self, delta, tools=None):
        result = super().parse_streaming_increment(delta, tools)
        if result.normal_text.isspace():
            result.normal_text = ""
        return result


class LosesTailWithEndToken(DeepSeekV31Parser):
    """Loses the arguments that arrive in the same delta as the call's end token (a fault public
    stacks shipped: the closing branch rebuilt the unsent tail wrongly)."""

    def parse_streaming_increment(self, delta, tools=None):
        result = super().parse_streaming_increment(delta, tools)
        if CALL_END in delta and result.calls:
            result.calls[-1].parameters = ""
        return result


# ------------------------------------------------------------ one fixture per kind of `callscale check`
from callscale.parsers.base import StreamingParseResult, ToolCallItem  # noqa: E402
from callscale.parsers.deepseek import CALLS_BEGIN, CALLS_END  # noqa: E402
from callscale.parsers.qwen import TOOL_CALL_CLOSE, Qwen3Parser  # noqa: E402


class DropsTwoCallsInOneDelta(Qwen3Parser):
    """Reports none of the calls of a delta that closes two or more (a fault TensorRT-LLM's Qwen3
    parser shipped: two complete calls in one delta gave none); kind ``dropped call``."""

    def parse_streaming_increment(self, delta, tools=None):
        result = super().parse_streaming_increment(delta, tools)
        if delta.count(TOOL_CALL_CLOSE) >= 2:
            result.calls = []
        return result


class LeaksCallsEndToken(DeepSeekV31Parser):
    """Passes the calls-block end token on as content; kind ``markup in content``."""

    def parse_streaming_increment(self, delta, tools=None):
        result = super().parse_streaming_increment(delta, tools)
        if CALLS_END in delta:
            result.normal_text += CALLS_END
        return result


class DropsContentBeforeCalls(DeepSeekV31Parser):
    """Drops the content of the delta that holds the calls-block opener (the text right before
    it); kind ``content lost``."""

    def parse_streaming_increment(self, delta, tools=None):
        result = super().parse_streaming_increment(delta, tools)
        if CALLS_BEGIN in delta:
            result.normal_text = ""
        return result


class ResendsLastCall(DeepSeekV31Parser):
    """``finish()`` sends the last call again, whole, under a new index; kind ``duplicated call``."""

    def __init__(self):
        super().__init__()
        self._seen = {}  # tool_index -> [name, arguments text]

    def parse_streaming_increment(self, delta, tools=None):
        return self._note(super().parse_streaming_increment(delta, tools))

    def finish(self, tools=None):
        again = not self._finished and self._seen
        result = self._note(super().finish(tools))
        if again:
            name, arguments = self._seen[max(self._seen)]
            result.calls.append(ToolCallItem(max(self._seen) + 1, name, arguments))
        return result

    def _note(self, result):
        for item in result.calls:
            call = self._seen.setdefault(item.tool_index, [item.name, ""])
            call[1] += item.parameters
        return result


class PrefixesNames(DeepSeekV31Parser):
    """Sends each call's name with a ``functions.`` prefix; kind ``wrong name``."""

    def parse_streaming_increment(self, delta, tools=None):
        result = super().parse_streaming_increment(delta, tools)
        for item in result.calls:
            if item.name is not None:
                item.name = "functions." + item.name
        return result


class RaisesInFinish(DeepSeekV31Parser):
    """Raises in ``finish()`` after a call; kind ``exception``."""

    def parse_streaming_increment(self, delta, tools=None):
        result = super().parse_streaming_increment(delta, tools)
        self._had_call = getattr(self, "_had_call", False) or bool(result.calls)
        return result

    def finish(self, tools=None):
        if getattr(self, "_had_call", False):
            raise KeyError("tool_index")
        return super().finish(tools)


class WritesNullAsNaN(DeepSeekV31Parser):
    """Writes ``null`` in arguments as ``NaN`` (Python's json reads it, strict JSON does not);
    kind ``non-strict JSON``."""

    def parse_streaming_increment(self, delta, tools=None):
        result = super().parse_streaming_increment(delta, tools)
        for item in result.calls:
            item.parameters = item.parameters.replace("null", "NaN")
        return result


class WholeIndexMinusOne(LosesTailWithEndToken):
    """``detect_and_parse`` gives every call ``tool_index`` -1, as TensorRT-LLM's parsers do (not a
    fault); the streaming keeps :class:`LosesTailWithEndToken`'s fault."""

    def detect_and_parse(self, text, tools=None):
        result = DeepSeekV31Parser().detect_and_parse(text, tools)
        return StreamingParseResult(result.normal_text, [ToolCallItem(-1, c.name, c.parameters) for c in result.calls])


class DropsUndeclaredTools(DeepSeekV31Parser):
    """Drops calls to tools the request did not declare, as engine parsers do (not a fault when
    the request declares its tools); the calls left are numbered 0, 1, 2, ..."""

    def __init__(self):
        super().__init__()
        self._index = {}  # our tool_index -> the index sent, or None for a dropped call

    def parse_streaming_increment(self, delta, tools=None):
        return self._filter(super().parse_streaming_increment(delta, tools), tools)

    def finish(self, tools=None):
        return self._filter(super().finish(tools), tools)

    def _filter(self, result, tools):
        declared = {t["function"]["name"] for t in tools or ()}
        kept = []
        for item in result.calls:
            if item.tool_index not in self._index:
                sent = sum(i is not None for i in self._index.values())
                self._index[item.tool_index] = sent if item.name in declared else None
            if self._index[item.tool_index] is not None:
                kept.append(ToolCallItem(self._index[item.tool_index], item.name, item.parameters))
        result.calls = kept
        return result
