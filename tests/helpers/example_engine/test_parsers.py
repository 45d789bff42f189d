"""An engine team's parser tests, as they would write them with callscale's pytest plugin.

The team's parser (a class of this module) must stay linear and
chunking-invariant; a planted quadratic parser (``quadratic_parser``, which
re-parses its whole buffer on every increment) shows what a failing test says.
"""

from callscale.parsers.deepseek import DeepSeekV31Parser
from quadratic_parser import QuadraticParser


class EngineDeepSeekV31Parser(DeepSeekV31Parser):
    """The team's parser: here the reference DeepSeek V3.1 parser under the team's own name."""


def test_engine_parser_is_linear(assert_linear):
    assert_linear(EngineDeepSeekV31Parser, "deepseek_v31", workloads=["write_file"])


def test_engine_parser_is_chunking_invariant(assert_chunking_invariant):
    assert_chunking_invariant(EngineDeepSeekV31Parser, "deepseek_v31", workloads=["write_file", "many_short_calls"])


def test_planted_quadratic_parser_is_linear(assert_linear):  # fails: the planted quadratic rescan
    assert_linear(QuadraticParser, "deepseek_v31", workloads=["write_file"])
