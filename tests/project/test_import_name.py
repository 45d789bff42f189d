"""The distribution owns one import name, ``callscale``: a team package named ``parsers`` or
``workloads`` (a common name in a serving stack) is measured like any other plug-in."""

from __future__ import annotations

import csv
import subprocess
import sys
import textwrap
from pathlib import Path


def test_team_packages_named_parsers_and_workloads_are_measured(tmp_path: Path):
    team = tmp_path / "team"
    (team / "parsers").mkdir(parents=True)
    (team / "workloads").mkdir()
    (team / "parsers" / "__init__.py").write_text("")
    (team / "workloads" / "__init__.py").write_text("NAME = 'the team workloads'\n")
    (team / "parsers" / "qwen.py").write_text(textwrap.dedent("""
        import workloads  # the team's own package, not callscale's
        from callscale.parsers.qwen import Qwen3Parser

        assert workloads.NAME == "the team workloads"

        class NaiveQwenParser(Qwen3Parser):
            pass
    """))
    out = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, "-m", "callscale", "scale", "--parser", "parsers.qwen:NaiveQwenParser",
         "--workload-format", "qwen3", "--workload", "write_file", "--lengths", "1k,2k,4k",
         "--repeats", "1", "--no-progress", "--out", str(out)],
        cwd=team, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "has no attribute" not in proc.stderr
    with open(out / "scaling.csv", newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["parser"] == "parsers.qwen:NaiveQwenParser"]
    assert [r["length"] for r in rows] == ["1024", "2048", "4096"]
    assert all(r["error"] == "" and float(r["seconds"]) > 0 for r in rows)


def test_the_distribution_installs_no_top_level_parsers_or_workloads(tmp_path: Path):
    """Asked in a process of its own, from an empty folder: the test run's own path holds tests/parsers/ and
    tests/workloads/ (the tests by subject), which are not what the distribution installs."""
    probe = textwrap.dedent("""
        import importlib.util
        import callscale.parsers, callscale.workloads
        assert callscale.parsers.__name__ == "callscale.parsers"
        assert callscale.workloads.__name__ == "callscale.workloads"
        print([name for name in ("parsers", "workloads") if importlib.util.find_spec(name) is not None])
    """)
    proc = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]", proc.stdout
