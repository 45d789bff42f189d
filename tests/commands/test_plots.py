"""Plots a person reads right: titles and legends inside the figure (one parser and sixteen), the history
exponent panel drawing what the verdict judges, the scale plot per character, flame graphs titled."""

from __future__ import annotations

import re
import shutil
import sys

import pytest

from callscale import cli, history, report
from callscale.parsers import names
from support import ROOT

import test_history as th


@pytest.fixture()
def figures(monkeypatch):
    """Every matplotlib Figure saved during the test, drawn (so text extents are known)."""
    from matplotlib.figure import Figure

    saved = []
    original = Figure.savefig

    def keep(self, *args, **kwargs):
        saved.append(self)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", keep)
    return saved


def outside(fig) -> list[str]:
    """Texts (titles, legend, labels) whose drawn extent leaves the figure, by more than a pixel."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    width, height = fig.bbox.width, fig.bbox.height
    found = []
    items = [*fig.texts, *fig.legends, *(getattr(fig, "_suptitle", None) and [fig._suptitle] or [])]
    for ax in fig.axes:
        if ax.get_visible():
            items += [ax.title, ax.yaxis.label, ax.xaxis.label]
    for item in items:
        box = item.get_window_extent(renderer)
        if box.width and (box.x0 < -1 or box.x1 > width + 1 or box.y0 < -1 or box.y1 > height + 1):
            found.append(f"{type(item).__name__} {getattr(item, 'get_text', lambda: 'legend')()!r}: {box}")
    return found


def _asv(tmp_path, parsers):
    """Five commits: commit 4 plants a rescan in the first parser (FAIL by step and projection), commit 3
    a small quadratic term in the last one on repeated_opener (FAIL by projection only)."""
    th.PARSERS[:] = parsers
    th.WORKLOADS[:] = ["write_file", "repeated_opener"]
    root = tmp_path / "asv"
    machine = root / "ci-box"
    machine.mkdir(parents=True)
    lin = lambda n: 1000.0 * n + 20000  # noqa: E731
    for i in range(5):
        def counts(p, w, n, i=i):
            if p == parsers[0] and w == "write_file" and i >= 3:
                return lin(n) * (1 + n / 2048)
            if p == parsers[-1] and w == "repeated_opener" and i == 2:
                return lin(n) + 0.02 * n * n
            return lin(n) * (1 + 0.01 * i)
        th._result_file(machine, f"{i + 1:x}" * 40, 1_000_000_000_000 + i * 1_000_000, counts)
    return root


@pytest.mark.parametrize("parsers", [["qwen3"], pytest.param(names(), marks=pytest.mark.slow)],  # sixteen: ~10-26 s
                         ids=["one parser", "sixteen"])
def test_history_pngs_keep_titles_and_legends_inside(tmp_path, figures, monkeypatch, parsers):
    monkeypatch.setattr(th, "PARSERS", list(th.PARSERS))
    monkeypatch.setattr(th, "WORKLOADS", list(th.WORKLOADS))
    history.write(tmp_path / "out", _asv(tmp_path, parsers), 1.3)
    assert len(figures) == 2
    for fig in figures:
        assert outside(fig) == []


def test_history_exponent_panel_puts_every_fail_over_the_dashed_line(tmp_path, figures, monkeypatch):
    monkeypatch.setattr(th, "PARSERS", list(th.PARSERS))
    monkeypatch.setattr(th, "WORKLOADS", list(th.WORKLOADS))
    written = history.write(tmp_path / "out", _asv(tmp_path, ["qwen3", "glm45"]), 1.3)
    import pandas as pd

    table = pd.read_csv(written.csv)
    fails = table[table["verdict"] == "FAIL"]
    # one FAIL by projection alone: its steepest step is under the threshold
    assert ((fails["steepest"] <= 1.3) & (fails["projection_ratio"] > 3)).sum() == 1
    exponents = figures[1]
    circled = [point for ax in exponents.axes for c in ax.collections for point in c.get_offsets()]
    assert len(circled) == len(fails) == 3
    assert all(y > 1.3 for _, y in circled)


def test_scale_png_per_character_flat_for_a_linear_cost_and_titles_inside(figures, tmp_path):
    from callscale.fit import fit
    from callscale.matrix import Row, Run
    from callscale.measure import Measurement

    lengths = (4096, 16384, 65536)

    def row(parser, cost):
        ms = [Measurement(parser=parser, format="qwen3", workload="write_file", length=n, chars=n,
                          chunking="tokens:4", deltas=n // 4, meter="time", repeats=1, seconds=cost(n))
              for n in lengths]
        return Row(parser, "qwen3", "write_file", ms, fit(list(lengths), [m.seconds for m in ms], 1.3))

    run = Run(lengths, ("write_file",), "tokens:4", 1, 1.3, "time",
              rows=[row("linear", lambda n: 1e-6 * n + 1e-4), row("quadratic", lambda n: 1e-6 * n + 1e-10 * n * n)],
              floor_rows=[row("null", lambda n: 1e-8 * n + 1e-5)])
    report.plot(run, tmp_path / "scaling.png")
    fig = figures[0]
    assert outside(fig) == []
    ax = fig.axes[0]
    lines = {tuple(round(x) for x in line.get_xdata()): line.get_ydata() for line in ax.get_lines()
             if line.get_marker() == "o" and line.get_linewidth() < 2}  # a passing parser's line is thin
    (linear,) = lines.values()
    assert linear[0] / linear[-1] < 1.03  # a linear cost: flat per character (within the fixed cost)
    assert "cost per character" in ax.get_ylabel()


def test_scale_png_gives_each_passing_parser_a_colour_of_its_own(figures, tmp_path):
    from matplotlib.colors import to_hex

    from callscale.fit import fit
    from callscale.matrix import Row, Run
    from callscale.measure import Measurement

    lengths = (4096, 16384, 65536)

    def row(parser, workload, cost):
        ms = [Measurement(parser=parser, format="qwen3", workload=workload, length=n, chars=n, chunking="tokens:4",
                          deltas=n // 4, meter="instructions", repeats=1, seconds=cost(n)) for n in lengths]
        return Row(parser, "qwen3", workload, ms, fit(list(lengths), [m.seconds for m in ms], 1.3))

    passing = ["a", "b", "c"]
    rows = [row(p, w, lambda n, k=k: (k + 1) * 100.0 * n) for w in ("write_file", "many_short_calls")
            for k, p in enumerate(passing)]
    rows.append(row("slow", "write_file", lambda n: 100.0 * n + 0.01 * n * n))
    run = Run(lengths, ("write_file", "many_short_calls"), "tokens:4", 1, 1.3, "instructions", rows=rows,
              floor_rows=[row("null", w, lambda n: 10.0 * n) for w in ("write_file", "many_short_calls")])
    report.plot(run, tmp_path / "scaling.png")
    for ax in figures[0].axes[:2]:
        thin = [to_hex(line.get_color()) for line in ax.get_lines()
                if line.get_marker() == "o" and line.get_linewidth() < 2]
        assert thin == [c.lower() for c in report.PASSING_COLORS[:3]]  # three passing parsers, three colours
    assert len(set(report.PASSING_COLORS)) == len(report.PASSING_COLORS)


@pytest.mark.skipif(shutil.which("py-spy") is None, reason="py-spy is not installed (pip install -e '.[bench]')")
def test_flame_graph_is_titled_and_its_frames_are_by_function(tmp_path):
    out = tmp_path / "flame.svg"
    status = cli.main(["profile", "--parser", "qwen3", "--workload", "write_file", "--length", "4k",
                       "--seconds", "0.5", "-o", str(out)])
    assert status == 0
    svg = out.read_text()
    title = re.search(r'<text id="title"[^>]*>([^<]*)</text>', svg).group(1)
    assert title == "qwen3 on write_file, 4096 characters (tokens:4): frames by function, py-spy samples"
    # by function: each function appears at one line (its first), however many lines its samples hit;
    # two generator expressions (or lambdas) of one function are two code objects of the same name
    lines = {}
    for name, where, line in re.findall(r"<title>(\S+) \(([^)]*?):(\d+)\) \(", svg):
        if not name.endswith(("&lt;genexpr&gt;", "&lt;lambda&gt;", "comp&gt;")):
            lines.setdefault((name, where), set()).add(line)
    assert lines
    # each line a function's first (its def, or its first decorator's): checked in callscale's own files
    checked = 0
    for (name, where), found in lines.items():
        if not (ROOT / where).is_file():
            continue
        source = (ROOT / where).read_text(encoding="utf-8").splitlines()
        for line in found:
            k = int(line) - 1
            while source[k].lstrip().startswith("@"):
                k += 1
            assert re.match(rf"\s*(async\s+)?def {re.escape(name.rsplit('.', 1)[-1])}\(", source[k]), (name, where, line)
            checked += 1
    assert checked >= 3  # the streaming loop's frames at least (_child.py, base.py, scanner.py)
    if sys.version_info >= (3, 11):  # qualified names (co_qualname): one function a name and file, at one line
        assert all(len(v) == 1 for v in lines.values()), {k: v for k, v in lines.items() if len(v) > 1}
    # (before 3.11 py-spy names a method without its class: two classes' __init__ in one file are two lines)
