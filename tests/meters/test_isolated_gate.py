"""A gate that nothing can fool or hang: plug-ins that hang, exit, patch the clock or I/O, change directory,
fill the disk or read another format, each tried in a ``callscale`` child process.

Each case is tried as an adversarial tester would, with a small plug-in
of ``tests/helpers/`` (:mod:`rogue_parsers`, :mod:`rogue_exit_at_import`,
:mod:`rogue_patches_io`, :mod:`hanging_parser`, ...) measured next to the
built-in ``deepseek_v31`` (or ``qwen3``), in a ``callscale`` child process: the
row asserts the plug-in's reason in words and that the built-in parser beside
it was measured as if the plug-in were not there. Rows that involve a meter
run under both meters (``time`` and ``instructions``; the latter needs
valgrind and is marked slow); there the callgrind child (callscale/_child.py)
bounds, isolates and kills each parser's fork.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from callscale import bounded, config, fit, verify
from support import HELPERS, ROOT

CHILD_ENV = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), str(HELPERS)]))
HAVE_VALGRIND = shutil.which("valgrind") is not None

# the default gate's span: from 16k, the projection to 256k magnified 8% of noise into 3x (a flaky case)
TIME = ["--meter", "time", "--lengths", "4k,16k,64k", "--repeats", "3"]
INSTRUCTIONS = ["--meter", "instructions", "--lengths", "512,1k,2k"]
INSTRUCTION_METER = pytest.param(
    INSTRUCTIONS, id="instructions",
    marks=[pytest.mark.slow, pytest.mark.skipif(not HAVE_VALGRIND, reason="valgrind is not installed")])
BOTH = [pytest.param(TIME, id="time"), INSTRUCTION_METER]

INSTRUCTION_METER_ROWS = pytest.param(
    INSTRUCTIONS, id="instructions",
    marks=[pytest.mark.slow, pytest.mark.skipif(not HAVE_VALGRIND, reason="valgrind is not installed")])
BOTH_METERS = [pytest.param(TIME, id="time"), INSTRUCTION_METER_ROWS]


def callscale(*argv: str, cwd: Path | str = HELPERS, timeout: float = 240, env: dict | None = None
              ) -> subprocess.CompletedProcess:
    """Run ``python -m callscale ARGV`` in its own session; on overrunning ``timeout`` its whole process
    group is killed (no orphaned callgrind child) and ``subprocess.TimeoutExpired`` raised."""
    proc = subprocess.Popen([sys.executable, "-m", "callscale", *argv], cwd=cwd, env=env or CHILD_ENV,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def gate(parsers: str, fmt: str | None, meter: list[str], *extra: str, workload: str = "write_file",
         timeout: float = 240, env: dict | None = None) -> subprocess.CompletedProcess:
    argv = ["gate", "--parser", parsers, *(["--workload-format", fmt] if fmt else []), "--workload", workload,
            "--no-progress", "--wide", *meter, *extra]  # --wide: the figure at each length
    return callscale(*argv, timeout=timeout, env=env)


def row(out: str, parser: str) -> list[str]:
    """The table row of ``parser`` (its cells split on blanks; the verdict is the last)."""
    for line in out.splitlines():
        if line.startswith(parser + " "):
            return line.split()
    raise AssertionError(f"no row for {parser} in:\n{out}")


def assert_unaffected(out: str, parser: str = "deepseek_v31") -> None:
    """The built-in parser beside the plug-in was measured as if it were not there: figures at every
    length, and the verdict a linear parser gets (under the time meter, where a noisy neighbour on
    this shared VM can read one step as steep, a cost verdict at worst: never an error, a timeout or
    wrong output)."""
    cells = row(out, parser)
    figures = cells[2:5]
    assert all(float(f.replace(",", "")) > 0 for f in figures), cells
    assert cells[-1] == "ok" or (_by_time(out) and cells[-2:] in (["step", "FAIL"], ["projection", "FAIL"],
                                                                  ["step+projection", "FAIL"])), out
    floor = next(line for line in out.splitlines() if line.startswith("null (median floor)")).split()
    assert all(float(f.replace(",", "")) > 0 for f in floor[4:7]) and floor[-1] == "floor", floor


def _by_time(out: str) -> bool:
    return "figures: process seconds" in out


# ----------------------------------------------------------------------------------- a hang
@pytest.mark.parametrize("meter", BOTH_METERS)
def test_a_hanging_plugin_is_its_own_timeout_row_within_the_budget(meter, tmp_path):
    started = time.monotonic()
    proc = gate("hanging_parser:Hangs,deepseek_v31", "deepseek_v31", meter, "--timeout", "5", timeout=60,
                env=private_tmp(tmp_path))
    elapsed = time.monotonic() - started
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert row(proc.stdout, "hanging_parser:Hangs")[-1] == "timeout"
    assert "FAIL hanging_parser:Hangs on write_file (timeout): no exponent (timeout after 5 s)" in proc.stdout
    assert_unaffected(proc.stdout)
    assert elapsed < 45, elapsed  # one 5 s budget, not the callgrind child's 3600 s
    assert leftovers(tmp_path) == [], "the run left its temporary folders"


def _children(pid: int) -> set[int]:
    """Every descendant of ``pid`` (from /proc's children lists)."""
    found: set[int] = set()
    todo = [pid]
    while todo:
        here = todo.pop()
        for task in Path(f"/proc/{here}/task").glob("*"):
            try:
                kids = {int(k) for k in (task / "children").read_text().split()}
            except OSError:
                continue
            todo += list(kids - found)
            found |= kids
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def private_tmp(tmp_path: Path) -> dict[str, str]:
    """``CHILD_ENV`` with a ``TMPDIR`` of the test's own (``tmp_path/tmp``), and the instruction meter's
    child folder there too (``CALLSCALE_CHILD_TMPDIR``; by default it is made in /tmp), so the folders a
    run leaves there are its own, whatever else runs on the machine."""
    (tmp_path / "tmp").mkdir(exist_ok=True)
    return dict(CHILD_ENV, TMPDIR=str(tmp_path / "tmp"), CALLSCALE_CHILD_TMPDIR=str(tmp_path / "tmp"))


def leftovers(tmp_path: Path) -> list[str]:
    """The ``callscale-*`` folders and files a run left in its private ``TMPDIR`` (:func:`private_tmp`)."""
    return sorted(p.name for p in (tmp_path / "tmp").glob("callscale-*"))


def _start_hanging_scale(meter: list[str], out: Path, env: dict | None = None) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "callscale", "scale", "--parser", "deepseek_v31,hanging_parser:Hangs",
         "--workload-format", "deepseek_v31", "--workload", "write_file", "--timeout", "600", "--progress",
         "--out", str(out), *meter],
        cwd=HELPERS, env=env or CHILD_ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        stdin=subprocess.DEVNULL, start_new_session=True)


def _wait_for_the_hang(proc: subprocess.Popen, meter: list[str], tmp: Path | None = None) -> set[int]:
    """Wait until the hanging plug-in's case runs (a worker or callgrind fork spinning); its descendants.

    Under the instruction meter the callgrind child itself spends seconds of CPU starting, so there
    the hang runs once null's and deepseek_v31's counts are written (``tmp``: the run's ``TMPDIR``;
    4 dumps each, the calibration and 3 lengths, then the hanging fork's calibration) and a fork of
    the child has spun for a second."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        kids = _children(proc.pid)
        if "instructions" in meter:
            counted = len(list(tmp.glob("callscale-callgrind-*/cg.*.out.*"))) >= 9 if tmp is not None else False
            spinning = counted and [k for k in kids - _children_only(proc.pid) if _cpu_ticks(k) > 100]
        else:
            spinning = [k for k in kids if _cpu_ticks(k) > 100]  # over a second of CPU: the hang
        if spinning:
            return _children(proc.pid)
        time.sleep(0.5)
    raise AssertionError("the hanging case never started")


def _children_only(pid: int) -> set[int]:
    """The direct children of ``pid``."""
    found: set[int] = set()
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found |= {int(k) for k in (task / "children").read_text().split()}
        except OSError:
            continue
    return found


def _cpu_ticks(pid: int) -> int:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0
    return int(fields[11]) + int(fields[12])


# ------------------------------------------------------------------- SIGTERM / SIGKILL of the parent
@pytest.mark.parametrize("meter", BOTH_METERS)
def test_sigterm_stops_the_run_kills_every_child_and_keeps_the_partial_results(meter, tmp_path):
    proc = _start_hanging_scale(meter, tmp_path, private_tmp(tmp_path))
    kids: set[int] = set()
    try:
        kids = _wait_for_the_hang(proc, meter, tmp_path / "tmp")
        sent = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=20)
        stopped = time.monotonic() - sent
        err = proc.stderr.read()
        time.sleep(1)
        outlived = [k for k in kids if _alive(k)]
    finally:
        _kill_all(proc, kids)
    assert proc.returncode == 143, err
    assert "terminated (SIGTERM) while measuring hanging_parser:Hangs" in err
    assert stopped < 5, stopped  # "within a second", with room for a loaded machine
    assert not outlived, "a child outlived the run"
    partial = pd.read_csv(tmp_path / "scaling.partial.csv", keep_default_na=False, na_values=[""])
    assert {"null", "deepseek_v31"} <= set(partial["parser"])
    kept = partial[partial["parser"] == "deepseek_v31"]
    assert sorted(kept["length"]) == [512, 1024, 2048] if "instructions" in meter else len(kept) >= 1
    assert (kept["seconds"] > 0).all() and (kept["chars"] >= kept["length"] * 0.9).all(), kept
    assert leftovers(tmp_path) == [], "the run left its temporary folders"


@pytest.mark.parametrize("meter", BOTH_METERS)
def test_sigkill_of_the_parent_leaves_no_worker_spinning(meter, tmp_path):
    proc = _start_hanging_scale(meter, tmp_path, private_tmp(tmp_path))
    kids: set[int] = set()
    try:
        kids = _wait_for_the_hang(proc, meter, tmp_path / "tmp")
        proc.kill()  # SIGKILL: no handler runs
        proc.wait(timeout=20)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and [k for k in kids if _alive(k)]:
            time.sleep(0.2)
        orphans = [k for k in kids if _alive(k)]
        deadline = time.monotonic() + 10  # the instruction meter's reaper removes the child's folder
        while time.monotonic() < deadline and leftovers(tmp_path):
            time.sleep(0.2)
    finally:
        _kill_all(proc, kids)
    assert not orphans, f"orphaned children still running: {orphans}"
    assert leftovers(tmp_path) == [], "the run left its temporary folders"


def _kill_all(proc: subprocess.Popen, kids: set[int]) -> None:
    """Leave nothing of a test's run behind, whatever the run did (its group, and each child it had)."""
    if proc.poll() is None:
        proc.kill()
        proc.wait()
    for pid in [proc.pid, *kids]:
        try:
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


# ----------------------------------------------------------------------------- a hang in __init__
@pytest.mark.parametrize("meter", BOTH)
def test_a_factory_that_hangs_when_built_times_out_in_its_own_child(meter):
    proc = gate("rogue_parsers:HangsInInit,deepseek_v31", "deepseek_v31", meter, "--timeout", "5", timeout=120)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert row(proc.stdout, "rogue_parsers:HangsInInit")[-1] == "timeout"
    assert "timeout after 5 s (loading rogue_parsers:HangsInInit)" in proc.stdout
    assert_unaffected(proc.stdout)


# ------------------------------------------------------------------------------ a patched clock
@pytest.mark.parametrize("meter", BOTH)
def test_a_plugin_that_patches_the_clock_changes_no_other_figure(meter):
    proc = gate("rogue_parsers:PatchesTheClock,deepseek_v31", "deepseek_v31", meter)
    assert "ERROR" not in proc.stdout, proc.stdout
    # its own figures too: the meter's clock is the one time had when callscale was imported
    assert all(float(f.replace(",", "")) > 0 for f in row(proc.stdout, "rogue_parsers:PatchesTheClock")[2:5]), proc.stdout
    assert_unaffected(proc.stdout)


# ---------------------------------------------------------------------------------- os._exit
@pytest.mark.parametrize("meter", BOTH_METERS)
def test_os_exit_fails_only_its_own_row(meter):
    proc = gate("rogue_parsers:ExitsHard,deepseek_v31", "deepseek_v31", meter, timeout=120)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert row(proc.stdout, "rogue_parsers:ExitsHard")[-1] == "ERROR"
    assert "rogue_parsers:ExitsHard on write_file (error): no exponent (exit 3)" in proc.stdout
    assert_unaffected(proc.stdout)


# ----------------------------------------------------------------------------- changing directory
@pytest.mark.parametrize("meter", BOTH)
def test_a_plugin_that_changes_directory_does_not_move_the_results(meter, tmp_path):
    out = f"res-{os.getpid()}-{meter[1]}"  # relative: the plug-in's chdir("/") would send it to /res-...
    proc = callscale("scale", "--parser", "rogue_parsers:ChangesDirectory,deepseek_v31", "--workload-format",
                     "deepseek_v31", "--workload", "write_file", "--no-progress", "--wide", "--out", out, *meter,
                     cwd=tmp_path, env=CHILD_ENV)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    written = pd.read_csv(tmp_path / out / "scaling.csv", keep_default_na=False, na_values=[""])
    assert {"rogue_parsers:ChangesDirectory", "deepseek_v31", "null"} == set(written["parser"])
    assert not Path("/", out).exists()
    assert_unaffected(proc.stdout)


# ---------------------------------------------------------------------- sys.exit, patched print/open
@pytest.mark.parametrize("meter", BOTH)
def test_sys_exit_at_import_is_its_rows_reason(meter):
    proc = gate("rogue_exit_at_import:Parser,deepseek_v31", "deepseek_v31", meter)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert row(proc.stdout, "rogue_exit_at_import:Parser")[-1] == "ERROR"
    assert "no exponent (SystemExit: 5 (loading rogue_exit_at_import:Parser))" in proc.stdout
    assert_unaffected(proc.stdout)


@pytest.mark.parametrize("meter", BOTH)
def test_a_plugin_that_replaces_print_and_open_leaves_the_output_and_files(meter, tmp_path):
    proc = callscale("scale", "--parser", "rogue_patches_io:Parser,deepseek_v31", "--workload-format",
                     "deepseek_v31", "--workload", "write_file", "--no-progress", "--wide", "--out", str(tmp_path), *meter)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert row(proc.stdout, "rogue_patches_io:Parser")[-1] == "ok"
    assert_unaffected(proc.stdout)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["environment.json", "scaling-fits.csv", "scaling.csv", "scaling.png"]


# ------------------------------------------------------------------ every setting validated
def _project(tmp_path: Path, table: str | bytes) -> Path:
    path = tmp_path / "pyproject.toml"
    if isinstance(table, bytes):
        path.write_bytes(table)
    else:
        path.write_text("[project]\nname = 'x'\n[tool.callscale]\n" + table, encoding="utf-8")
    return path


BAD_CONFIG = [
    ("threshold = nan", "pyproject.toml: threshold must be a finite number"),
    ("threshold = inf", "pyproject.toml: threshold must be a finite number"),
    ("projection_factor = inf", "pyproject.toml: projection_factor must be a finite number"),
    ("timeout = nan", "pyproject.toml: timeout must be a finite number"),
    ("repeats = 0", "pyproject.toml: repeats must be at least 1"),
    ('memory_limit = "lots"', "pyproject.toml: memory_limit must be a size"),
    ('lengths = ["1", "2", "3"]', "pyproject.toml: lengths: 1 is shorter than the minimum 1k characters"),
    ('lengths = ["16k", "4k", "64k"]', "each length must be larger than the one before"),
    ('instruction_lengths = ["256", "1k", "2k"]', "256 is shorter than the minimum 512 characters"),
    ('lengths = ["4k", "16k", "8m"]', "8m is longer than the maximum 4m characters"),
    ("projection_factor = 5", "projection factor 5 must be below reference length / longest length = 4"),
]


@pytest.mark.parametrize("table, says", BAD_CONFIG)
@pytest.mark.parametrize("meter", ["time", "instructions"])
def test_a_bad_config_value_is_one_line_and_exit_2_before_measuring(tmp_path, table, says, meter):
    _project(tmp_path, table)
    proc = callscale("gate", "--parser", "quadratic_parser:QuadraticParser", "--workload-format", "deepseek_v31",
                     "--meter", meter, "--no-progress", cwd=tmp_path, timeout=60)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stdout == "" and len(proc.stderr.splitlines()) == 1, proc.stderr
    assert says in proc.stderr, proc.stderr


BAD_OPTIONS = [
    (["--threshold", "inf"], "argument --threshold: must be a finite number"),
    (["--threshold", "nan"], "argument --threshold: must be a finite number"),
    (["--projection-factor", "inf"], "argument --projection-factor: must be a finite number"),
    (["--request-factor", "0"], "argument --request-factor: must be more than 1 and at most 1e+09 (the largest cost "
                                "of one request as a multiple of the floor's), got '0'"),
    (["--request-factor", "-1"], "argument --request-factor: must be more than 1 and at most 1e+09"),
    (["--request-factor", "inf"], "argument --request-factor: must be a finite number"),
    (["--request-factor", "nan"], "argument --request-factor: must be a finite number"),
    (["--request-factor", "abc"], "argument --request-factor: must be a number"),
    (["--timeout", "nan"], "argument --timeout: must be a finite number"),
    (["--format", "jsn"], "argument --format: 'jsn' is no output style (table, wide, json, csv, markdown) and no "
                          "workload format"),
    (["--memory-limit", "1k"], "argument --memory-limit: must be 64m to 1t bytes"),
    (["--lengths", "1,2,3"], "--lengths: 1 is shorter than the minimum"),
    (["--lengths", "4k,16k,8m"], "--lengths: 8m is longer than the maximum 4m characters"),
    (["--lengths", "16k,4k,64k"], "--lengths: each length must be larger than the one before"),
    (["--reference-length", "2k"], "reference length 2k must be longer than the longest length"),
]


@pytest.mark.parametrize("argv, says", BAD_OPTIONS)
@pytest.mark.parametrize("meter", ["time", "instructions"])
def test_a_bad_option_is_one_line_and_exit_2_before_measuring(argv, says, meter):
    proc = callscale("gate", "--parser", "quadratic_parser:QuadraticParser", "--workload-format", "deepseek_v31",
                     "--meter", meter, "--no-progress", *argv, timeout=60)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stdout == "" and len(proc.stderr.splitlines()) == 1, proc.stderr
    assert says in proc.stderr, proc.stderr


def test_a_pyproject_that_is_not_utf8_or_not_toml_names_the_file_and_why(tmp_path):
    path = _project(tmp_path, b"[tool.callscale]\nthreshold = 1.3 # caf\xe9\n")
    proc = callscale("gate", "--parser", "deepseek_v31", "--no-progress", cwd=tmp_path, timeout=60)
    assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1, proc.stderr
    assert f"cannot read {path}: not UTF-8 (byte 0xe9 at offset 38)" in proc.stderr
    path.write_text("[tool.callscale\n", encoding="utf-8")
    proc = callscale("gate", "--parser", "deepseek_v31", "--no-progress", cwd=tmp_path, timeout=60)
    assert proc.returncode == 2 and f"cannot read {path}: not valid TOML" in proc.stderr, proc.stderr


def test_the_validation_is_one_function_for_config_and_cli():
    assert config.check("threshold", "1.4", "--threshold") == 1.4
    assert config.check("memory_limit", "2g") == 2 * 1024 ** 3
    assert config.check("reference_length", "1m") == 1 << 20
    assert config.check_lengths("512,1k,2k,4k", "instructions") == (512, 1024, 2048, 4096)
    for key, value in [("threshold", float("nan")), ("projection_factor", float("inf")), ("timeout", "nan"),
                       ("threshold", 0.5), ("repeats", 1.5), ("repeats", True)]:
        with pytest.raises(config.ConfigError, match=f"^--{key} must"):
            config.check(key, value, f"--{key}")
    with pytest.raises(config.ConfigError, match="^--lengths: 1 is shorter than the minimum 1k characters"):
        config.check_lengths("1,2,3")
    with pytest.raises(config.ConfigError, match="256 is shorter than the minimum 512 characters"):
        config.check_lengths("256,1k,2k", "instructions")


def test_the_projects_own_quadratic_parser_cannot_pass_by_a_setting():
    # every threshold and factor the validation accepts still fails a purely quadratic cost
    lengths = [4096, 16384, 65536]
    quadratic = [n * n * 1e-9 for n in lengths]
    for threshold in (1.0, 1.3, 1.99):
        for factor in (1.01, 3.0, 3.99):
            config.check_rules(tuple(lengths), 256 * 1024, factor)
            assert fit.fit(lengths, quadratic, threshold, projection_factor=factor).verdict == fit.FAIL
    with pytest.raises(config.ConfigError, match="no quadratic cost could fail it"):
        config.check_rules(tuple(lengths), 256 * 1024, 4.0)


# ------------------------------------------------------------------------------ a full disk
def _tmpfs(path: Path, size: str) -> bool:
    path.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0 or shutil.which("mount") is None:
        return False
    return subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
                          capture_output=True).returncode == 0


def test_a_full_out_stops_the_run_before_measuring(tmp_path):
    disk = tmp_path / "disk"
    if not _tmpfs(disk, "300k"):
        pytest.skip("cannot mount a small tmpfs here (needs root)")
    try:
        proc = callscale("scale", "--parser", "deepseek_v31", "--workload", "write_file", "--no-progress",
                         "--out", str(disk / "res"), *TIME, timeout=60)
    finally:
        subprocess.run(["umount", str(disk)], capture_output=True)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stdout == "" and len(proc.stderr.splitlines()) == 1
    assert f"--out: not enough free space in {disk / 'res'}: the results need " in proc.stderr


def test_the_reserved_space_survives_a_disk_that_fills_during_the_run(tmp_path):
    from callscale import matrix, report
    from callscale.plugins import resolve

    disk = tmp_path / "disk"
    if not _tmpfs(disk, "6m"):
        pytest.skip("cannot mount a small tmpfs here (needs root)")
    try:
        held = report.reserve(disk, report.space_needed(12, 1))
        journal = report.Journal(disk)
        run = matrix.run([resolve("deepseek_v31")], ["write_file"], [4096, 8192, 16384], repeats=1,
                         progress=False, on_measurement=journal.append)
        with open(disk / "filler", "wb") as filler:  # another job fills the disk meanwhile
            with pytest.raises(OSError):
                while True:
                    filler.write(b"\0" * 65536)
                    filler.flush()
        held.release()
        written = report.write_outputs(run, disk)
        journal.remove()
    finally:
        subprocess.run(["umount", str(disk)], capture_output=True)
    assert [p.name for p in written] == list(report.OUTPUTS)
    assert journal.count == len(run.measurements) == 6


def test_a_failed_write_keeps_every_measurement_in_the_journal(tmp_path, monkeypatch, capsys):
    from callscale import report
    from callscale.cli import main

    def full(run, folder):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(report, "write_outputs", full)
    status = main(["scale", "--parser", "deepseek_v31", "--workload", "write_file", "--no-progress",
                   "--out", str(tmp_path), *TIME])
    err = capsys.readouterr().err
    assert status == 1
    journals = list(tmp_path.glob("scaling.journal.*.csv"))
    assert len(journals) == 1
    assert f"cannot write the results: [Errno 28] No space left on device; the 6 measurements are in " in err
    kept = pd.read_csv(journals[0], keep_default_na=False, na_values=[""])
    assert len(kept) == 6 and set(kept["parser"]) == {"null", "deepseek_v31"} and (kept["seconds"] > 0).all()


# ------------------------------------------------------------------------ corrupt history files
def _asv_file(folder: Path, name: str, values, date=1700000000000) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    data = {"commit_hash": name * 40, "env_name": "e", "date": date, "result_columns": ["result", "params"],
            "results": {"benchmarks.InstructionCount.track_instructions":
                        [values, [["'deepseek_v31'"], ["'write_file'"], ["1024", "2048", "4096", "8192"]]]}}
    path = folder / f"{name * 8}-e.json"
    path.write_text(json.dumps(data))
    return path


def test_history_names_every_unreadable_result_file_and_exits_1_unless_skip_bad(tmp_path):
    machine = tmp_path / "asv" / "m"
    good = [_asv_file(machine, c, [1000, 2000, 4000, 8000], 1700000000000 + i) for i, c in enumerate("abc")]
    text = _asv_file(machine, "d", [1000, "2000", 4000, 8000])
    date = _asv_file(machine, "e", [1000, 2000, 4000, 8000], date="yesterday")
    (machine / "ffffffff-e.json").write_text("{not json")
    proc = callscale("history", "--results", str(tmp_path / "asv"), "--out", str(tmp_path / "h"), timeout=120)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.splitlines()
    assert f"callscale history: cannot read {text}: figure '2000' for " in proc.stderr
    assert f"callscale history: cannot read {date}: bad date 'yesterday'" in proc.stderr
    assert f"callscale history: cannot read {machine / 'ffffffff-e.json'}: not JSON" in proc.stderr
    assert lines[-1] == "callscale history: 3 unreadable result files; --skip-bad passes over them"
    proc = callscale("history", "--results", str(tmp_path / "asv"), "--out", str(tmp_path / "h"), "--skip-bad",
                     timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.startswith("3 commits") and proc.stderr.count("callscale history: skipped ") == 3
    assert all(p.exists() for p in good)


# ------------------------------------------------------------------------------ signals in words
@pytest.mark.parametrize("meter", BOTH_METERS)
@pytest.mark.parametrize("rogue, words", [("Segfaults", "killed by SIGSEGV"), ("KillsItself", "killed by SIGKILL")])
def test_a_worker_killed_by_a_signal_says_which(meter, rogue, words):
    proc = gate(f"rogue_parsers:{rogue},deepseek_v31", "deepseek_v31", meter, timeout=120)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert f"rogue_parsers:{rogue} on write_file (error): no exponent ({words})" in proc.stdout
    assert "exit code None" not in proc.stdout
    assert_unaffected(proc.stdout)


def test_memory_past_the_limit_is_out_of_memory():
    proc = gate("rogue_parsers:EatsMemory,deepseek_v31", "deepseek_v31", TIME, "--memory-limit", "700m",
                "--timeout", "60", timeout=120)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "rogue_parsers:EatsMemory on write_file (error): no exponent (out of memory)" in proc.stdout
    assert_unaffected(proc.stdout)


def test_exit_statuses_in_words():
    assert [bounded.exit_words(s) for s in (3, 0, -11, -9, -15, None)] == [
        "exit 3", "exit 0", "killed by SIGSEGV", "killed by SIGKILL", "killed by SIGTERM", "ended without a status"]
    assert bounded.timeout_words(5) == "timeout after 5 s" and bounded.timeout_words(2.5) == "timeout after 2.5 s"


# --------------------------------------------------------------------- a parser that parses nothing
@pytest.mark.parametrize("meter", BOTH)
def test_a_parser_of_another_format_reads_wrong_output_and_fails(meter):
    proc = gate("rogue_parsers:DeepSeekOnAnything,qwen3", "qwen3", meter)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    cells = row(proc.stdout, "rogue_parsers:DeepSeekOnAnything")
    assert cells[-2:] == ["wrong", "output"], cells
    line = next(x for x in proc.stdout.splitlines() if x.startswith("FAIL rogue_parsers:DeepSeekOnAnything"))
    assert line.startswith("FAIL rogue_parsers:DeepSeekOnAnything on write_file (wrong output): at ")
    assert "(1 calls expected, 0 streamed)" in line
    assert_unaffected(proc.stdout, "qwen3")


@pytest.mark.parametrize("meter", BOTH)
def test_cost_only_judges_the_cost_and_still_says_wrong_output(meter):
    proc = gate("rogue_parsers:RecognisesNothing,deepseek_v31", "deepseek_v31", meter, "--cost-only")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert row(proc.stdout, "rogue_parsers:RecognisesNothing")[-2:] == ["wrong", "output"]
    assert ("--cost-only: 1 pair(s) with wrong output judged by their cost alone "
            "(rogue_parsers:RecognisesNothing on write_file)") in proc.stdout
    assert_unaffected(proc.stdout)


def test_verify_compares_content_calls_and_count():
    from callscale import parsers
    from callscale.workloads import catalog

    case = catalog.make("write_file", "qwen3", 1024)
    assert verify.verify_stream(parsers.get("qwen3"), case) is None
    wrong = verify.verify_stream(parsers.get("deepseek_v31"), case)
    assert wrong.startswith("markup in content: ") and "(1 calls expected, 0 streamed)" in wrong
    assert len(wrong) <= 320 and "\n" not in wrong
    got = {"content": case.content, "calls": [[c.name, json.dumps(dict(c.arguments))] for c in case.calls],
           "count": len(case.calls)}
    assert verify.first_difference(got, case) is None
    got["calls"][0][1] = "{}"
    assert verify.first_difference(got, case).startswith("lost arguments: call 0 'write_file': arguments['path'] missing")


# ------------------------------------------------------------------- --workload-format pairs
@pytest.mark.parametrize("meter", BOTH)
def test_each_workload_format_pairs_with_the_parser_it_follows(meter, tmp_path):
    proc = callscale("scale", "--parser", "rogue_parsers:DeepSeekOnAnything", "--workload-format", "deepseek_v31",
                     "--parser", "callscale.parsers.qwen:Qwen3Parser", "--workload-format", "qwen3",
                     "--workload", "write_file", "--no-progress", "--out", str(tmp_path), *meter)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    fits = pd.read_csv(tmp_path / "scaling-fits.csv", keep_default_na=False, na_values=[""])
    formats = {p: f for p, f in zip(fits["parser"], fits["format"]) if p != "null"}
    assert formats == {"rogue_parsers:DeepSeekOnAnything": "deepseek_v31", "callscale.parsers.qwen:Qwen3Parser": "qwen3"}
    verdicts = set(fits[fits["parser"] != "null"]["verdict"])
    # paired wrongly, a parser reads the other format's text: "wrong output"; under the time meter a noisy
    # neighbour on this shared VM may read one step as steep (a cost FAIL), never wrong output
    assert verdicts == {"ok"} or (meter == TIME and verdicts <= {"ok", "FAIL"}), fits.to_dict("records")


def test_an_ambiguous_workload_format_is_an_error():
    proc = callscale("gate", "--workload-format", "qwen3", "--workload-format", "deepseek_v31", "--parser",
                     "rogue_parsers:DeepSeekOnAnything", "--no-progress", timeout=60)
    assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1, proc.stderr
    assert "--workload-format qwen3 follows no --parser" in proc.stderr


# ------------------------------------------------------------- a fixed cost is not a quadratic term
def test_minimax_m2s_fixed_offset_passes_the_fit():
    # `gate --meter instructions --workload write_file --lengths 512,1k,2k,4k` on minimax_m2: text lengths
    # (characters) and its exact counts; per-2x growth 1.77, 1.88, 1.93 was read as curvature (3.1x)
    chars = [702, 1214, 2238, 4286]
    counts = [6440590, 11397102, 21375326, 41370727]
    result = fit.fit(chars, counts, threshold=1.3)
    assert result.verdict == fit.OK and result.projection_ratio < 1.5, result
    assert result.c < 0  # the workload's framing costs less per character than the call's body
    # the same series with a quadratic term 10% of the linear one at 4k still fails
    worse = [y + 0.1 * 9700 * n * n / 4286 for y, n in zip(counts, chars)]
    assert fit.fit(chars, worse, threshold=1.3).verdict == fit.FAIL


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_VALGRIND, reason="valgrind is not installed")
def test_minimax_m2_passes_the_instruction_gate_at_512_to_4k():
    proc = callscale("gate", "--meter", "instructions", "--workload", "write_file", "--lengths", "512,1k,2k,4k",
                     "--parser", "minimax_m2", "--no-progress", timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert row(proc.stdout, "minimax_m2")[-1] == "ok"
