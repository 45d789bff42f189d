"""A team's repository over its commits: ``callscale init`` + asv, ``git bisect run callscale gate`` (exit 125).

The throw-away repository (made in ``tmp_path``) has seven commits: the
team's parser (``engine:EngineParser``, DeepSeek V3.1) is linear at c1-c3,
does not import at c4, is fixed at c5, turns quadratic at c6 (it becomes
``tests/helpers/quadratic_parser.py``'s rescanning parser) and stays so at c7.
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from callscale import history
from callscale.cli import main
from support import HELPERS, ROOT

CALLSCALE = [sys.executable, "-m", "callscale"]
needs_valgrind = pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind not installed")
needs_asv = pytest.mark.skipif(shutil.which("asv") is None, reason="asv not installed (pip install callscale[bench])")

LINEAR = '''"""The team's DeepSeek V3.1 parser."""
from callscale.parsers.deepseek import DeepSeekV31Parser


class EngineParser(DeepSeekV31Parser):
    """Streams DeepSeek V3.1 tool calls{note}."""
'''
BROKEN = '''"""The team's DeepSeek V3.1 parser (this commit does not import)."""
from callscale.parsers.deepseek import DeepSeekV31Parserr


class EngineParser(DeepSeekV31Parserr):
    pass
'''
QUADRATIC = '''"""The team's DeepSeek V3.1 parser, rewritten to re-parse its buffer on every increment{note}."""
from quadratic_parser import QuadraticParser as EngineParser
'''
#: (message, engine.py) per commit, c1..c7.
COMMITS = [
    ("c1 the engine's parser", LINEAR.format(note="")),
    ("c2 docstring", LINEAR.format(note=" (linear)")),
    ("c3 docstring again", LINEAR.format(note=" (linear, chunking-invariant)")),
    ("c4 rename half done: does not import", BROKEN),
    ("c5 rename fixed", LINEAR.format(note=" (fixed)")),
    ("c6 rewrite: re-parse the buffer", QUADRATIC.format(note="")),
    ("c7 docstring", QUADRATIC.format(note=" (simpler)")),
]
GATE = ["gate", "--parser", "engine:EngineParser", "--workload-format", "deepseek_v31", "--meter", "instructions",
        "--workload", "write_file", "--no-progress", "--lengths", "1k,2k,4k,8k"]
"""The gate at each commit: lengths 1k-8k (the default 4k-64k costs the quadratic commits minutes under
callgrind). At 512-2k the fixed cost per call makes the projection rule fail even the linear parser (7x),
so the lengths are not shortened further."""


def _git(repo: Path, *args: str) -> str:
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@t")
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True,
                          env=env).stdout.strip()


def make_repository(repo: Path) -> list[str]:
    """The throw-away repository of :data:`COMMITS`; returns the commit hashes, c1 first."""
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    shutil.copyfile(HELPERS / "quadratic_parser.py", repo / "quadratic_parser.py")
    hashes = []
    for i, (message, source) in enumerate(COMMITS):
        (repo / "engine.py").write_text(source)
        _git(repo, "add", "-A")
        # one commit per minute, so asv and history order them by date
        _git(repo, "commit", "-qm", message, f"--date=2026-01-01T00:0{i}:00Z")
        hashes.append(_git(repo, "rev-parse", "HEAD"))
    return hashes


@pytest.fixture(autouse=True)
def fresh_engine_module():
    """Each test imports its own repository's ``engine``."""
    sys.modules.pop("engine", None)
    yield
    sys.modules.pop("engine", None)


def test_gate_exits_125_when_the_parser_does_not_import(tmp_path, monkeypatch, capsys):
    repo = tmp_path / "engine"
    hashes = make_repository(repo)
    _git(repo, "checkout", "-q", hashes[3])
    monkeypatch.chdir(repo)
    with pytest.raises(SystemExit) as info:
        main(GATE + ["--meter", "time"])
    assert info.value.code == 125
    err = capsys.readouterr().err
    assert err.startswith("callscale gate: cannot test: cannot import 'engine' for parser 'engine:EngineParser': "
                          "ImportError: cannot import name 'DeepSeekV31Parserr'") and "git bisect run skips" in err
    with pytest.raises(SystemExit) as info:
        main(["check", "--parser", "engine:EngineParser", "--format", "deepseek_v31"])
    assert info.value.code == 125
    capsys.readouterr()
    with pytest.raises(SystemExit) as info:  # a bad option stays exit 2
        main(["gate", "--parser", "engine:EngineParser", "--format", "no_such_format"])
    assert info.value.code == 2


def test_init_writes_asv_conf_and_benchmarks_and_refuses_to_overwrite(tmp_path, monkeypatch, capsys):
    repo = tmp_path / "engine"
    make_repository(repo)
    monkeypatch.chdir(repo)
    assert main(["init", "--parser", "engine:EngineParser", "--format", "deepseek_v31", "--lengths", "1k,2k,4k"]) == 0
    conf = json.loads((repo / "asv.conf.json").read_text())
    assert conf["branches"] == ["main"] and conf["benchmark_dir"] == "callscale_benchmarks"
    assert conf["results_dir"] == "results/asv" and conf["install_command"] == []
    settings = json.loads((repo / "callscale_benchmarks" / "callscale.json").read_text())
    assert settings["parsers"] == {"engine:EngineParser": "deepseek_v31"} and settings["lengths"] == [1024, 2048, 4096]
    assert (repo / "callscale_benchmarks" / "callscale_series.py").is_file()
    assert settings["checkout"] is None and "import_path" not in settings  # no path of this machine
    assert str(tmp_path) not in (repo / "asv.conf.json").read_text() + json.dumps(settings)
    assert (repo / ".gitignore").read_text().splitlines()[-2:] == [".asv/", "results/"]
    out = capsys.readouterr().out
    assert "commit: git add asv.conf.json callscale_benchmarks/ .gitignore" in out
    with pytest.raises(SystemExit) as info:
        main(["init", "--parser", "engine:EngineParser", "--format", "deepseek_v31"])
    assert info.value.code == 2 and "exists (--force overwrites it)" in capsys.readouterr().err
    with pytest.raises(SystemExit) as info:
        main(["init", "--parser", "engine:NoSuchClass", "--format", "deepseek_v31", "--force"])
    assert info.value.code == 2 and "has no attribute 'NoSuchClass'" in capsys.readouterr().err


@pytest.mark.slow
@needs_valgrind
def test_git_bisect_run_names_the_quadratic_commit_and_skips_the_one_that_does_not_import(tmp_path):
    repo = tmp_path / "engine"
    hashes = make_repository(repo)
    _git(repo, "bisect", "start", hashes[-1], hashes[0])
    proc = subprocess.run(["git", "-C", str(repo), "bisect", "run", *CALLSCALE, *GATE], capture_output=True,
                          text=True, timeout=1800, cwd=repo)
    log = _git(repo, "bisect", "log")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert f"{hashes[5]} is the first bad commit" in proc.stdout
    assert f"# skip: [{hashes[3]}]" in log, log
    assert "cannot test: cannot import 'engine'" in proc.stderr


@pytest.mark.slow
@needs_valgrind
@needs_asv
def test_asv_over_the_teams_commits_flags_the_quadratic_commit(tmp_path):
    repo = tmp_path / "engine"
    hashes = make_repository(repo)
    subprocess.run([*CALLSCALE, "init", "--parser", "engine:EngineParser", "--format", "deepseek_v31",
                    "--workload", "write_file"], cwd=repo, check=True, capture_output=True)

    # callscale is found at run time: asv drops PYTHONPATH and passes ASV_PYTHONPATH on
    env = dict(os.environ, ASV_PYTHONPATH=str(ROOT))

    def asv(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(["asv", *args], cwd=repo, capture_output=True, text=True, timeout=1800, env=env)

    assert asv("machine", "--yes", "--machine", "ci").returncode == 0
    run = asv("run", "--machine", "ci", "--show-stderr", "ALL")
    # exit 2: c4's benchmarks failed (its parser does not import); every other commit measured
    assert run.returncode == 2, run.stdout[-3000:] + run.stderr[-3000:]
    assert "RuntimeError: cannot import or build the parser here: cannot import 'engine'" in run.stdout
    continuous = asv("continuous", "--machine", "ci", hashes[4], hashes[5])
    assert continuous.returncode == 1, continuous.stdout[-3000:]
    assert "callscale_series.CallscaleFit.track_exponent" in continuous.stdout
    find = asv("find", "--machine", "ci", f"{hashes[0]}..{hashes[-1]}", "callscale_series.CallscaleFit.track_exponent")
    assert find.returncode == 0 and f"Greatest regression found: {hashes[5][:8]}" in find.stdout, find.stdout[-3000:]
    out = tmp_path / "history"
    page = subprocess.run([*CALLSCALE, "history", "--out", str(out)], cwd=repo, capture_output=True, text=True)
    assert page.returncode == 0, page.stderr
    results = repo / "results" / "asv"
    assert history.find_series(results) == "callscale_series.CallscaleSeries.track_instructions"
    series = history.exact_series(history.load_results(results, history.find_series(results)))
    changes = history.verdict_changes(history.exponents(series, 1.3))
    assert list(changes["commit"]) == [hashes[5]] and list(changes["after"]) == ["FAIL"]
    assert hashes[3] not in set(series["commit"])  # the commit that does not import: failed, no figures
    assert hashes[5] in (out / "index.html").read_text()


def _template(tmp_path, monkeypatch, config):
    """The benchmark module `callscale init` writes, loaded with ``config`` as its callscale.json."""
    import importlib.util
    import json as _json

    from callscale import init as init_module

    folder = tmp_path / "bench"
    folder.mkdir()
    source = Path(init_module.__file__).parent / "init_templates" / "callscale_series.py"
    (folder / "callscale_series.py").write_text(source.read_text())
    (folder / "callscale.json").write_text(_json.dumps(config))
    spec = importlib.util.spec_from_file_location("callscale_series_under_test", folder / "callscale_series.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_exponent_is_one_benchmark_per_pair_and_reads_the_series_figures(tmp_path, monkeypatch):
    config = {"parsers": {"engine:EngineParser": "deepseek_v31"}, "workloads": ["write_file", "many_short_calls"],
              "lengths": [1024, 2048, 4096]}
    module = _template(tmp_path, monkeypatch, config)
    assert module.CallscaleFit.params == (["engine:EngineParser"], ["write_file", "many_short_calls"])
    assert module.CallscaleSeries.params[2] == [1024, 2048, 4096]  # the counts per length stay per length
    monkeypatch.setenv("ASV_ENV_DIR", str(tmp_path))
    monkeypatch.setenv("ASV_COMMIT", "c" * 40)
    measured = []
    figures = {"errors": {}, "rows": {("engine:EngineParser", "write_file"): {
        "counts": {1024: 10.0, 2048: 20.0, 4096: 40.0}, "exponent": 1.0, "verdict": "ok"}}}
    monkeypatch.setattr(module, "_measure_all", lambda: measured.append(1) or figures)
    first = module.CallscaleSeries().setup_cache()
    second = module.CallscaleFit().setup_cache()  # another process in asv: it reads the file the first wrote
    assert measured == [1] and second == first
    assert module.CallscaleFit().track_exponent(second, "engine:EngineParser", "write_file") == 1.0
    assert module.CallscaleSeries().track_instructions(second, "engine:EngineParser", "write_file", 2048) == 20.0


def test_a_parser_that_does_not_import_fails_its_benchmarks_in_one_line(tmp_path, monkeypatch):
    import traceback

    module = _template(tmp_path, monkeypatch, {"parsers": {"engine:X": "deepseek_v31"}, "workloads": ["write_file"],
                                               "lengths": [1024, 2048, 4096]})
    cache = {"errors": {"engine:X": "cannot import or build the parser here: cannot import 'engine'"}, "rows": {}}
    monkeypatch.setattr(sys, "tracebacklimit", 1000, raising=False)
    try:
        module.CallscaleFit().setup(cache, "engine:X", "write_file")
    except RuntimeError:
        shown = traceback.format_exc()
    assert shown == "RuntimeError: cannot import or build the parser here: cannot import 'engine'\n"
