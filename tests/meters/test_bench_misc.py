"""pytest-benchmark micro-benchmarks outside streaming: what a run pays before it measures.

Skipped in the default test run (``--run-benchmarks`` runs them), like
``test_bench_increment.py``: speed is shown by benchmarks, never asserted on
the wall clock in the unit tests.

- ``test_make_write_file_64k``: building a 64k-character ``write_file`` case
  (done once per measurement); the source text is cached after the first.
- ``test_dsml_rejects_a_malformed_head``: the DSML tag-attribute pattern on a
  head of ``MAX_HEAD`` characters of whitespace that does not match. Its
  quadratic version (``\\s*(/?)\\s*`` trying every split of the run) cost
  about 2 ms per head; compare with the ``MAX_HEAD // 4`` group: linear
  gives about 4x.
"""

import pytest

from callscale import workloads
from callscale.parsers.base import MAX_HEAD

pytestmark = pytest.mark.benchmark_suite


@pytest.mark.benchmark(group="make a 64k write_file case")
@pytest.mark.parametrize("fmt", ["deepseek_v32", "qwen3_coder", "gemma4"])
def test_make_write_file_64k(benchmark, fmt):
    workloads.make("write_file", fmt, 65536, seed=9)  # warm the file cache
    case = benchmark(workloads.make, "write_file", fmt, 65536, seed=9)
    assert len(case.calls[0].arguments["content"]) == 65536


@pytest.mark.benchmark(group="DSML: reject a malformed tag head")
@pytest.mark.parametrize("n", [MAX_HEAD // 4, MAX_HEAD])
def test_dsml_rejects_a_malformed_head(benchmark, n):
    from callscale.parsers.dsml import _HEAD

    head = " " * n + "x"
    assert benchmark(_HEAD.fullmatch, head) is None
