"""What a person views shows what came from a parser, a workload, a file or an exception as text, never as
markup: the Markdown summary (``--summary``, a pull-request comment, the job summary), history's page and the
figures' titles. tests/helpers/data/gate-one-failing.csv is a real run (deepseek_v31 and tests/helpers/quadratic_parser.py).
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pandas as pd
import pytest

from callscale import summary
from support import run_main, HELPERS

RUN = HELPERS / "data" / "gate-one-failing.csv"
EVIL = "q`x|<img src=x onerror=alert(1)>[Approve](https://e.example)`` $a$ _b_ ~~c~~"
EVIL_WORKLOAD = "write|<b>file</b>[w](https://w.example)"
EVIL_ERROR = "ValueError: <img src=y onerror=alert(2)> | [Merge](https://m.example) `tick"


@pytest.fixture(autouse=True)
def _no_step_summary(monkeypatch):
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)


def code_spans(line: str) -> tuple[list[str], str]:
    """The code spans' contents of ``line`` (CommonMark: a run of N backticks to the next run of exactly N)
    and the line with each span replaced by ``CODE``."""
    spans, rest, at = [], [], 0
    while at < len(line):
        if line[at] == "\\" and at + 1 < len(line):
            rest.append(line[at:at + 2])
            at += 2
            continue
        if line[at] == "`":
            fence = re.match("`+", line[at:]).group()
            close = re.compile(rf"(?<!`){fence}(?!`)")
            found = close.search(line, at + len(fence))
            if found:
                body = line[at + len(fence):found.start()]
                spans.append(body[1:-1] if body.startswith(" ") and body.endswith(" ") and body.strip() else body)
                rest.append("CODE")
                at = found.end()
                continue
        rest.append(line[at])
        at += 1
    return spans, "".join(rest)


def unescaped(text: str, chars: str) -> list[str]:
    """Each character of ``chars`` in ``text`` that no backslash escapes (the summary's own bold verdict words
    left out)."""
    text = re.sub(r"\*\*(FAIL|ERROR|TIMEOUT|WORSE)\*\*", "", text.replace("\\\\", ""))
    return re.findall(rf"(?<!\\)[{re.escape(chars)}]", text)


def evil_run(tmp_path: Path) -> Path:
    df = pd.read_csv(RUN, keep_default_na=False, dtype=str)
    quad = df["parser"] == "quadratic_parser:QuadraticParser"
    df.loc[quad, "parser"] = EVIL
    df["workload"] = EVIL_WORKLOAD
    last = df.index[quad][-1]
    df.loc[last, "seconds"] = ""
    df.loc[last, "error"] = EVIL_ERROR
    path = tmp_path / "run.csv"
    df.to_csv(path, index=False)
    return path


def test_text_and_code_show_markup_as_it_is():
    assert summary.text("a|b <img> [x](y) `c` *d* _e_ write_file $f$ ~g~ \\") == \
        "a\\|b \\<img> \\[x\\](y) \\`c\\` \\*d\\* \\_e\\_ write_file \\$f\\$ \\~g\\~ \\\\"
    assert summary.text("# not a heading") == "\\# not a heading" and summary.text("1. one") == "1\\. one"
    assert summary.code("a``b") == "```a``b```" and summary.code("`a") == "`` `a ``"
    assert summary.code("a|b", cell=True) == "`a\\|b`"
    assert code_spans(summary.code("x ``` y`"))[0] == ["x ``` y`"]


def test_the_summary_shows_a_parsers_workloads_and_exceptions_text_as_text(capsys, tmp_path):
    path = tmp_path / "s.md"
    assert run_main(capsys, "gate", "--from", str(evil_run(tmp_path)), "--summary", str(path))[0] == 1
    lines = path.read_text().splitlines()
    table = [line for line in lines if line.startswith("| ")]
    assert len(table) == 3  # the header and two pairs
    for line in table:  # before: the names' | added columns
        spans, rest = code_spans(line)
        assert len(unescaped(rest, "|")) == 8, line  # 7 cells
        assert not unescaped(rest, "<[]`*~$"), line
    spans, _ = code_spans(table[1])
    assert spans[0].replace("\\|", "|") == EVIL  # the name whole, in one span
    failing = [line for line in lines if line.startswith("- ")]
    assert len(failing) == 1
    spans, rest = code_spans(failing[0])
    assert spans == [EVIL]
    assert not unescaped(rest, "<[]`|*~$"), failing[0]  # before: <img ...> and [Merge](...) as written
    assert "ValueError: \\<img src=y onerror=alert(2)> \\| \\[Merge\\](https://m.example) \\`tick" in rest
    reproduce = [line for line in lines if line.startswith("  reproduce: ")]
    spans, rest = code_spans(reproduce[0].removeprefix("  reproduce: "))
    assert rest == "CODE"  # before: the name's backtick ended the span and the rest was Markdown
    argv = shlex.split(spans[0])
    assert argv[:4] == ["callscale", "gate", "--parser", EVIL] and argv[argv.index("--workload") + 1] == EVIL_WORKLOAD


def test_compare_summary_shows_names_and_paths_as_text(capsys, tmp_path):
    run = evil_run(tmp_path)
    df = pd.read_csv(run, keep_default_na=False, dtype=str)
    df = df[df["error"] == ""]
    folder = tmp_path / "a`b|<i>"
    folder.mkdir()
    base, new = folder / "base.csv", tmp_path / "new.csv"
    df.to_csv(base, index=False)
    df.assign(seconds=[str(float(v) * 2) for v in df["seconds"]]).to_csv(new, index=False)
    path = tmp_path / "c.md"
    assert run_main(capsys, "compare", str(base), str(new), "--summary", str(path))[0] == 1
    lines = path.read_text().splitlines()
    spans, rest = code_spans(lines[2])
    assert spans[:2] == [str(base), str(new)]
    for line in [line for line in lines if line.startswith("| ") or line.startswith("- ")]:
        spans, rest = code_spans(line)
        assert not unescaped(rest, "<[]`*~$"), line
        if line.startswith("| "):
            assert len(unescaped(rest, "|")) == 8, line


def test_history_page_shows_names_from_asv_results_as_text(tmp_path, capsys):
    root = tmp_path / "asv" / "box"
    root.mkdir(parents=True)
    bench = "benchmarks.InstructionCount.track_instructions"
    params = [[repr("<img src=x onerror=alert(1)>$x$")], [repr("<b>w</b>")], ["1024", "2048", "4096"]]
    for i, counts in enumerate([[1000, 2000, 4000], [1000, 4000, 16000]]):
        commit = f"{i + 1:02d}" * 20
        doc = {"commit_hash": commit, "date": 1_700_000_000_000 + i * 60_000, "env_name": "py",
               "result_columns": ["result", "params"], "results": {bench: [counts, params]}}
        (root / f"{commit[:8]}-py.json").write_text(json.dumps(doc))
    out = tmp_path / "page"
    assert run_main(capsys, "history", "--results", str(tmp_path / "asv"), "--out", str(out))[0] == 0
    page = (out / "index.html").read_text()
    assert "<img src=x" not in page and "<b>w" not in page  # before: both were markup in the verdict table
    assert "&lt;img src=x onerror=alert(1)&gt;$x$" in page and "&lt;b&gt;w&lt;/b&gt;" in page
