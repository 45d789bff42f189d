"""callscale: measure how a streaming tool-call parser's cost grows with call length."""

__version__ = "0.1.0"
