"""The frictions of negative lengths, the config file named, the message for a class without finish()."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from callscale.cli import main
from support import HELPERS


def _run(argv, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    return exit_info.value.code, capsys.readouterr().err.strip().splitlines()


@pytest.mark.parametrize("option, value, says", [
    ("--lengths", "-1k,2k,4k", "--lengths: bad length '-1k': expected a positive size"),
    ("--threshold", "-1", "argument --threshold: must be more than 1"),
])
def test_a_negative_value_is_the_options_own_message_not_expected_one_argument(option, value, says, capsys):
    status, err = _run(["gate", "--parser", "deepseek_v31", option, value], capsys)
    assert status == 2 and len(err) == 1, err
    assert says in err[0] and "expected one argument" not in err[0]


def test_a_bad_value_in_pyproject_names_the_file(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.callscale]\nthreshold = "high"\n')
    proc = subprocess.run([sys.executable, "-m", "callscale", "gate", "--parser", "deepseek_v31"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.strip() == (f"callscale gate: error: [tool.callscale] in {tmp_path / 'pyproject.toml'}: "
                                   "threshold must be a number, got 'high' (see callscale gate --help)")


def test_a_class_without_finish_is_told_the_contract_not_trtllm(capsys, monkeypatch):
    monkeypatch.chdir(HELPERS)
    monkeypatch.syspath_prepend(str(HELPERS))
    status, err = _run(["scale", "--parser", "half_parser:HalfParser", "--workload-format", "deepseek_v31"], capsys)
    assert status == 2 and len(err) == 1, err
    assert "HalfParser has no detect_and_parse() and no finish(): a parser needs parse_streaming_increment(delta, " \
           "tools), detect_and_parse(text, tools) and finish(tools)" in err[0]
    assert "not a trtllm tool parser" not in err[0]
