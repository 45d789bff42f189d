"""The environment stored beside the results (callscale.environment), and compare / --baseline naming what
differs between the base's and the new run's."""

from __future__ import annotations

import platform
import shutil
from pathlib import Path

import pandas as pd
import pytest

from callscale import environment
from callscale.cli import main
from support import HELPERS

RUN = HELPERS / "data" / "gate-one-failing.csv"


def _main(argv):
    try:
        return main(argv)
    except SystemExit as exc:
        return exc.code


@pytest.fixture(autouse=True)
def _no_step_summary(monkeypatch):
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)


def test_the_fingerprint_names_python_valgrind_callscale_and_the_plugin_provider():
    env = environment.fingerprint(["pytest:Whatever", "deepseek_v31"])
    assert env["python"].startswith(f"CPython {platform.python_version()} (")
    assert env["callscale"] == __import__("callscale").__version__
    if shutil.which("valgrind"):
        assert env["valgrind"].startswith("valgrind-3.")
    assert env["package:pandas"] == pd.__version__
    assert env["parser:pytest:Whatever"] == f"pytest {pytest.__version__}"  # the distribution of its module
    assert "parser:deepseek_v31" not in env  # a registered parser is callscale's own


def test_differences_name_each_key_and_say_when_the_harness_moved_the_counts():
    base = {"python": "CPython 3.11.7", "callscale": "0.1.0", "package:numpy": "2.4.6", "repository_commit": "a"}
    new = {"python": "CPython 3.11.9", "callscale": "0.1.0", "package:numpy": "2.4.6", "repository_commit": "b"}
    lines = environment.differences(base, new, "instructions", base_name="the base b.csv")
    assert lines[0] == "environment differs from the base b.csv's: python CPython 3.11.7 -> CPython 3.11.9"
    assert lines[1].startswith("counts moved: the harness changed (python); ")
    assert environment.differences(base, dict(base, repository_commit="c")) == []  # the change itself
    assert environment.differences(None, new)[0].startswith("environment: the base recorded none")
    assert environment.differences(None, None) == [] and environment.differences(base, None) == []
    only_package = environment.differences(base, dict(base, **{"package:numpy": "2.5.0"}))
    assert only_package == ["environment differs from the base's: package:numpy 2.4.6 -> 2.5.0"]


def test_compare_says_the_counts_moved_with_the_harness(tmp_path, capsys):
    for side, python in (("base", "CPython 3.11.7"), ("new", "CPython 3.12.1")):
        (tmp_path / side).mkdir()
        shutil.copy(RUN, tmp_path / side / "scaling.csv")
        environment.write({"python": python, "callscale": "0.1.0"}, tmp_path / side)
    summary = tmp_path / "c.md"
    assert _main(["compare", str(tmp_path / "base" / "scaling.csv"), str(tmp_path / "new" / "scaling.csv"),
                  "--summary", str(summary)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-3] == (f"environment differs from the base {tmp_path / 'base' / 'scaling.csv'}'s: python "
                       "CPython 3.11.7 -> CPython 3.12.1")
    assert out[-2].startswith("counts moved: the harness changed (python)")
    assert "> counts moved: the harness changed (python)" in summary.read_text()


def test_gate_baseline_without_an_environment_says_it_cannot_tell(tmp_path, capsys):
    (tmp_path / "base").mkdir()
    shutil.copy(RUN, tmp_path / "base" / "scaling.csv")
    (tmp_path / "new").mkdir()
    shutil.copy(RUN, tmp_path / "new" / "scaling.csv")
    environment.write(environment.fingerprint(), tmp_path / "new")
    assert _main(["gate", "--from", str(tmp_path / "new" / "scaling.csv"), "--baseline",
                  str(tmp_path / "base" / "scaling.csv")]) == 1  # the quadratic row fails; nothing got worse
    out = capsys.readouterr().out
    assert "compare passed: 2 parser x workload pairs" in out
    assert (f"environment: the base {tmp_path / 'base' / 'scaling.csv'} recorded none (environment.json is "
            "missing)") in out
