"""An engine's own repository as it is: parsers loaded from its checkout without the engine (callscale.checkout).

The repositories (tests/helpers/engine_checkouts.py) have each engine's layout: package roots importing torch and a
compiled module that does not exist here, registries importing every parser, logger and protocol modules that
pull the engine in; eight commits: linear, a commit whose parser does not import, a class rename, quadratic, a fix.
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import engine_checkouts as ec
from callscale import checkout
from callscale.cli import main
from support import ROOT

CALLSCALE = [sys.executable, "-m", "callscale"]
needs_valgrind = pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind not installed")
needs_asv = pytest.mark.skipif(shutil.which("asv") is None, reason="asv not installed (pip install callscale[bench])")
TRT = ec.spec("trtllm")
# 512-2k: the rescanning commits' exponent is 2.0 there already (1k: 73M instructions, 2k: 258M; the linear
# ones pass), and a callgrind run of a rescanning commit at 8k alone counts 4 billion
LENGTHS = "512,1k,2k"
GATE = ["gate", "--parser", TRT, "--meter", "instructions", "--workload", "write_file", "--lengths", LENGTHS,
        "--no-progress"]


def _env() -> dict:
    return dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(
        os.pathsep) if p]))


def _run(repo: Path, *args: str, timeout: float = 900) -> subprocess.CompletedProcess:
    return subprocess.run([*CALLSCALE, *args], cwd=repo, capture_output=True, text=True, timeout=timeout, env=_env())


@pytest.fixture(scope="module")
def trt(tmp_path_factory):
    """The TensorRT-LLM-layout repository of every commit of ec.HISTORY: (folder, hashes)."""
    repo = tmp_path_factory.mktemp("engines") / "TensorRT-LLM"
    return repo, ec.make(repo, "trtllm")


@pytest.mark.parametrize("layout", sorted(ec.LAYOUTS))
def test_each_engines_parser_streams_from_its_checkout_without_the_engine(tmp_path, layout):
    repo = tmp_path / layout
    ec.make(repo, layout, ec.HISTORY[-1:])
    root = {"trtllm": "tensorrt_llm", "sglang": "sglang"}.get(layout, "vllm")
    ordinary = subprocess.run([sys.executable, "-c", f"import {root}"], cwd=repo / ("python" if root == "sglang" else ""),
                              capture_output=True, text=True)
    assert ordinary.returncode == 1 and "No module named 'torch'" in ordinary.stderr  # the package root as shipped
    proc = _run(repo, "check", "--parser", ec.spec(layout), "--workload-format", "deepseek_v31", "--workload",
                "write_file,many_short_calls", "--lengths", "1k", "--no-progress")
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "all agree" in proc.stdout and f"{ec.spec(layout)} " in proc.stdout
    assert checkout.detect(repo) == {"vllm_entrypoints": "vllm"}.get(layout, layout)


def _gate_fails(capsys, *extra: str) -> str:
    with pytest.raises(SystemExit) as info:
        main(["gate", "--meter", "time", "--workload", "write_file", "--no-progress", *extra])
    err = capsys.readouterr().err
    assert info.value.code == 125, err
    assert len(err.strip().splitlines()) == 1 and "git bisect run skips this commit" in err
    return err


def test_a_commit_whose_parser_cannot_load_is_skipped_with_the_cause(trt, capsys, monkeypatch, tmp_path):
    repo, hashes = trt
    work = tmp_path / "work"
    ec.git(repo, "worktree", "add", "-q", "--detach", str(work), hashes[2])
    monkeypatch.chdir(work)
    err = _gate_fails(capsys, "--parser", TRT)
    assert f"at {hashes[2][:7]}" in err and "ImportError: cannot import name 'reference_parser_v2'" in err
    ec.git(work, "checkout", "-q", hashes[3])  # the class renamed
    err = _gate_fails(capsys, "--parser", TRT)
    assert (f"DeepSeekV31Parser is not in tensorrt_llm/serve/tool_parser/deepseekv31_parser.py at {hashes[3][:7]}; "
            "classes there: DeepSeekV31ParserRenamed (renamed?)") in err
    ec.git(work, "checkout", "-q", hashes[4])
    ec.git(work, "mv", "tensorrt_llm/serve/tool_parser/deepseekv31_parser.py", "tensorrt_llm/serve/tool_parser/dsv31.py")
    err = _gate_fails(capsys, "--parser", TRT)  # the module moved
    assert ("tensorrt_llm/serve/tool_parser/deepseekv31_parser.py is not in the checkout at "
            f"{hashes[4][:7]}; class DeepSeekV31Parser is in tensorrt_llm/serve/tool_parser/dsv31.py (name it as "
            "tensorrt_llm.serve.tool_parser.dsv31:DeepSeekV31Parser)") in err
    ec.git(work, "reset", "-q", "--hard")
    parser = work / "tensorrt_llm/serve/tool_parser/deepseekv31_parser.py"
    parser.write_text("import callscale_absent_helper_pkg.core\n" + parser.read_text())
    err = _gate_fails(capsys, "--parser", TRT)  # a pure-Python import that is not installed: what to install
    assert ("tensorrt_llm.serve.tool_parser.deepseekv31_parser imports callscale_absent_helper_pkg, which is "
            "not installed here: pip install callscale-absent-helper-pkg") in err
    ec.git(work, "reset", "-q", "--hard")
    err = _gate_fails(capsys, "--parser", f"{TRT}@{hashes[3]}")  # another commit, read with git archive
    assert f"at {hashes[3][:12]}; classes there: DeepSeekV31ParserRenamed" in err
    assert (Path(checkout.tempfile.gettempdir()) / "callscale-checkouts" / hashes[3] / "tensorrt_llm").is_dir()


def test_check_against_an_earlier_commit_names_the_fix_as_a_fix(trt, tmp_path):
    repo, hashes = trt
    work = tmp_path / "work"
    ec.git(repo, "worktree", "add", "-q", "--detach", str(work), hashes[-1])
    args = ["check", "--parser", TRT, "--outputs", "30", "--seeds", "0", "--show", "1000", "--no-progress",
            "--workload", "write_file"]
    proc = _run(work, *args, "--against", "HEAD~1")  # c7: the content holding '<' dropped
    assert proc.returncode == 1, proc.stdout[-2000:] + proc.stderr[-2000:]
    lines = proc.stdout.splitlines()
    judged = [x for x in lines if x.startswith("DIFF ") and "the expected outcome agrees with new (old against it: "
              "content lost" in x]
    assert judged and not any("agrees with old" in x for x in lines)
    assert f"compared {TRT} (new) against {TRT}@HEAD~1 (old)" in lines[-1]
    ec.git(work, "checkout", "-q", hashes[6])  # c7 against c6: the same answers (only the cost differs)
    proc = _run(work, *args, "--against", hashes[5])
    assert proc.returncode == 0 and "0 differences" in proc.stdout, proc.stdout[-2000:] + proc.stderr[-2000:]


def test_the_pytest_api_takes_the_same_spec(trt):
    """callscale.testing with MODULE:CLASS@REV, run from the engine's repository (in a process of its own: the
    checkout's finder stays out of this one)."""
    repo, hashes = trt
    code = ("from callscale.testing import assert_chunking_invariant as check\n"
            f"check({TRT + '@' + hashes[-1]!r}, 'deepseek_v31', workloads=['write_file'], faults=False)\n"
            "try:\n"
            f"    check({TRT + '@' + hashes[3]!r}, 'deepseek_v31', workloads=['write_file'], faults=False)\n"
            "except TypeError as exc:\n"
            "    print(exc)\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=repo, capture_output=True, text=True, env=_env(),
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "DeepSeekV31Parser is not in tensorrt_llm/serve/tool_parser/deepseekv31_parser.py at " \
           f"{hashes[3][:12]}; classes there: DeepSeekV31ParserRenamed (renamed?)" in proc.stdout


def test_init_in_an_engines_checkout_writes_what_travels(trt, tmp_path):
    repo, hashes = trt
    work = tmp_path / "work"
    ec.git(repo, "worktree", "add", "-q", "--detach", str(work), hashes[-1])
    (work / ".gitignore").write_text("*.pyc\n")
    proc = _run(work, "init", "--parser", TRT, "--workload", "write_file", "--lengths", "1k,2k,4k")
    assert proc.returncode == 0, proc.stderr
    assert "a trtllm checkout:" in proc.stdout
    assert "commit: git add asv.conf.json callscale_benchmarks/ .gitignore" in proc.stdout
    written = [work / "asv.conf.json", *(work / "callscale_benchmarks").iterdir(), work / ".gitignore"]
    for path in written:
        if path.is_file():
            text = path.read_text()
            assert str(tmp_path) not in text and "/root" not in text and str(ROOT) not in text, path
    settings = json.loads((work / "callscale_benchmarks" / "callscale.json").read_text())
    assert settings["checkout"] == "trtllm" and settings["parsers"] == {TRT: "deepseek_v31"}
    assert (work / ".gitignore").read_text().splitlines()[-2:] == [".asv/", "results/"]
    again = _run(work, "init", "--parser", TRT, "--workload", "write_file", "--force")
    assert again.returncode == 0 and "added to" not in again.stdout  # the ignore lines once
    assert (work / ".gitignore").read_text().count(".asv/") == 1
    bad = _run(work, "init", "--parser", TRT + "@HEAD~1", "--workload", "write_file", "--force")
    assert bad.returncode == 2 and "name the class without @" in bad.stderr


@pytest.mark.slow
@needs_valgrind
def test_git_bisect_run_names_the_quadratic_commit_of_an_engines_repository(trt, tmp_path):
    repo, hashes = trt
    work = tmp_path / "work"
    ec.git(repo, "worktree", "add", "-q", "--detach", str(work), hashes[-2])
    ec.git(work, "bisect", "start", hashes[-2], hashes[0])
    proc = subprocess.run(["git", "bisect", "run", *CALLSCALE, *GATE], capture_output=True, text=True, timeout=1800,
                          cwd=work, env=_env())
    log = ec.git(work, "bisect", "log")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert f"{hashes[ec.QUADRATIC]} is the first bad commit" in proc.stdout
    assert "cannot test: " in proc.stderr and "# skip" in log


@pytest.mark.slow
@needs_valgrind
@needs_asv
def test_asv_over_an_engines_commits_names_the_quadratic_commit(trt, tmp_path):
    repo, hashes = trt
    work = tmp_path / "TensorRT-LLM"
    subprocess.run(["git", "clone", "-q", str(repo), str(work)], check=True)
    init = _run(work, "init", "--parser", TRT, "--workload", "write_file", "--lengths", LENGTHS)
    assert init.returncode == 0, init.stderr
    env = dict(_env(), ASV_PYTHONPATH=str(ROOT))  # callscale found at run time: asv drops PYTHONPATH

    def asv(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(["asv", *args], cwd=work, capture_output=True, text=True, timeout=3600, env=env)

    assert asv("machine", "--yes", "--machine", "ci").returncode == 0
    run = asv("run", "--machine", "ci", "--show-stderr", "ALL")
    assert run.returncode == 2, run.stdout[-3000:] + run.stderr[-3000:]  # c3 and c4: failed, no figure
    assert "RuntimeError: cannot import or build the parser here: cannot import " in run.stdout
    assert "classes there: DeepSeekV31ParserRenamed (renamed?)" in run.stdout
    find = asv("find", "--machine", "ci", f"{hashes[0]}..{hashes[-2]}", "callscale_series.CallscaleFit.track_exponent")
    assert find.returncode == 0 and f"Greatest regression found: {hashes[ec.QUADRATIC][:8]}" in find.stdout, \
        find.stdout[-3000:]
    page = _run(work, "history", "--out", str(tmp_path / "history"))
    assert page.returncode == 0, page.stderr
    from callscale import history

    results = work / "results" / "asv"
    series = history.exact_series(history.load_results(results, history.find_series(results)))
    changes = history.verdict_changes(history.exponents(series, 1.3))
    assert list(changes["commit"])[:2] == [hashes[ec.QUADRATIC], hashes[-1]]
    assert not {hashes[2], hashes[3]} & set(series["commit"])


def test_a_name_taken_from_a_package_runs_its_init_once_and_a_registry_never(tmp_path):
    """A checkout named by its folder (MODULE:CLASS@FOLDER, any package): packages are namespace-like; ``from pkg
    import NAME`` (no submodule) runs pkg/__init__.py then; the registry's __init__ that would fail is not run;
    protocol records read by attribute. In a process of its own (the finder stays out of this one)."""
    pkg = tmp_path / "team" / "pkg"
    (pkg / "registry").mkdir(parents=True)
    (pkg / "api").mkdir()  # its protocol.py imports the engine: stood in (there need not be one)
    (pkg / "__init__.py").write_text("import torch\nLIMIT = 5\n")
    (pkg / "registry" / "__init__.py").write_text("raise RuntimeError('the registry imports every parser')\n")
    (pkg / "registry" / "parser.py").write_text(
        "from pkg import LIMIT\nfrom pkg.api.protocol import Tool\n\n\nclass P:\n    limit = LIMIT\n"
        "    tool = Tool.model_validate({'function': {'name': 'f', 'parameters': {'type': 'object'}}})\n")
    code = ("from callscale import checkout\n"
            f"where = checkout.locate('pkg.registry.parser', {str(tmp_path / 'team')!r})\n"
            "P = checkout.load(where, 'pkg.registry.parser', 'P')\n"
            "print(P.limit, P.tool.function.name, P.tool.function.parameters.get('type'), P.tool.model_dump())\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, env=_env())
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "5 f object {'function': {'name': 'f', 'parameters': {'type': 'object'}}}"
