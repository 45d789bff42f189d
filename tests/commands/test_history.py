"""callscale history on a small asv results folder written in asv 0.6's layout."""

from __future__ import annotations

import base64
import json
import math
import re
from pathlib import Path

import pandas as pd
import pytest

from callscale import history
from callscale.cli import main

LENGTHS = [512, 2048, 8192]
PARSERS = ["qwen3", "glm45"]
WORKLOADS = ["write_file", "repeated_opener"]
C1, C2, C3 = "a" * 40, "b" * 40, "c" * 40
ENV = "virtualenv-py3.11-numpy"
COLUMNS = ["result", "params", "version", "started_at", "duration", "stats_ci_99_a", "stats_ci_99_b",
           "stats_q_25", "stats_q_75", "stats_number", "stats_repeat", "samples", "profile"]


def linear(n: int) -> float:
    return 1000.0 * n


def _result_file(folder: Path, commit: str, date_ms: int, counts, env: str = ENV) -> None:
    """One asv result file; ``counts(parser, workload, length)`` gives each figure (None: n/a)."""
    values = [counts(p, w, n) for p in PARSERS for w in WORKLOADS for n in LENGTHS]
    params = [[repr(p) for p in PARSERS], [repr(w) for w in WORKLOADS], [str(n) for n in LENGTHS]]
    data = {
        "commit_hash": commit, "env_name": env, "date": date_ms, "params": {"machine": folder.name},
        "python": "3.11", "requirements": {}, "env_vars": {}, "result_columns": COLUMNS,
        "results": {
            history.EXACT_SERIES: [values, params, "v1", 0, 1.0] + [None] * 8,
            "benchmarks.StreamTime.time_stream": [[0.5], [["'qwen3'"]], "v2", 0, 1.0] + [None] * 8,
        },
        "durations": {}, "version": 2,
    }
    (folder / f"{commit[:8]}-{env}.json").write_text(json.dumps(data))


@pytest.fixture()
def results(tmp_path: Path) -> Path:
    root = tmp_path / "asv"
    machine = root / "ci-box"
    machine.mkdir(parents=True)
    (machine / "machine.json").write_text(json.dumps({"machine": "ci-box", "version": 1}))
    (root / "benchmarks.json").write_text(json.dumps({
        history.EXACT_SERIES: {"param_names": ["parser", "workload", "length"], "unit": "instructions"},
        "version": 2}))
    # dates out of file-name order: c1 first, then c2, then c3
    _result_file(machine, C2, 2_000_000_000_000, lambda p, w, n: linear(n) * 1.0001)
    _result_file(machine, C1, 1_000_000_000_000, lambda p, w, n: None if (p, w, n) == ("glm45", "repeated_opener",
                                                                                        512) else linear(n))
    # c3 plants a rescan in qwen3 on write_file: cost grows with the square of the length
    _result_file(machine, C3, 3_000_000_000_000,
                 lambda p, w, n: linear(n) * n / 512 if (p, w) == ("qwen3", "write_file") else linear(n))
    # another environment with one commit only: not the default
    _result_file(machine, C3, 3_000_000_000_000, lambda p, w, n: 7.0, env="existing-py_usr_bin_python")
    return root


def test_load_results_decodes_params_and_keeps_na(results):
    frame = history.load_results(results)
    assert len(frame) == 4 * len(PARSERS) * len(WORKLOADS) * len(LENGTHS)
    assert set(frame["parser"]) == set(PARSERS) and set(frame["length"]) == set(LENGTHS)
    assert frame["length"].map(type).eq(int).all()
    missing = frame[(frame["commit"] == C1) & (frame["parser"] == "glm45") & (frame["workload"] == "repeated_opener")
                    & (frame["length"] == 512)]
    assert len(missing) == 1 and math.isnan(missing["value"].iloc[0])
    assert frame[frame["commit"] == C1]["date"].iloc[0] == pd.Timestamp(1_000_000_000_000, unit="ms", tz="UTC")


def test_exact_series_takes_the_environment_with_most_commits_in_date_order(results):
    series = history.exact_series(history.load_results(results))
    assert list(dict.fromkeys(series["commit"])) == [C1, C2, C3]
    assert len(series) == 3 * 12 - 1  # the n/a figure is dropped
    assert 7.0 not in set(series["instructions"])
    other = history.exact_series(history.load_results(results), env="existing-py_usr_bin_python")
    assert set(other["instructions"]) == {7.0}
    with pytest.raises(history.HistoryError, match="no results for env 'nope'.*existing-py_usr_bin_python"):
        history.exact_series(history.load_results(results), env="nope")


def test_exponents_verdict_changes_and_count_changes(results):
    series = history.exact_series(history.load_results(results))
    fits = history.exponents(series, threshold=1.3)
    assert len(fits) == 3 * len(PARSERS) * len(WORKLOADS)
    rescan = fits[(fits["commit"] == C3) & (fits["parser"] == "qwen3") & (fits["workload"] == "write_file")]
    # the gate's exponent: fitted on each case's text length, not on the requested length
    from callscale import fit
    from callscale.workloads.catalog import text_lengths

    chars = text_lengths("write_file", "qwen3", LENGTHS)
    assert rescan["exponent"].iloc[0] == pytest.approx(fit.exponent(chars, [linear(n) * n / 512 for n in LENGTHS]), rel=1e-12)
    assert rescan["exponent"].iloc[0] > 1.8
    assert rescan["verdict"].iloc[0] == "FAIL"
    linear_fits = fits[~((fits["commit"] == C3) & (fits["parser"] == "qwen3") & (fits["workload"] == "write_file"))]
    for row in linear_fits.dropna(subset=["exponent"]).itertuples():
        # (synthetic counts linear in the requested length read above 1 on the text's: write_file's text
        # is 657 characters at 512; a real linear parser's counts follow the text, and read 1.0)
        assert row.exponent == pytest.approx(fit.exponent(text_lengths(row.workload, row.parser, LENGTHS),
                                                          [linear(n) for n in LENGTHS]), rel=1e-12)
    # two lengths left at c1 for glm45 on repeated_opener: no fit, verdict ERROR
    two = fits[(fits["commit"] == C1) & (fits["parser"] == "glm45") & (fits["workload"] == "repeated_opener")]
    assert two["verdict"].iloc[0] == "ERROR"

    changes = history.verdict_changes(fits)
    flips = changes[changes["parser"] == "qwen3"]
    assert flips[["commit", "workload", "before", "after", "previous"]].values.tolist() == [
        [C3, "write_file", "ok", "FAIL", C2]]
    assert flips["exponent_before"].iloc[0] == pytest.approx(fit.exponent(chars, [linear(n) for n in LENGTHS]), rel=1e-12)
    assert changes[changes["parser"] == "glm45"][["commit", "before", "after"]].values.tolist() == [
        [C2, "ERROR", "ok"]]

    moved = history.count_changes(series, factor=1.05)
    assert moved[["commit", "parser", "workload", "length"]].values.tolist() == [
        [C3, "qwen3", "write_file", 2048], [C3, "qwen3", "write_file", 8192]]
    assert moved["ratio"].tolist() == pytest.approx([4 / 1.0001, 16 / 1.0001])
    # a tighter factor than the 0.01% step also lists the tests-only commit
    assert (history.count_changes(series, factor=1.00001)["commit"] == C2).sum() == 11


def test_write_makes_a_page_that_needs_nothing_else(results, tmp_path):
    out = tmp_path / "page"
    written = history.write(out, results, threshold=1.3)
    assert (written.commits, written.verdict_changes, written.count_changes) == (3, 2, 2)
    text = written.page.read_text()
    assert not re.search(r"<script|<link|https?://|@import|url\(", text)
    images = re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', text)
    assert len(images) == 2
    assert [base64.b64decode(i)[:8] for i in images] == [b"\x89PNG\r\n\x1a\n"] * 2
    assert base64.b64decode(images[0]) == written.instructions_png.read_bytes()
    # hashes link to the page's own commit list, whose rows say how to see the commit
    assert f'href="#commit-{C3}"' in text and f'id="commit-{C3}"' in text and f"git show {C3[:10]}" in text
    table = pd.read_csv(written.csv)
    assert len(table) == 12
    assert table.loc[(table["commit"] == C3) & (table["parser"] == "qwen3") & (table["workload"] == "write_file"),
                     "instructions_8192"].iloc[0] == linear(8192) * 16


def test_commit_url_template_links_the_full_hash(results, tmp_path):
    written = history.write(tmp_path / "p", results, threshold=1.3,
                            commit_url="https://git.example.org/callscale/commit/{commit}")
    text = written.page.read_text()
    assert f'href="https://git.example.org/callscale/commit/{C3}"' in text
    assert "#commit-" not in text.replace(f'id="commit-', "")


def test_history_command(results, tmp_path, capsys):
    out = tmp_path / "h"
    # the rescan (exponent 2.0) passes a threshold of 2.5 and a projection factor of 100: glm45's
    # ERROR -> ok is the one verdict change left
    assert main(["history", "--results", str(results), "--out", str(out), "--threshold", "2.5",
                 "--projection-factor", "100"]) == 0
    printed = capsys.readouterr().out
    assert "3 commits, 1 verdict changes, 2 counts moved by more than 1.05x" in printed
    assert sorted(p.name for p in out.iterdir()) == ["exponents.png", "history.csv", "index.html",
                                                     "instructions.png"]


@pytest.mark.parametrize("argv,message", [
    (["--factor", "1"], "--factor must be more than 1"),
    (["--commit-url", "https://example.org/c/"], "must contain {commit}"),
    (["--threshold", "-1"], "--threshold"),
    (["--env", "nope"], "no results for env 'nope'"),
    (["--out", "/proc/no/such"], "cannot write to --out /proc/no/such"),
])
def test_bad_options_give_one_line_and_exit_2(results, tmp_path, capsys, argv, message):
    with pytest.raises(SystemExit) as exit_:
        main(["history", "--results", str(results), *argv])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err and err.startswith("callscale history: error:")


def test_missing_or_empty_results_folder_exit_2(tmp_path, capsys):
    for folder in (tmp_path / "none", tmp_path):
        with pytest.raises(SystemExit) as exit_:
            main(["history", "--results", str(folder), "--out", str(tmp_path / "o")])
        assert exit_.value.code == 2
    err = capsys.readouterr().err.splitlines()
    assert "no asv results folder" in err[0] and "no instruction counts in the results" in err[1]
    assert all("docs/workflows.md" in line and "README" not in line for line in err), err  # not the team's README


def test_commits_of_the_same_second_follow_git_history(tmp_path):
    import subprocess

    repo = tmp_path / "repo"
    repo.mkdir()
    env = {"GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t",
           "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}

    def git(*args):
        return subprocess.run(["git", "-C", str(repo), *args], env=env, check=True, capture_output=True,
                              text=True).stdout.strip()

    git("init", "-q")
    hashes = []
    for i in range(3):  # each commit's hash sorts before its parent's, so hash order is the reverse of history
        for attempt in range(64):
            git("commit", "-q", "--allow-empty", "-m", f"c{i} {attempt}")
            head = git("rev-parse", "HEAD")
            if not hashes or head < hashes[-1]:
                break
            git("reset", "-q", "--hard", "HEAD~1")
        hashes.append(head)
    machine = repo / "results" / "asv" / "box"
    machine.mkdir(parents=True)
    for commit in hashes:
        _result_file(machine, commit, 1_767_225_600_000, lambda p, w, n: linear(n))
    frame = history.load_results(machine.parent)
    assert list(dict.fromkeys(history.exact_series(frame, repo=machine.parent)["commit"])) == hashes
    assert list(dict.fromkeys(history.exact_series(frame)["commit"])) == sorted(hashes)
    written = history.write(tmp_path / "out", machine.parent, threshold=1.3)
    assert pd.read_csv(written.csv)["commit"].drop_duplicates().tolist() == hashes


def test_a_benchmark_that_failed_at_a_commit_reads_as_no_figures(results):
    """asv stores ``null`` as the whole result of a benchmark that failed at a commit (a parser that does
    not import there): that commit has no figures, and the file is not unreadable."""
    machine = results / "ci-box"
    _result_file(machine, "d" * 40, 4_000_000_000_000, lambda p, w, n: 1.0)
    path = machine / f"{'d' * 8}-{ENV}.json"
    data = json.loads(path.read_text())
    data["results"][history.EXACT_SERIES][0] = None
    path.write_text(json.dumps(data))
    frame = history.load_results(results)
    failed = frame[frame["commit"] == "d" * 40]
    assert len(failed) == len(PARSERS) * len(WORKLOADS) * len(LENGTHS)
    assert failed["value"].isna().all()
    assert not frame.attrs.get("bad")


def test_the_page_names_the_teams_own_series_not_callscales(tmp_path):
    team = "callscale_series.CallscaleSeries.track_instructions"  # what `callscale init` writes
    root = tmp_path / "asv"
    machine = root / "ci-box"
    machine.mkdir(parents=True)
    (root / "benchmarks.json").write_text(json.dumps({
        team: {"param_names": ["parser", "workload", "length"], "unit": "instructions"}, "version": 2}))
    for commit, date in ((C1, 1_000_000_000_000), (C2, 2_000_000_000_000)):
        _result_file(machine, commit, date, lambda p, w, n: linear(n))
        path = machine / f"{commit[:8]}-{ENV}.json"
        data = json.loads(path.read_text())
        data["results"] = {team: data["results"][history.EXACT_SERIES]}
        path.write_text(json.dumps(data))
    written = history.write(tmp_path / "out", root, 1.3)
    page = written.page.read_text()
    assert f"<code>{team}</code>" in page
    assert history.EXACT_SERIES not in page
