"""callscale.testing and its pytest plugin: the API a team's own tests call."""

import os
import subprocess
import sys
import unittest
from pathlib import Path

import pytest

from callscale import instructions, testing
from faulty_parsers import LeaksCallsEndToken
from quadratic_parser import QuadraticParser
from support import HELPERS

needs_valgrind = pytest.mark.skipif(instructions.shutil.which("valgrind") is None, reason="valgrind not installed")


def test_parser_path_names_a_module_level_class_and_makes_its_folder_importable():
    assert testing.parser_path(QuadraticParser) == "quadratic_parser:QuadraticParser"
    assert str(HELPERS) in sys.path
    assert testing.parser_path("pkg.mod:Cls") == "pkg.mod:Cls"


def test_parser_path_refuses_a_factory_a_child_cannot_import():
    def local_factory():
        return QuadraticParser()

    with pytest.raises(TypeError, match="cannot be imported by the meter's child process"):
        testing.parser_path(local_factory)


def test_default_meter_skips_without_valgrind(monkeypatch):
    def missing():
        raise instructions.MeterUnavailable(instructions.INSTALL_HINT)

    monkeypatch.setattr(instructions, "_valgrind", missing)
    with pytest.raises(unittest.SkipTest, match="instruction meter is unavailable here .*valgrind is not installed"):
        testing.assert_linear(QuadraticParser, "deepseek_v31")
    with pytest.raises(instructions.MeterUnavailable):  # asked for by name: an error, not a skip
        testing.assert_linear(QuadraticParser, "deepseek_v31", meter="instructions")


def test_unknown_meter_and_bad_parser_are_errors():
    with pytest.raises(ValueError, match="unknown meter 'wall'"):
        testing.assert_linear("deepseek_v31", meter="wall")
    with pytest.raises(TypeError, match="cannot import 'no_such_module'"):
        testing.assert_linear("no_such_module:Parser", "deepseek_v31", meter="time")


def test_chunking_invariant_passes_for_the_reference_parser():
    result = testing.assert_chunking_invariant("deepseek_v31", workloads=["write_file"], chunkings=["whole", "tokens:1"],
                                               faults=False)
    assert (result.passed, result.items, result.streams) == (True, 1, 3)  # detect_and_parse + 2 chunkings
    with_faults = testing.assert_chunking_invariant("deepseek_v31", workloads=["write_file"], chunkings=["whole"])
    assert with_faults.items > 1 and with_faults.passed


def test_chunking_invariant_fails_with_the_kind_and_smallest_case():
    with pytest.raises(AssertionError) as info:
        testing.assert_chunking_invariant(LeaksCallsEndToken, "deepseek_v31", workloads=["write_file"],
                                          faults=False, chunkings=["whole", "tokens:1"])
    message = str(info.value)
    assert message.startswith("callscale: faulty_parsers:LeaksCallsEndToken is not chunking-invariant")
    assert "markup in content: " in message and "smallest: write_file@1024" in message


def test_the_pytest_plugin_gives_the_fixtures(tmp_path):
    (tmp_path / "test_team.py").write_text(
        "def test_fixtures(assert_linear, assert_chunking_invariant, callscale_meter):\n"
        "    assert callscale_meter == 'time'\n"
        "    result = assert_chunking_invariant('deepseek_v31', workloads=['write_file'], chunkings=['whole'],\n"
        "                                       faults=False)\n"
        "    assert result.streams == 2\n")
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--callscale-meter", "time",
                           str(tmp_path / "test_team.py")], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert proc.returncode == 0 and "1 passed" in proc.stdout, proc.stdout + proc.stderr


@needs_valgrind
def test_assert_linear_fails_a_quadratic_parser_with_the_table_row_and_the_rule():
    with pytest.raises(AssertionError) as info:
        testing.assert_linear(QuadraticParser, "deepseek_v31", lengths=["256", "512", "1k"],
                              workloads=["write_file"])
    lines = str(info.value).splitlines()
    assert lines[0] == "callscale: quadratic_parser:QuadraticParser is not linear (instructions meter)"
    assert lines[1].split()[:2] == ["parser", "workload"] and lines[3].split()[:2] == [
        "quadratic_parser:QuadraticParser", "write_file"]
    assert lines[3].endswith("FAIL") and lines[4].startswith("FAIL quadratic_parser:QuadraticParser on write_file (")


@pytest.mark.slow
@needs_valgrind
def test_example_engine_suite_passes_the_linear_parser_and_fails_the_planted_quadratic():
    env = dict(os.environ, CALLSCALE_EXAMPLE_ENGINE="1")
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rf",
                           str(HELPERS / "example_engine")], capture_output=True, text=True, env=env, timeout=1200)
    out = proc.stdout
    assert proc.returncode == 1, out[-3000:]
    assert "1 failed, 2 passed" in out
    assert "FAILED tests/helpers/example_engine/test_parsers.py::test_planted_quadratic_parser_is_linear" in out \
        or "FAILED example_engine/test_parsers.py::test_planted_quadratic_parser_is_linear" in out \
        or "test_parsers.py::test_planted_quadratic_parser_is_linear" in out
    assert "callscale: quadratic_parser:QuadraticParser is not linear (instructions meter)" in out
    assert "FAIL quadratic_parser:QuadraticParser on write_file (step+projection): steepest step" in out
