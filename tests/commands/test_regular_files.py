"""callscale writes only regular files: ``--export``, ``--summary``, the results in ``--out``, history's page and
a flame graph's ``-o`` refuse a device node, a directory, a named pipe or a symbolic link where the file would go
(one line, exit status 2, before measuring), and nothing there is replaced.

The device nodes are made in the test's own folder (``mknod``, a copy of ``/dev/full``'s numbers 1, 7) so a
fault can never touch the machine's ``/dev``.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from callscale import exports
from support import run_main, HELPERS

RUN = HELPERS / "data" / "gate-one-failing.csv"


def make(kind: str, path: Path) -> Path:
    """A ``kind`` (device, directory, pipe, link) at ``path``."""
    if kind == "device":
        try:
            os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 7))
        except PermissionError:
            pytest.skip("mknod needs privileges here")
    elif kind == "directory":
        path.mkdir()
    elif kind == "pipe":
        os.mkfifo(path)
    else:
        (path.parent / "elsewhere.json").write_text("{}")
        path.symlink_to(path.parent / "elsewhere.json")
    return path


KINDS = [("device", "a character device"), ("directory", "a directory"), ("pipe", "a named pipe"),
         ("link", "a symbolic link")]


def unchanged(kind: str, path: Path) -> bool:
    mode = os.lstat(path).st_mode
    return {"device": stat.S_ISCHR, "directory": stat.S_ISDIR, "pipe": stat.S_ISFIFO, "link": stat.S_ISLNK}[kind](mode)


@pytest.fixture(autouse=True)
def _no_step_summary(monkeypatch):
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)


@pytest.mark.parametrize("kind, words", KINDS, ids=[k for k, _ in KINDS])
def test_export_refuses_what_is_no_regular_file(capsys, tmp_path, kind, words):
    # before: --export bmf:/dev/full replaced the device node with a regular file (write, then rename onto it)
    target = make(kind, tmp_path / "bmf.json")
    status, out, err = run_main(capsys, "gate", "--from", str(RUN), "--export", f"bmf:{target}")
    assert status == 2 and out == "" and len(err.splitlines()) == 1, (status, out, err)
    assert f"--export bmf:{target}: {target} is {words}; callscale writes only regular files" in err
    assert unchanged(kind, target)


@pytest.mark.parametrize("kind, words", [k for k in KINDS if k[0] != "pipe"], ids=["device", "directory", "link"])
def test_summary_refuses_what_is_no_regular_file(capsys, tmp_path, kind, words):
    # before: a directory was "cannot write the summary" after the verdict, a device was written into
    target = make(kind, tmp_path / "s.md")
    status, out, err = run_main(capsys, "gate", "--from", str(RUN), "--summary", str(target))
    assert status == 2 and out == "" and len(err.splitlines()) == 1, (status, out, err)
    assert f"--summary: {target} is {words}" in err
    assert unchanged(kind, target)
    status, out, err = run_main(capsys, "compare", str(RUN), str(RUN), "--summary", str(target))
    assert status == 2 and out == "" and f"--summary: {target} is {words}" in err


def test_out_refuses_a_results_file_that_is_a_pipe_before_measuring(capsys, monkeypatch, tmp_path):
    from callscale import matrix

    monkeypatch.setattr(matrix, "run", lambda *a, **k: pytest.fail("measured before checking --out"))
    (tmp_path / "res").mkdir()
    target = make("pipe", tmp_path / "res" / "scaling.csv")
    status, out, err = run_main(capsys, "gate", "--parser", "deepseek_v31", "--workload", "write_file",
                                "--lengths", "1k,2k,4k", "--no-progress", "--out", str(tmp_path / "res"))
    assert status == 2 and len(err.splitlines()) == 1, (status, out, err)
    assert f"{target} is a named pipe" in err and unchanged("pipe", target)


def test_history_refuses_a_page_that_is_a_directory(capsys, tmp_path):
    from test_figures_fail_closed import asv_results

    root = asv_results(tmp_path, [[1000, 2000, 4000]])
    (tmp_path / "page").mkdir()
    make("directory", tmp_path / "page" / "index.html")
    status, out, err = run_main(capsys, "history", "--results", str(root), "--out", str(tmp_path / "page"))
    assert status == 2 and len(err.splitlines()) == 1, (status, out, err)
    assert "index.html is a directory" in err and (tmp_path / "page" / "index.html").is_dir()


def test_a_regular_file_or_no_file_is_written():
    assert exports.regular_file(RUN) == RUN
    assert exports.regular_file(RUN.parent / "no such file.json") == RUN.parent / "no such file.json"
