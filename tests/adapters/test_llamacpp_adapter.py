"""``--parser llamacpp:<template>``: llama.cpp's parsing through our harness (callscale/adapters/llamacpp.py;
docs/engines.md "llama.cpp"). The tests that need the built library skip without it (CI builds nothing)."""

import json
import shutil
import subprocess
import sys

import pytest

from callscale import cli
from callscale.adapters import llamacpp
from callscale.workloads import render

BUILT = llamacpp.built()
NEEDS_BUILD = pytest.mark.skipif(not BUILT, reason="llama.cpp is not built here (callscale engines build llamacpp)")


@pytest.fixture
def no_build(monkeypatch, tmp_path):
    """An empty cache and no build tools: what a machine without cmake/g++ sees."""
    monkeypatch.setenv("CALLSCALE_CACHE", str(tmp_path))
    monkeypatch.setattr(llamacpp, "missing_tools", lambda: ["cmake", "a C++ compiler"])


def test_without_build_tools_the_gate_exits_2_with_one_line_saying_what_to_install(no_build, capsys):
    with pytest.raises(SystemExit) as stop:
        cli.main(["gate", "--meter", "instructions", "--parser", "llamacpp:Qwen3-Coder", "--workload", "write_file"])
    assert stop.value.code == 2
    assert capsys.readouterr().err == (
        "callscale gate: error: parser 'llamacpp:Qwen3-Coder': building llama.cpp needs cmake and a C++ compiler, "
        "not found; install cmake (3.14 or newer) and a C++17 compiler (apt-get install cmake g++), then run "
        "`callscale engines build llamacpp` (see callscale gate --help)\n")


def test_engines_build_without_tools_exits_2_and_status_says_not_built(no_build, capsys, tmp_path):
    assert cli.main(["engines", "build", "llamacpp"]) == 2
    assert capsys.readouterr().err == ("callscale engines build llamacpp: cmake and a C++ compiler not found; install "
                                       "cmake (3.14 or newer) and a C++17 compiler (apt-get install cmake g++)\n")
    assert cli.main(["engines", "status", "llamacpp"]) == 1
    out = capsys.readouterr().out
    assert out == (f"llamacpp: llama-cpp-python {llamacpp.VERSION}, not built: "
                   f"{tmp_path}/llamacpp/{llamacpp.VERSION}/build/libcallscale_llamacpp.so\n")


def test_a_template_needs_a_name_and_a_known_format(monkeypatch):
    monkeypatch.setattr(llamacpp, "built", lambda: True)
    monkeypatch.setattr(llamacpp, "template_source", lambda template: "{{ messages }}")
    assert llamacpp.unavailable("llamacpp:", None) == ("parser 'llamacpp:': name a chat template, "
                                                       "llamacpp:<template> (e.g. llamacpp:Qwen3-Coder)")
    assert "name it with --workload-format" in llamacpp.unavailable("llamacpp:Reka-Edge", None)
    assert llamacpp.unavailable("llamacpp:Reka-Edge", "qwen3") is None
    assert llamacpp.unavailable("llamacpp:Qwen3-Coder", None) is None


def test_every_mapped_template_reads_a_format_callscale_writes():
    assert llamacpp.format_of("Qwen3-Coder") == "qwen3_coder"
    assert llamacpp.format_of("/somewhere/Qwen3-Coder.jinja") == "qwen3_coder"
    assert llamacpp.format_of("GLM-4.7-Flash") == "glm47"  # dots in a name are not a suffix
    assert llamacpp.format_of("/somewhere/deepseek-ai-DeepSeek-V3.1.jinja") == "deepseek_v31"
    for template, fmt in llamacpp.FORMATS.items():
        assert render.get(fmt).special_tokens is not None, template


def test_the_rebuild_stamp_follows_the_harness_source(monkeypatch, tmp_path):
    monkeypatch.setenv("CALLSCALE_CACHE", str(tmp_path))
    build = tmp_path / "llamacpp" / llamacpp.VERSION / "build"
    build.mkdir(parents=True)
    (build / llamacpp.LIBRARY).write_bytes(b"")
    assert not llamacpp.built()  # no stamp
    (build / "callscale.stamp").write_text(llamacpp._stamp() + "\n")
    assert llamacpp.built()
    (build / "callscale.stamp").write_text("0" * 16 + "\n")  # built from another harness
    assert not llamacpp.built()


@NEEDS_BUILD
def test_the_shipped_templates_include_qwen3_coder_and_every_mapped_one():
    shipped = llamacpp.templates()
    assert len(shipped) > 60
    assert set(llamacpp.FORMATS) <= set(shipped)


@NEEDS_BUILD
def test_a_qwen3_coder_call_streamed_token_by_token_comes_back_whole():
    from callscale.check import assemble
    from callscale.workloads import make

    case = make("write_file", "qwen3_coder", 1024, 0)
    parser = llamacpp.factory("Qwen3-Coder")()
    tools = list(case.tools)
    results = [parser.parse_streaming_increment(d, tools) for d in case.deltas("tokens:3")]
    results.append(parser.finish(tools))
    got = assemble(results)  # strict: one name per call, indices in order, as a client reads them
    assert [c.name for c in got.calls] == ["write_file"]
    assert json.loads(got.calls[0].arguments_text) == case.calls[0].arguments
    assert got.content == "I'll write the file.\n\n"  # llama.cpp keeps the blank line before the call
    whole = llamacpp.factory("Qwen3-Coder")().detect_and_parse(case.text, tools)
    assert [c.name for c in whole.calls] == ["write_file"]
    assert json.loads(whole.calls[0].parameters) == json.loads(got.calls[0].arguments_text)


@NEEDS_BUILD
@pytest.mark.parametrize("template", ["GLM-4.7-Flash", "deepseek-ai-DeepSeek-V3.1"])
def test_a_thinking_template_is_applied_with_thinking_off(template):
    from callscale.check import assemble
    from callscale.workloads import make

    case = make("write_file", llamacpp.format_of(template), 1024, 0)
    parser, tools = llamacpp.factory(template)(), list(case.tools)
    results = [parser.parse_streaming_increment(d, tools) for d in case.deltas("tokens:4")]
    got = assemble(results + [parser.finish(tools)])
    assert parser._keep.info["generation_prompt"].endswith("</think>")  # the prompt closes the block
    assert got.reasoning == "" and [c.name for c in got.calls] == ["write_file"]
    assert json.loads(got.calls[0].arguments_text) == case.calls[0].arguments


@NEEDS_BUILD
def test_counting_brackets_only_the_update():
    collect = llamacpp.factory("Qwen3-Coder").callscale_collect
    lib = llamacpp._library()
    seen = []
    original = lib.callscale_llamacpp_counting
    try:
        lib.callscale_llamacpp_counting = lambda on: seen.append(on)
        collect(), collect(), collect()
    finally:
        lib.callscale_llamacpp_counting = original
        original(0)
    assert seen == [1, 0, 1]


@pytest.mark.slow
@NEEDS_BUILD
@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed")
def test_the_exact_gate_finds_llamacpp_qwen3_coder_super_linear_on_write_file(tmp_path):
    import csv

    done = subprocess.run([sys.executable, "-m", "callscale", "gate", "--meter", "instructions", "--parser",
                           "llamacpp:Qwen3-Coder", "--parser", "qwen3_coder", "--workload", "write_file",
                           "--lengths", "1k,2k,4k", "--out", str(tmp_path)], capture_output=True, text=True,
                          timeout=1800)
    assert done.returncode == 1, done.stderr
    verdicts = {line.split()[0]: line.split()[-1] for line in done.stdout.splitlines()  # the write_file rows, not
                if line.startswith(("llamacpp:", "qwen3_coder ")) and line.split()[1] == "write_file"}  # request's
    assert verdicts == {"llamacpp:Qwen3-Coder": "FAIL", "qwen3_coder": "ok"}
    with open(tmp_path / "scaling.csv", newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["parser"] != "null"]
    count = {(r["parser"], int(r["length"])): float(r["seconds"]) for r in rows}
    theirs = [count["llamacpp:Qwen3-Coder", n] for n in (1024, 2048, 4096)]
    ours = [count["qwen3_coder", n] for n in (1024, 2048, 4096)]
    # measured 60,990,733 / 157,553,262 / 466,924,713: each doubling of the call more than 2.5x the cost
    assert 50e6 < theirs[0] < 75e6 and theirs[1] > 2.5 * theirs[0] and theirs[2] > 2.5 * theirs[1]
    assert all(t > 10 * o for t, o in zip(theirs, ours))  # ours 3.8M / 6.9M / 13.0M


def test_a_cmake_cache_of_another_copy_of_callscale_is_dropped(tmp_path):
    """A build folder configured by another copy of callscale (a worktree, a virtualenv) names another source in
    its CMake cache, which cmake refuses; the build drops that cache (and keeps one of its own source)."""
    build = tmp_path / "build"
    (build / "CMakeFiles").mkdir(parents=True)
    (build / "objects.o").write_text("kept")
    cache = build / "CMakeCache.txt"
    cache.write_text(f"CMAKE_BUILD_TYPE:STRING=Release\nCMAKE_HOME_DIRECTORY:INTERNAL={llamacpp.HERE}\n")
    llamacpp._forget_other_source(build)
    assert cache.is_file() and (build / "CMakeFiles").is_dir()
    cache.write_text("CMAKE_HOME_DIRECTORY:INTERNAL=/elsewhere/callscale/adapters/llamacpp\n")
    llamacpp._forget_other_source(build)
    assert not cache.exists() and not (build / "CMakeFiles").exists()
    assert (build / "objects.o").read_text() == "kept"
