"""The pytest plugin (entry point ``pytest11``: ``callscale``): :mod:`callscale.testing` as fixtures.

Installed with callscale, it is loaded by pytest in any project; nothing runs
unless a test asks for a fixture:

- ``assert_linear``: :func:`callscale.testing.assert_linear`;
- ``assert_chunking_invariant``: :func:`callscale.testing.assert_chunking_invariant`;
- ``callscale_meter``: the meter the session measures with, from
  ``--callscale-meter`` (``instructions``, ``time``; default: the
  instruction meter where valgrind exists, else tests that measure are skipped).

    def test_my_parser_is_linear(assert_linear):
        assert_linear("my_engine.parsers:MyParser", "deepseek_v31")

Disable it with ``-p no:callscale``.
"""

from __future__ import annotations

import functools

import pytest

# callscale.testing (numpy, pandas, ...) is imported by the fixtures, not when pytest loads the plugin


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("callscale")
    group.addoption("--callscale-meter", choices=("instructions", "time"), default=None,
                    help="meter of the assert_linear fixture (default: instructions where valgrind exists, "
                         "else the test is skipped)")


@pytest.fixture
def callscale_meter(request: pytest.FixtureRequest) -> str | None:
    """The ``--callscale-meter`` option (``None``: the instruction meter or a skip)."""
    return request.config.getoption("--callscale-meter")


@pytest.fixture
def assert_linear(callscale_meter):
    """:func:`callscale.testing.assert_linear`, its ``meter`` defaulting to ``--callscale-meter``."""
    from . import testing

    @functools.wraps(testing.assert_linear)
    def check(parser, format=None, **options):
        __tracebackhide__ = True
        options.setdefault("meter", callscale_meter)
        return testing.assert_linear(parser, format, **options)
    return check


@pytest.fixture
def assert_chunking_invariant():
    """:func:`callscale.testing.assert_chunking_invariant`."""
    from . import testing

    return testing.assert_chunking_invariant
