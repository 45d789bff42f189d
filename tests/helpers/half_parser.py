"""Test fixture: a parser class with parse_streaming_increment() but neither finish() nor detect_and_parse()."""


class HalfParser:
    def parse_streaming_increment(self, delta, tools=None):
        return None
