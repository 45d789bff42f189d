"""``callscale parsers --engines``: every engine parser callscale can measure, with what to install or build."""

from __future__ import annotations

from callscale import cli
from callscale.adapters import KNOWN_CLASSES, listing, llamacpp, smg


def _rows(capsys):
    assert cli.main(["parsers", "--engines"]) == 0
    return {line.split()[0]: line.split(None, 2)[1:] for line in capsys.readouterr().out.splitlines()}


def test_every_known_class_smg_parser_and_llamacpp_template_is_listed(monkeypatch, capsys):
    monkeypatch.setattr(llamacpp, "built", lambda: False)
    monkeypatch.setattr(smg, "parser_names", lambda: [])
    rows = _rows(capsys)
    for target, fmt in KNOWN_CLASSES.items():
        assert rows[target][0] == fmt
    assert {smg.PREFIX + n for n in smg.FORMATS} <= set(rows)
    for template, fmt in llamacpp.FORMATS.items():
        got = rows[llamacpp.PREFIX + template]
        assert got[0] == fmt and "harness not built: callscale engines build llamacpp" in got[1]


def test_a_row_says_what_to_install_where_the_engine_is_missing(monkeypatch):
    monkeypatch.setattr(listing, "_installed", lambda package: package == "vllm")
    monkeypatch.setattr(llamacpp, "built", lambda: False)
    monkeypatch.setattr(llamacpp, "missing_tools", lambda: ["cmake"])
    rows = {row[0]: row for row in listing.engine_rows()}
    vllm = rows["vllm.tool_parsers.muse_glimmer_tool_parser:MuseGlimmerToolParser"]
    sglang = rows["sglang.srt.function_call.muse_glimmer_detector:MuseGlimmerDetector"]
    assert vllm[1:] == ("muse_glimmer", "vllm class (adapter)")
    assert sglang[1] == "muse_glimmer" and "not installed: pip install --no-deps sglang" in sglang[2]
    assert llamacpp.INSTALL in rows[llamacpp.PREFIX + "Qwen3-Coder"][2]


def test_a_class_in_no_release_says_where_it_is_installed_engine_or_not(monkeypatch):
    monkeypatch.setattr(llamacpp, "built", lambda: False)
    for installed in (True, False):
        monkeypatch.setattr(listing, "_installed", lambda package: installed)
        row = {row[0]: row for row in listing.engine_rows()}[
            "vllm.tool_parsers.solar_open2_tool_parser:SolarOpen2ToolParser"]
        assert row[1] == "solar_open2"
        assert row[2] == ("vllm class (adapter); in no release: vLLM main after 0.34.0 (not in 0.34.0): load it from "
                          "a checkout, MODULE:CLASS@FOLDER (docs/engines.md)")


def test_a_built_harness_lists_the_templates_it_ships(monkeypatch):
    monkeypatch.setattr(llamacpp, "built", lambda: True)
    monkeypatch.setattr(llamacpp, "templates", lambda: ["Qwen3-Coder", "Some-New-Model"])
    rows = {row[0]: row for row in listing.engine_rows()}
    assert rows["llamacpp:Qwen3-Coder"][1] == "qwen3_coder" and rows["llamacpp:Some-New-Model"][1] == "?"
    assert "llamacpp:GLM-4.6" not in rows
