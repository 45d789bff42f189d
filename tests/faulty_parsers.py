"""Parsers with faults public stacks shipped, for tests that prove the checker catches them.

Each wraps a correct parser and breaks one thing.
"""

from parsers.deepseek import CALL_END, DeepSeekV31Parser


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
