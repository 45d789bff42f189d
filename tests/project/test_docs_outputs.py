"""The documented examples still match the tool (scripts/docs_outputs.py regenerates their output blocks): every
marked command is accepted by callscale's parser, and each gate table's header is the one callscale prints now."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from callscale import cli, config
from callscale.matrix import Run
from callscale.report import compact, table
from support import ROOT

spec = importlib.util.spec_from_file_location("docs_outputs", ROOT / "scripts" / "docs_outputs.py")
docs_outputs = importlib.util.module_from_spec(spec)
sys.modules["docs_outputs"] = docs_outputs  # dataclasses look their module up
spec.loader.exec_module(docs_outputs)

EXAMPLES = [e for path in docs_outputs.DOCS for e in docs_outputs.examples(path)]


def test_the_readme_marks_its_gate_and_check_examples():
    commands = [e.command for e in EXAMPLES if e.path.name == "README.md"]
    assert any("callscale gate " in c and "--meter instructions" in c for c in commands)
    assert any(c.startswith("callscale check") for c in commands)


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: f"{e.path.name}:{e.start}")
def test_each_documented_command_is_still_accepted(example):
    argv = example.argv()
    assert argv, example.command
    args, extra = cli.build_parser().parse_known_args(argv)
    assert not extra, f"{example.path.name}:{example.start}: unrecognized {extra}"


@pytest.mark.parametrize("example", [e for e in EXAMPLES if e.argv()[:1] in (["gate"], ["scale"])],
                         ids=lambda e: f"{e.path.name}:{e.start}")
def test_each_documented_gate_table_has_todays_header(example):
    args = cli.build_parser().parse_known_args(example.argv())[0]
    meter = args.meter
    lengths = config.check_lengths(args.lengths, meter) if args.lengths else (4096, 16384, 65536)
    run = Run(lengths, ("write_file",), "tokens:4", 1, 1.3, meter)
    header = (table(run) if args.output == "wide" else compact(run)).splitlines()[0]  # compact: the default
    block = example.path.read_text(encoding="utf-8").splitlines()[example.start + example.command_lines]
    assert block.split() == header.split(), "run scripts/docs_outputs.py to regenerate the block"


COUNTED = [e for e in EXAMPLES if "--meter instructions" in e.command]


def test_the_counted_examples_are_found():
    assert any(e.path.name == "README.md" for e in COUNTED)


@pytest.mark.slow  # each counted example runs under callgrind (~25 s of CPU): the integration tier
@pytest.mark.parametrize("example", COUNTED, ids=lambda e: f"{e.path.name}:{e.start}")
def test_each_documented_instruction_count_is_current(example):
    """The counts a marked instruction-meter example documents are what it counts now, each within
    docs_outputs.COUNT_TOLERANCE (counts repeat to about 0.001% from run to run; a change to a parser moves
    them by more): a stale block fails here, and ``python scripts/docs_outputs.py`` rewrites it."""
    documented = example.path.read_text(encoding="utf-8").splitlines()[example.start + example.command_lines:example.end]
    fresh = docs_outputs.run(example)
    assert fresh is not None, example.command
    old, new = docs_outputs.counts(documented), docs_outputs.counts(fresh)
    assert old and len(old) == len(new), (old, new)
    stale = [(a, b) for a, b in zip(old, new) if abs(b - a) > docs_outputs.COUNT_TOLERANCE * a]
    assert not stale, (f"{example.path.name}:{example.start}: documented -> counted now {stale}; run "
                       f"python scripts/docs_outputs.py {example.path.relative_to(ROOT)}")


def test_counts_are_read_with_their_separators():
    assert docs_outputs.counts(["a  3,655,016  25,603,004  4.0 (4.0)  1.00", "x 2,297 1.0"]) == [3655016, 25603004, 2297]


def test_the_script_rewrites_a_block_and_prints_the_diff(tmp_path, monkeypatch):
    doc = tmp_path / "x.md"
    doc.write_text('text\n<!-- docs-output drop="^skip" -->\n```\n$ printf "a\\\\nskip me\\\\nb\\\\n" \\\n  && true\n'
                   "old output\n```\nmore\n")
    monkeypatch.setattr(docs_outputs, "ROOT", tmp_path)
    [example] = docs_outputs.examples(doc)
    assert example.command == 'printf "a\\\\nskip me\\\\nb\\\\n" && true'
    diff = docs_outputs.rewrite(doc, {example.start: docs_outputs.run(example)})
    assert doc.read_text().splitlines()[5:8] == ["a", "b", "```"]
    assert "-old output" in diff and "+a" in diff
