"""The package's layout, computed from its own imports (scripts/import_graph.py): commands as modules with a
public ``run``, ``cli.py`` wiring them, no module taking another's private names."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import sys
from pathlib import Path

import pytest
from support import ROOT

spec = importlib.util.spec_from_file_location("import_graph", ROOT / "scripts" / "import_graph.py")
import_graph = importlib.util.module_from_spec(spec)
sys.modules.setdefault("import_graph", import_graph)  # its dataclasses look their module up
spec.loader.exec_module(import_graph)

#: The parser and renderer registries' "loaded" flags, which the measuring child sets after importing one
#: format's modules only (callscale/_child.py; the registries in parsers/ offer no public switch yet).
REGISTRY_FLAGS: set[str] = set()  # none: a process that wants its registry narrowed says so publicly


def test_cli_only_wires_the_commands():
    from callscale import cli
    from callscale.commands import COMMANDS

    assert len((ROOT / "callscale" / "cli.py").read_text().splitlines()) < 400
    parser = cli.build_parser()
    for name in COMMANDS:
        module = importlib.import_module(f"callscale.commands.{name}")
        assert list(inspect.signature(module.run).parameters) == ["args"], name
        assert list(inspect.signature(module.add_arguments).parameters) == ["p"], name
        args = parser.parse_args([name] + {"compare": ["a.csv", "b.csv"], "engines": ["status", "llamacpp"],
                                           "init": ["--parser", "m:C"],
                                           "profile": ["--parser", "qwen", "--workload", "w", "--length", "1k"]
                                           }.get(name, []))
        assert args.command == name and args.command_parser.prog == f"callscale {name}"


def test_a_bad_option_names_its_command(capsys):
    from callscale.cli import main

    with pytest.raises(SystemExit) as stopped:
        main(["gate", "--lengths", "4k,16k,64k", "--no-such-option"])
    assert stopped.value.code == 2
    assert capsys.readouterr().err.startswith("callscale gate: error: unrecognized arguments: --no-such-option")


def test_no_module_takes_another_modules_private_names():
    found = {line.split(":", 2)[0] + ":" + line.split(":", 2)[2] for line in import_graph.private_uses()}
    assert found <= REGISTRY_FLAGS, sorted(found - REGISTRY_FLAGS)


def test_the_import_graph_has_no_circle_and_few_imports_up():
    graph = import_graph.build()
    assert len(graph.modules) > 100 and len(graph.edges) > 300  # the whole package was read
    assert graph.circles() == []
    assert len(graph.up()) <= import_graph.ALLOWED_UP, graph.up()


def test_the_graph_finds_a_circle_and_an_import_up(tmp_path):
    package = tmp_path / "callscale"
    (package / "parsers").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "parsers" / "__init__.py").write_text("def f():\n    from callscale import cli\n")
    (package / "cli.py").write_text("from .parsers import f\n")
    graph = import_graph.build(tmp_path)
    assert graph.circles() == [["callscale.cli", "callscale.parsers"]]
    assert graph.up() == [("callscale.parsers", "callscale.cli")]
    assert graph.in_functions == 1


def test_no_core_module_names_an_engine():
    """The engines are reached through callscale.adapters (the protocol, adapters/protocol.py): no module of the
    core or of the commands names one, in code, comments or strings."""
    import re

    core = sorted((ROOT / "callscale").glob("*.py")) + sorted((ROOT / "callscale" / "commands").glob("*.py"))
    named = [f"{path.name}:{n}" for path in core for n, line in enumerate(path.read_text().splitlines(), 1)
             if re.search(r"smg|llamacpp", line)]
    assert len(core) > 30 and named == []
