"""Test-run options, the helpers' folder, and one rule for every test.

- tests/helpers/ (fixture parsers, stand-in engines, ``support``, ``formats``,
  data) is put first on ``sys.path``: a test in any subject folder
  (parsers/, workloads/, meters/, commands/, adapters/, project/) writes
  ``from support import ...``. Test module names are unique across the
  folders (pytest's default "prepend" import mode imports them by base name).

- ``--run-benchmarks`` runs the pytest-benchmark micro-benchmarks: tests
  marked ``benchmark_suite`` are skipped without it, so the default
  ``python -m pytest -q`` stays fast and never times anything.
- No parser may fail inside: the base class catches an exception from a
  format's state machine (a parser never raises on model output) and logs it
  under ``callscale.parsers`` (:data:`PARSER_LOGGER`); any such record fails
  the test that caused it.
"""

import logging
import sys
from pathlib import Path

import pytest

HELPERS = str(Path(__file__).resolve().parent / "helpers")
if HELPERS not in sys.path:
    sys.path.insert(0, HELPERS)

import callscale.parsers

#: The loggers the parsers write to (``logging.getLogger(__name__)`` in callscale/parsers/*.py).
PARSER_LOGGER = callscale.parsers.__name__


@pytest.fixture(autouse=True)
def no_parser_failures(request, caplog):
    """Fail a test during which the base class had to catch a parser's exception (unless it is marked
    ``parser_failure_expected``)."""
    with caplog.at_level(logging.ERROR, logger=PARSER_LOGGER):
        yield
    if request.node.get_closest_marker("parser_failure_expected"):
        return
    # caplog.records would hold this teardown's records only: read the test's own phases
    records = caplog.get_records("setup") + caplog.get_records("call")
    failures = [r for r in records if r.name.startswith(PARSER_LOGGER) and r.levelno >= logging.ERROR]
    assert not failures, "a parser failed inside: " + "; ".join(r.getMessage() for r in failures)


def pytest_addoption(parser):
    parser.addoption(
        "--run-benchmarks", action="store_true", default=False,
        help="run the tests marked benchmark_suite (pytest-benchmark micro-benchmarks)",
    )


def pytest_collection_modifyitems(config, items):
    if config.getoption("--run-benchmarks"):
        return
    skip = pytest.mark.skip(reason="benchmark_suite: pass --run-benchmarks to run it")
    for item in items:
        if item.get_closest_marker("benchmark_suite") is not None:
            item.add_marker(skip)
