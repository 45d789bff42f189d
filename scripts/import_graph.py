"""The import graph of the ``callscale`` package, drawn from the code's own ``import`` statements.

Reads every ``.py`` file under ``callscale/`` with :mod:`ast` (imports written inside functions counted too,
``importlib.import_module("callscale.x")`` with a literal name counted as an import), and prints:

- modules: ``.py`` files of the package;
- imports: distinct (importer, imported) pairs of package modules, and how many import statements naming a
  package module are written inside a function;
- circles: strongly connected groups of two or more modules (each listed);
- imports up: pairs whose importer sits in a lower layer of :data:`LAYERS` than what it imports (each listed).

    python scripts/import_graph.py            # the figures, then each circle and each import up
    python scripts/import_graph.py --folders  # parsers/, workloads/, adapters/, serve/ as one module each

The layers are documented in docs/DESIGN.md ("Layout"); tests/project/test_layers.py fails on a circle or on more
imports up than :data:`ALLOWED_UP`.
"""

from __future__ import annotations

import argparse
import ast
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "callscale"

#: The layers, lowest first: a module may import its own layer and the layers below. The first matching prefix
#: (module name, dotted) decides; ``=NAME`` is that module alone (the package's ``__init__``); a module no
#: prefix matches is in the top layer.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("parsers", ("callscale.parsers",)),
    ("workloads", ("callscale.workloads", "callscale.tokenizers", "callscale.outcome", "callscale.streaming")),
    ("base", ("=callscale", "callscale.config", "callscale.settings", "callscale.tables", "callscale.fit",
              "callscale.bounded", "callscale.environment", "callscale.flamediff", "callscale.integrity",
              "callscale.exports")),
    ("meters", ("callscale.measure", "callscale.instructions", "callscale.check", "callscale.verify",
                "callscale.adapters.protocol")),
    ("adapters", ("callscale.adapters", "callscale.plugins", "callscale.checkout", "callscale._metered")),
    ("runs", ("callscale._child", "callscale._against_child", "callscale.matrix", "callscale.report",
              "callscale.profile", "callscale.against", "callscale.hunt", "callscale.history", "callscale.compare",
              "callscale.summary", "callscale.shard", "callscale.init",
              "callscale.testing", "callscale.serve", "callscale.init_templates")),
    ("commands", ("callscale.commands",)),
    ("entry points", ("callscale.cli", "callscale.__main__", "callscale.pytest_plugin")),
)

#: Imports up (from a lower layer to a higher one) the layout allows at most.
ALLOWED_UP = 2

FOLDERS = ("callscale.parsers", "callscale.workloads", "callscale.adapters", "callscale.serve",
           "callscale.commands", "callscale.init_templates")


@dataclass
class Graph:
    modules: list[str]
    edges: dict[tuple[str, str], int] = field(default_factory=dict)
    """(importer, imported) -> import statements."""
    in_functions: int = 0
    statements: int = 0

    def circles(self) -> list[list[str]]:
        """Strongly connected groups of two or more modules (Tarjan), each sorted."""
        succ: dict[str, list[str]] = {m: [] for m in self.modules}
        for a, b in self.edges:
            if a != b:
                succ[a].append(b)
        index: dict[str, int] = {}
        low: dict[str, int] = {}
        stack: list[str] = []
        on: set[str] = set()
        out: list[list[str]] = []
        counter = [0]

        def visit(v: str) -> None:
            index[v] = low[v] = counter[0]
            counter[0] += 1
            stack.append(v)
            on.add(v)
            for w in succ[v]:
                if w not in index:
                    visit(w)
                    low[v] = min(low[v], low[w])
                elif w in on:
                    low[v] = min(low[v], index[w])
            if low[v] == index[v]:
                group = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    group.append(w)
                    if w == v:
                        break
                if len(group) > 1:
                    out.append(sorted(group))

        sys.setrecursionlimit(max(sys.getrecursionlimit(), 10000))
        for m in self.modules:
            if m not in index:
                visit(m)
        return sorted(out, key=len, reverse=True)

    def up(self) -> list[tuple[str, str]]:
        """Imports from a lower layer to a higher one."""
        return sorted((a, b) for a, b in self.edges if layer(a) < layer(b))


def layer(module: str) -> int:
    """The index in :data:`LAYERS` of ``module`` (the longest matching prefix)."""
    best, length = len(LAYERS) - 1, -1
    for i, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if prefix.startswith("="):
                if module == prefix[1:]:
                    return i
                continue
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > length:
                best, length = i, len(prefix)
    return best


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _resolve(name: str, modules: set[str]) -> str | None:
    """The package module ``name`` is, or the longest package module it lies in."""
    while name:
        if name in modules:
            return name
        name = name.rpartition(".")[0]
    return None


def imported_from(node: ast.ImportFrom, package: str) -> str:
    """The absolute module name ``from ... import`` names, read in ``package`` (relative levels resolved)."""
    base = node.module or ""
    if node.level:
        anchor = package.split(".")
        anchor = anchor[:len(anchor) - (node.level - 1)]
        base = ".".join(anchor + ([base] if base else []))
    return base


def build(root: Path = ROOT, folders: bool = False) -> Graph:
    """The graph of the package under ``root`` (``folders``: the folders of :data:`FOLDERS` as one module)."""
    files = sorted((root / PACKAGE).rglob("*.py"))
    names = {module_name(f, root): f for f in files}
    modules = set(names)

    def node(name: str) -> str:
        if folders:
            for folder in FOLDERS:
                if name == folder or name.startswith(folder + "."):
                    return folder
        return name

    graph = Graph(sorted({node(m) for m in modules}))
    for name, path in names.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        functions: set[int] = set()
        for fn in ast.walk(tree):
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                functions.update(id(n) for n in ast.walk(fn) if n is not fn)
        for n in ast.walk(tree):
            targets: list[str] = []
            if isinstance(n, ast.Import):
                targets = [a.name for a in n.names]
            elif isinstance(n, ast.ImportFrom):
                base = imported_from(n, package)
                targets = [f"{base}.{a.name}" for a in n.names] if base else []
            elif (isinstance(n, ast.Call) and getattr(n.func, "attr", getattr(n.func, "id", None)) == "import_module"
                  and n.args and isinstance(n.args[0], ast.Constant) and isinstance(n.args[0].value, str)):
                targets = [n.args[0].value]
            seen = set()
            for target in targets:
                hit = _resolve(target, modules)
                if hit is None or hit == name:
                    continue
                a, b = node(name), node(hit)
                if a == b or (a, b) in seen:
                    continue
                seen.add((a, b))
                graph.edges[(a, b)] = graph.edges.get((a, b), 0) + 1
            if seen:
                graph.statements += 1
                graph.in_functions += id(n) in functions
    return graph


def private_uses(root: Path = ROOT) -> list[str]:
    """``path:line: name`` for each private name (``_x``, not ``__x__``) a package module takes from another:
    ``from callscale.m import _x``, or ``m._x`` where ``m`` was imported as a package module."""
    files = sorted((root / PACKAGE).rglob("*.py"))
    names = {module_name(f, root): f for f in files}
    modules = set(names)
    out = []
    for name, path in names.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        bound: set[str] = set()
        for n in ast.walk(tree):
            if isinstance(n, ast.ImportFrom):
                base = imported_from(n, package)
                if _resolve(base, modules) is None:
                    continue
                for a in n.names:
                    full = f"{base}.{a.name}"
                    if full in modules:
                        bound.add(a.asname or a.name)
                    elif a.name.startswith("_") and not a.name.startswith("__") and base != name:
                        out.append(f"{path.relative_to(root)}:{n.lineno}: {base}.{a.name}")
            elif isinstance(n, ast.Import):
                for a in n.names:
                    if a.name in modules and a.asname:
                        bound.add(a.asname)
        for n in ast.walk(tree):
            if (isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id in bound
                    and n.attr.startswith("_") and not n.attr.startswith("__")):
                out.append(f"{path.relative_to(root)}:{n.lineno}: {n.value.id}.{n.attr}")
    return sorted(set(out))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--folders", action="store_true", help="parsers/, workloads/, adapters/, serve/, commands/ as "
                                                           "one module each")
    args = ap.parse_args(argv)
    g = build(folders=args.folders)
    circles, up = g.circles(), g.up()
    print(f"modules {len(g.modules)}, imports {len(g.edges)} (statements {g.statements}, inside functions "
          f"{g.in_functions}), circles {len(circles)} (modules in circles {sum(map(len, circles))}), imports up "
          f"{len(up)}")
    for i, group in enumerate(circles, 1):
        print(f"circle {i} ({len(group)}): {', '.join(group)}")
    for a, b in up:
        print(f"up: {a} ({LAYERS[layer(a)][0]}) -> {b} ({LAYERS[layer(b)][0]})")
    private = private_uses()
    print(f"private names taken from another module: {len(private)}")
    for line in private:
        print(f"private: {line}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
