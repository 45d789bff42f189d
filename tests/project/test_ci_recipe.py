"""docs/ci.md works as written: its workflow's shell steps, run as a script, give the exit codes it states.

The slow test reads the YAML block of docs/ci.md and runs each step's ``run:``
in order with ``bash -eo pipefail`` (GitHub's shell for ``run``), honouring
``if:`` and ``continue-on-error``, in a clone of a stand-in team repository:
``main`` holds a linear parser, the pull request branch makes it rescan its
buffer on every delta, and the package imports ``torch`` and ``triton`` (not
installed: the GPU stand-ins make it import). ``python`` is a fresh virtualenv
(``--system-site-packages``, so callscale's dependencies need no download) and
``CALLSCALE`` is a wheel built from this checkout (``CALLSCALE_CI_SOURCE=git``: a git URL
pinned to this checkout's HEAD commit, the recipe's own form).

``CALLSCALE_CI_LOG=PATH`` writes the steps' output there (docs/ci.md quotes it).
The fast tests cover ``gate --out`` and the stand-ins on their own.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from callscale.cli import main
from support import ROOT

DOC = ROOT / "docs" / "ci.md"


def workflow() -> dict:
    yaml = pytest.importorskip("yaml")
    block = re.search(r"```yaml\n(.*?)```", DOC.read_text(), re.S)
    assert block, "docs/ci.md has no yaml block"
    return yaml.safe_load(block.group(1))


def test_the_workflow_names_its_steps_and_pins_callscale():
    flow = workflow()
    steps = flow["jobs"]["callscale"]["steps"]
    names = [s.get("name", s.get("uses")) for s in steps]
    assert names[2:7] == ["install valgrind, callscale and the GPU stand-ins",
                          "baseline: the target branch's parser, measured the same way",
                          "install the parser's package at this commit",
                          "gate: linear cost, and no worse than the baseline",
                          "check: the same answer under every chunking"]
    assert re.fullmatch(r"callscale @ git\+https://\S+@\S+", flow["env"]["CALLSCALE"])
    gate = steps[5]["run"]
    assert "--out callscale-results" in gate and "--baseline" in gate and "--meter instructions" in gate


# --------------------------------------------------------------------------- gate --out
def test_gate_out_that_cannot_be_written_is_one_line_exit_2(capsys, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(SystemExit) as exc:
        main(["gate", "--parser", "qwen3", "--out", str(blocker / "res")])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and len(err.strip().splitlines()) == 1 and "--out" in err


# --------------------------------------------------------------------------- GPU stand-ins
STANDIN_IMPORTS = textwrap.dedent("""
    import torch, triton
    import torch.nn.functional as F
    import triton.language as tl
    from torch import nn

    class Model(torch.nn.Module):
        pass

    @triton.jit
    def kernel(x):
        return x + 1

    @torch.inference_mode()
    def infer():
        return "inferred"

    def hint(t: torch.Tensor | None = None) -> None:
        pass

    import callscale.adapters.gpu_stubs as s
    print(s.is_stub(torch), s.is_stub(triton), torch.__version__, bool(torch.cuda.is_available()),
          kernel(1), infer(), issubclass(Model, torch.nn.Module), torch.float16 is torch.float16)
""")


def test_gpu_stubs_run_lets_torch_and_triton_import_and_decorators_pass_through():
    env = dict(os.environ)
    probe = subprocess.run([sys.executable, "-c", "import torch"], capture_output=True, text=True, env=env)
    if probe.returncode == 0:
        pytest.skip("torch is installed here: the stand-in would not be used")
    proc = subprocess.run([sys.executable, "-m", "callscale.adapters.gpu_stubs", "run", "--",
                           sys.executable, "-c", STANDIN_IMPORTS], capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["True", "True", "2.9.0+callscale.stub", "False", "2", "inferred", "True", "True"]


def test_gpu_stubs_leave_an_installed_package_alone():
    import json

    import callscale.adapters.gpu_stubs as s

    s.install(["json"])  # json is installed: the finder is last, so the real one is found first
    try:
        import importlib

        assert importlib.import_module("json.decoder") is sys.modules["json.decoder"] and not s.is_stub(json)
    finally:
        s.uninstall_finder()


def test_gpu_stubs_bad_action_is_one_line_exit_2():
    proc = subprocess.run([sys.executable, "-m", "callscale.adapters.gpu_stubs", "bogus"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "invalid choice: 'bogus'" in proc.stderr


def test_gpu_stubs_run_from_a_folder_holding_a_clone_named_callscale(tmp_path):
    # python -m puts the working directory first: a clone there named callscale is a namespace package that
    # shadowed this one (`from callscale.cli import ...` failed: "cannot import name '__version__'")
    import callscale

    (tmp_path / "callscale").mkdir()
    (tmp_path / "callscale" / "README.md").write_text("a clone of the repository\n")
    ours = os.path.dirname(callscale.__file__)
    code = textwrap.dedent(f"""
        import runpy, sys, types
        ns = types.ModuleType("callscale")  # what the import system makes of the clone: no __file__
        ns.__path__ = [{str(tmp_path / "callscale")!r}, {ours!r}]
        sys.modules["callscale"] = ns
        sys.argv = ["gpu_stubs", "bogus"]
        runpy.run_module("callscale.adapters.gpu_stubs", run_name="__main__")
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert proc.returncode == 2 and "invalid choice: 'bogus'" in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr


def test_gpu_stubs_take_module_before_or_after_the_action(tmp_path, monkeypatch, capsys):
    import callscale.adapters.gpu_stubs as s

    monkeypatch.setattr(s, "_site_packages", lambda: tmp_path)
    for argv in (["install", "--module", "xgrammar"], ["--module", "xgrammar", "install"]):
        assert s.main(argv) == 0
        line = (tmp_path / s.PTH_NAME).read_text()
        assert line == "import callscale.adapters.gpu_stubs as _s; _s.install(['torch', 'triton', 'xgrammar'])\n"
        (tmp_path / s.PTH_NAME).unlink()
    with pytest.raises(SystemExit) as exit_:
        s.main(["install", "extra"])
    assert exit_.value.code == 2 and "unexpected arguments for install: extra" in capsys.readouterr().err


# --------------------------------------------------------------------------- the workflow as a script
TEAM_PYPROJECT = textwrap.dedent("""
    [build-system]
    requires = ["setuptools>=61"]
    build-backend = "setuptools.build_meta"

    [project]
    name = "team-engine"
    version = "1.0.0"
    dependencies = ["torch>=2.4", "triton>=3"]   # what --no-deps leaves out on a runner without CUDA

    [tool.setuptools]
    packages = ["team_engine"]

    [tool.callscale]
    workloads = ["write_file"]
    # the pull request's rescanning parser spends minutes under callgrind at the default 4k-64k
    instruction_lengths = ["1k", "2k", "4k", "8k"]
""")

TEAM_INIT = "import torch  # an engine's package imports the GPU packages at import time\nimport triton\n"

TEAM_PARSER = textwrap.dedent('''
    """A team's qwen3 tool parser: callscale's own, behind the team's class (a stand-in engine parser)."""
    import re

    import torch
    import triton

    from callscale.parsers import get

    assert not torch.cuda.is_available()


    class TeamQwen3Parser:
        def __init__(self):
            self._inner = get("qwen3")()
            self._seen = []

        def parse_streaming_increment(self, delta, tools=None):{RESCAN}
            return self._inner.parse_streaming_increment(delta, tools)

        def finish(self, tools=None):
            return self._inner.finish(tools)

        def detect_and_parse(self, text, tools=None):
            return self._inner.detect_and_parse(text, tools)
''')
#: The pull request's change: count the openers in everything received, on every delta (a rescan).
RESCAN = """
        self._seen.append(delta)
        self.opened = len(re.findall("<tool_call>", "".join(self._seen)))"""


def _git(cwd: Path, *args: str) -> str:
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.org", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@example.org")
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True, env=env).stdout


def _team_repository(tmp: Path) -> Path:
    """origin.git (main: linear; pr: rescans), cloned to ``work`` on the pr branch, as actions/checkout does."""
    src = tmp / "team-src"
    (src / "team_engine").mkdir(parents=True)
    (src / "pyproject.toml").write_text(TEAM_PYPROJECT)
    (src / "team_engine" / "__init__.py").write_text(TEAM_INIT)
    (src / "team_engine" / "tool_parsers.py").write_text(TEAM_PARSER.replace("{RESCAN}", ""))
    _git(src, "init", "-q", "-b", "main")
    _git(src, "add", ".")
    _git(src, "commit", "-qm", "linear parser")
    _git(src, "checkout", "-qb", "pr")
    (src / "team_engine" / "tool_parsers.py").write_text(TEAM_PARSER.replace("{RESCAN}", RESCAN))
    _git(src, "commit", "-qam", "count the openers (rescans the buffer on every delta)")
    _git(tmp, "clone", "-q", "--bare", str(src), "origin.git")
    _git(tmp, "clone", "-q", "origin.git", "work")
    work = tmp / "work"
    _git(work, "checkout", "-q", "pr")
    return work


def _condition(expr: str | None, event: str, failed: bool) -> bool:
    if expr is None:
        return not failed
    expr = expr.strip()
    if expr == "always()":
        return True
    if expr == "github.event_name == 'pull_request'":
        return event == "pull_request" and not failed
    raise AssertionError(f"the test does not know the condition {expr!r}: teach _condition")


def run_workflow(tmp: Path, event: str = "pull_request") -> list[tuple[str, int | None, str]]:
    """Run the workflow's ``run`` steps as bash scripts; (name, exit code or None when skipped, output) each."""
    if shutil.which("valgrind") is None:
        pytest.skip("valgrind is not installed (the recipe's install step would apt-get it)")
    flow = workflow()
    if os.environ.get("CALLSCALE_CI_SOURCE") == "git":  # the recipe's own form: a git URL pinned to a commit
        head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True,
                              check=True).stdout.strip()
        source = f"callscale @ git+file://localhost{ROOT}@{head}"
    else:  # a wheel built from this checkout (what is not committed yet too)
        dist = tmp / "dist"
        subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(dist), str(ROOT)],
                       check=True, capture_output=True, text=True, timeout=600)
        source = f"callscale @ {next(dist.glob('callscale-*.whl')).as_uri()}"
    base_python = getattr(sys, "_base_executable", sys.executable)
    venv = tmp / "venv"
    subprocess.run([base_python, "-m", "venv", "--system-site-packages", str(venv)], check=True, timeout=300)
    work = _team_repository(tmp)
    runner_temp = tmp / "runner-temp"
    runner_temp.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV", "CALLSCALE"))}
    env.update({k: str(v) for k, v in flow["env"].items()})
    env.update(CALLSCALE=source, PATH=f"{venv / 'bin'}{os.pathsep}{env['PATH']}",
               GITHUB_EVENT_NAME=event, GITHUB_BASE_REF="main" if event == "pull_request" else "",
               GITHUB_WORKSPACE=str(work), RUNNER_TEMP=str(runner_temp), CI="true",
               GITHUB_STEP_SUMMARY=str(tmp / "step-summary.md"),
               PIP_DISABLE_PIP_VERSION_CHECK="1")
    results, failed = [], False
    for step in flow["jobs"]["callscale"]["steps"]:
        if "run" not in step:
            continue
        name = step.get("name", step["run"].splitlines()[0])
        if not _condition(step.get("if"), event, failed):
            results.append((name, None, ""))
            continue
        proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]], cwd=work,
                              env=env, capture_output=True, text=True, timeout=1800, stdin=subprocess.DEVNULL)
        results.append((name, proc.returncode, proc.stdout + proc.stderr))
        if proc.returncode != 0 and not step.get("continue-on-error"):
            failed = True
    log = os.environ.get("CALLSCALE_CI_LOG")
    if log:
        Path(log).write_text("".join(f"== {name}: exit {code}\n{out}\n" for name, code, out in results))
    return results


@pytest.mark.slow
def test_the_workflow_steps_run_as_a_script_with_the_stated_exit_codes(tmp_path):
    results = run_workflow(tmp_path)
    codes = {name: code for name, code, _ in results}
    outputs = {name: out for name, _, out in results}
    assert list(codes.values()) == [0, 0, 0, 1, 0], "\n".join(f"== {n}: {c}\n{o}" for n, c, o in results)
    install, baseline, head, gate, check = outputs.values()
    assert "GPU stand-ins for torch, triton: wrote " in install
    assert "team_engine.tool_parsers:TeamQwen3Parser" in baseline
    assert "wrote callscale-base/scaling.csv" in baseline
    fail = [line for line in gate.splitlines() if line.startswith("FAIL team_engine.tool_parsers:TeamQwen3Parser")]
    assert len(fail) == 1 and "on write_file (step" in fail[0], gate
    assert "WORSE team_engine.tool_parsers:TeamQwen3Parser on write_file" in gate
    assert "wrote callscale-results/scaling.csv, callscale-results/scaling-fits.csv, callscale-results/scaling.png" in gate
    work = tmp_path / "work"
    assert (work / "callscale-results" / "scaling.png").read_bytes()[:4] == b"\x89PNG"
    summary = (work / "callscale-results" / "summary.md").read_text()
    assert summary.startswith("### callscale gate: FAILED (1 of 2 parser x workload pairs)"), summary
    assert "| `team_engine.tool_parsers:TeamQwen3Parser` | write_file | **FAIL** (step+projection) |" in summary
    assert "reproduce: `callscale gate --parser team_engine.tool_parsers:TeamQwen3Parser" in summary
    step = (tmp_path / "step-summary.md").read_text()  # $GITHUB_STEP_SUMMARY: the same text, appended
    assert summary in step
    flow = workflow()
    post = flow["jobs"]["callscale"]["steps"][-1]
    assert post["with"]["path"] == "callscale-results/summary.md" and "pull_request" in post["if"]
    assert "all agree" in check
    # the package came from the wheel, not from this checkout
    where = subprocess.run([str(tmp_path / "venv" / "bin" / "python"), "-c", "import callscale; print(callscale.__file__)"],
                           capture_output=True, text=True, cwd=tmp_path).stdout
    assert str(tmp_path / "venv") in where and str(ROOT) not in where
