"""callscale check: the differential checker passes our parsers and catches faulty ones."""

from pathlib import Path

import pytest

from callscale import check, cli
from workloads import faults

TESTS = Path(__file__).parent


def test_check_passes_a_correct_parser(capsys):
    status = cli.main(["check", "--parser", "deepseek_v31,deepseek_v32", "--workload", "write_file,unclosed_call"])
    out = capsys.readouterr().out
    assert status == 0
    assert "deepseek_v31" in out and "all agree" in out and "FAIL" not in out


@pytest.mark.parametrize("faulty", ["DropsWhitespaceDeltas", "LosesTailWithEndToken"])
def test_check_catches_a_faulty_parser(faulty, capsys, monkeypatch):
    monkeypatch.chdir(TESTS)
    status = cli.main(["check", "--parser", f"faulty_parsers:{faulty}", "--format", "deepseek_v31",
                       "--workload", "write_file,many_short_calls"])
    out = capsys.readouterr().out
    assert status == 1
    assert f"FAIL faulty_parsers:{faulty}" in out


def test_fault_items_carry_the_cases():
    items = check.fault_items("deepseek_v31")
    ids = [c["id"] for c in faults.load("deepseek_v31")]
    assert [i.label for i in items] == ids and ids
    assert all("".join(i.own_deltas) == i.text for i in items)


def test_every_fault_case_names_a_registered_parser():
    import parsers

    assert {c["parser"] for c in faults.load()} <= set(parsers.names())


@pytest.mark.parametrize("argv", [
    ["--parser", "nope"],
    ["--workload", "nope"],
    ["--chunkings", "slices:3"],
    ["--lengths", "0"],
    ["--parser", "null"],
])
def test_bad_options_exit_2(argv, capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["check", *argv])
    assert exit_info.value.code == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


def test_arguments_nested_deeper_than_json_reads_do_not_crash_the_checker():
    deep = '{"a": ' + "[" * 50_000 + "]" * 50_000 + "}"
    assert check.StreamedCall("f", deep).arguments() is None
    assert check.StreamedCall("f", '{"a": [1]}').arguments() == {"a": [1]}
