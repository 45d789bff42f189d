"""callscale check: the differential checker passes our parsers and catches faulty ones."""

from pathlib import Path

import pytest

from callscale import check, cli
from callscale.workloads import catalog, faults
from callscale.workloads.chunking import CHECK_CHUNKINGS, STRICT_CHECK_CHUNKINGS, chunk
from support import HELPERS


def test_check_passes_a_correct_parser(capsys):
    status = cli.main(["check", "--parser", "deepseek_v31,deepseek_v32", "--workload", "write_file,unclosed_call"])
    out = capsys.readouterr().out
    assert status == 0
    assert "deepseek_v31" in out and "all agree" in out and "FAIL" not in out


@pytest.mark.parametrize("faulty", ["DropsWhitespaceDeltas", "LosesTailWithEndToken"])
def test_check_catches_a_faulty_parser(faulty, capsys, monkeypatch):
    monkeypatch.chdir(HELPERS)
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
    from callscale import parsers

    assert {c["parser"] for c in faults.load()} <= set(parsers.names())


@pytest.mark.parametrize("argv", [
    ["--parser", "nope"],
    ["--workload", "nope"],
    ["--chunkings", "slices:3"],
    ["--chunkings", "tokens-random:1"],
    ["--show", "-1"],
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


def test_the_report_counts_failing_streams_and_names_each_kind_with_its_smallest_case(capsys, monkeypatch):
    monkeypatch.chdir(HELPERS)
    status = cli.main(["check", "--parser", "faulty_parsers:LeaksCallsEndToken,faulty_parsers:PrefixesNames",
                       "--format", "deepseek_v31", "--workload", "write_file", "--show", "3"])
    out = capsys.readouterr().out
    assert status == 1
    lines = out.splitlines()
    assert sum(line.startswith("FAIL ") for line in lines) == 3
    rows = {line.split()[0]: line.split() for line in lines[1:3]}
    failing = int(rows["faulty_parsers:LeaksCallsEndToken"][3])
    assert rows["faulty_parsers:LeaksCallsEndToken"][4:] == ["FAIL", "markup", "in", "content", str(failing)]
    assert f"... {failing + int(rows['faulty_parsers:PrefixesNames'][3]) - 3} more failing streams" in out
    smallest = min((c for c in faults.load("deepseek_v31")), key=lambda c: len(c["text"]))
    assert (f"faulty_parsers:LeaksCallsEndToken: markup in content: {failing} failing streams; "
            f"smallest: {smallest['id']} under detect_and_parse") in out
    assert "faulty_parsers:PrefixesNames: wrong name:" in out
    assert cli.main(["check", "--parser", "faulty_parsers:PrefixesNames", "--format", "deepseek_v31",
                     "--workload", "write_file", "--show", "0"]) == 1
    out = capsys.readouterr().out
    assert not any(line.startswith("FAIL ") for line in out.splitlines())
    assert f"... {rows['faulty_parsers:PrefixesNames'][3]} more failing streams" in out
    assert lines[-1].endswith(f"{failing + int(rows['faulty_parsers:PrefixesNames'][3])} failing streams")


def test_strict_adds_the_splits_inside_special_tokens(capsys):
    assert cli.main(["check", "--parser", "deepseek_v31", "--no-faults", "--workload", "write_file"]) == 0
    default = capsys.readouterr().out
    assert cli.main(["check", "--parser", "deepseek_v31", "--no-faults", "--workload", "write_file", "--strict"]) == 0
    strict = capsys.readouterr().out
    from callscale.workloads.chunking import model_check_chunkings

    model = len(model_check_chunkings(["deepseek_v31"])[0])  # 0 without callscale[tokenizers]
    assert f"under {len(CHECK_CHUNKINGS) + model} chunkings" in default
    assert f"under {len(STRICT_CHECK_CHUNKINGS) + model} chunkings" in strict and "all agree" in strict


def test_tokens_random_never_splits_a_special_token_and_merges_some_with_text():
    case = catalog.make("many_short_calls", "deepseek_v31", 1024)
    specials = case.special_tokens
    merged = 0
    for seed in range(20):
        deltas = chunk(case.text, f"tokens-random:{seed}:8", specials)
        assert "".join(deltas) == case.text and all(1 <= len(d) for d in deltas)
        assert deltas == chunk(case.text, f"tokens-random:{seed}:8", specials)
        pos = 0
        for delta in deltas:  # no special token crosses a cut
            for token in specials:
                start = case.text.find(token, max(0, pos - len(token) + 1))
                assert start == -1 or not (start < pos < start + len(token)), (seed, pos)
            pos += len(delta)
        merged += sum(any(t in d and d != t for t in specials) for d in deltas)
    assert merged > 0
    assert max(len(d) for d in chunk("x" * 100, "tokens-random:0:8")) <= 8
