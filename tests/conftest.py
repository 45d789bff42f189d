"""Test-run options: ``--run-benchmarks`` runs the pytest-benchmark micro-benchmarks.

Tests marked ``benchmark_suite`` (tests/test_bench_increment.py) are skipped
unless ``--run-benchmarks`` is given, so the default ``python -m pytest -q``
stays fast and never times anything.
"""

import pytest


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
