""".ci/run tests the Python versions pyproject.toml declares: the lowest and the newest classifier, found by pyenv or uv.

The shell functions are read out of .ci/run and run with bash, as the recipe runs them.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from support import ROOT

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

RECIPE = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def _function(name: str) -> str:
    """The text of the shell function ``name`` in .ci/run (from its line ``name() {`` to the first ``}`` line)."""
    m = re.search(rf"^{name}\(\) {{.*?^}}$", RECIPE, re.S | re.M)
    assert m, f".ci/run has no function {name}"
    return m.group(0)


def _bash(script: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60,
                          env={"PATH": "/usr/bin:/bin", **env})


def _declared() -> list[tuple[int, int]]:
    return sorted(tuple(map(int, c.rsplit(" ", 1)[1].split("."))) for c in PROJECT["classifiers"]
                  if re.fullmatch(r"Programming Language :: Python :: \d+\.\d+", c))


def test_the_classifiers_start_at_the_lowest_python_the_package_requires():
    lowest = re.fullmatch(r">=(\d+)\.(\d+)", PROJECT["requires-python"])
    assert lowest, PROJECT["requires-python"]
    assert _declared()[0] == tuple(map(int, lowest.groups()))
    assert _declared()[-1] >= (3, 13)


def test_the_recipe_picks_the_lowest_and_newest_declared_python():
    got = _bash(_function("declared_pythons") + "\ndeclared_pythons", PY=sys.executable)
    assert got.returncode == 0, got.stderr
    assert got.stdout.split() == [f"{a}.{b}" for a, b in sorted({_declared()[0], _declared()[-1]})]


def test_the_fast_set_is_the_readmes_test_command():
    """.ci/run runs the fast set by the command README.md gives (with each declared end's interpreter)."""
    command = 'pytest -q -n auto --dist loadscope -m "not slow"'
    assert command in (ROOT / "README.md").read_text(encoding="utf-8")
    assert f'"$1" -m {command}' in _function("fast_set")


def test_a_python_neither_pyenv_nor_uv_has_is_found_as_nothing(tmp_path):
    (tmp_path / "versions" / "3.10.2" / "bin").mkdir(parents=True)
    (tmp_path / "versions" / "3.10.11" / "bin").mkdir(parents=True)
    for patch in ("3.10.2", "3.10.11"):
        exe = tmp_path / "versions" / patch / "bin" / "python"
        exe.write_text("#!/bin/sh\n")
        exe.chmod(0o755)
    script = _function("find_python") + "\nfind_python 3.10; echo '|'; find_python 3.99; echo '|'"
    got = _bash(script, PYENV_ROOT=str(tmp_path), HOME=str(tmp_path))
    assert got.returncode == 0, got.stderr
    found, missing, _ = got.stdout.split("|")
    assert found.strip() == str(tmp_path / "versions" / "3.10.11" / "bin" / "python")  # the highest patch release
    assert missing.strip() == ""


@pytest.mark.parametrize("version", ["3.10", "3.13"])
def test_this_machine_has_the_declared_pythons_ci_runs(version):
    got = _bash(_function("find_python") + f"\nfind_python {version}", HOME=str(Path.home()))
    if not got.stdout.strip():
        pytest.skip(f"no Python {version} through pyenv or uv here (.ci/run skips it with a line)")
    out = subprocess.run([got.stdout.strip(), "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                         capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == version


#: A test function with its decorators, up to the next decorator, function or class at the margin.
TEST_FUNCTION = re.compile(r"^(?:@[^\n]*\n)*def (test_\w+)\(.*?(?=^(?:@|def |class )|\Z)", re.S | re.M)


def test_a_test_that_asserts_on_one_python_only_is_marked_so_ci_runs_it_there():
    """.ci/run runs the fast set on the lowest and the newest declared Python; a fast test whose assertion holds
    on one version only (``sys.version_info[:2] == (...)``) is marked ``one_python``, which .ci/run adds to the
    slow tier it runs on its own Python."""
    assert '"slow or one_python"' in RECIPE
    marked = []
    for path in sorted((ROOT / "tests").rglob("test_*.py")):
        for m in TEST_FUNCTION.finditer(path.read_text(encoding="utf-8")):
            body = m.group(0)
            if "version_info[:2] ==" in body and "mark.slow" not in body:
                assert "mark.one_python" in body, f"{path.name}::{m.group(1)}"
                marked.append(m.group(1))
    assert "test_small_quadratic_fixtures_fail_under_instructions_though_one_slope_passes" in marked
