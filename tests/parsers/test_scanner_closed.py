"""The scanner and the JSON lexer are closed: no code outside them reads or writes their private fields.

An AST scan over every module of ``callscale/`` (parsers and harness):

- outside ``parsers/scanner.py`` no attribute access (read, write, ``del``, or ``getattr``/``setattr``/
  ``hasattr`` with a literal name) whose name is a private attribute of ``MarkerScanner`` or ``Markers``
  (their ``__init__``'s ``self._x`` assignments, ``__slots__``, and ``_``-methods), on anything but ``self``
  (a class's own field of the same name is its own: glm's value buffer ``self._buf``);
- outside the bodies of the JSON lexer's classes in ``parsers/jsonscan.py`` (``JsonTracker``,
  ``JsonValidator``, ``JsonCallLexer``, ``RawArguments``) no such access to one of their private
  attributes, on anything but ``self``.

So ``sc = self.scanner; sc._pos -= 1`` and ``self._lexer._capture`` are offences; a step reads the
scanner through its methods (``callscale/parsers/README.md``, "Reading"). The names are collected from the
classes themselves, so a new private field is covered when it is added.
"""

from __future__ import annotations

import ast
from pathlib import Path

import callscale

ROOT = Path(callscale.__file__).resolve().parent
SCANNER = ROOT / "parsers" / "scanner.py"
JSONSCAN = ROOT / "parsers" / "jsonscan.py"
SCANNER_CLASSES = ("MarkerScanner", "Markers")
LEXER_CLASSES = ("JsonTracker", "JsonValidator", "JsonCallLexer", "RawArguments")
_ATTR_CALLS = ("getattr", "setattr", "hasattr", "delattr")


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def private_names(path: Path, classes: tuple[str, ...]) -> set[str]:
    """The private attribute names of ``classes`` in the module at ``path``.

    A class's ``__slots__`` entries, its ``_``-methods and class attributes, and the ``self._x`` its
    ``__init__`` assigns; dunder names are not private fields.
    """
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in tree.body:
        if not (isinstance(node, ast.ClassDef) and node.name in classes):
            continue
        for item in node.body:
            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                names.add(item.name)
                if item.name == "__init__":
                    for sub in ast.walk(item):
                        if (isinstance(sub, ast.Attribute) and isinstance(sub.ctx, ast.Store)
                                and isinstance(sub.value, ast.Name) and sub.value.id == "self"):
                            names.add(sub.attr)
            elif isinstance(item, (ast.Assign, ast.AnnAssign)):
                targets = item.targets if isinstance(item, ast.Assign) else [item.target]
                for t in targets:
                    if isinstance(t, ast.Name):
                        names.add(t.id)
                        if t.id == "__slots__" and item.value is not None:
                            for elt in ast.walk(item.value):
                                if isinstance(elt, ast.Constant) and isinstance(elt.value, str):
                                    names.add(elt.value)
    return {n for n in names if _is_private(n)}


class _Offences(ast.NodeVisitor):
    """Collects ``(line, what)`` for each access to one of ``closed``'s names outside the exempt classes."""

    def __init__(self, closed: dict[str, tuple[str, ...]], exempt_classes: dict[str, tuple[str, ...]]):
        self.closed = closed              # {private name: the closed layers it belongs to}
        self.exempt_classes = exempt_classes  # {layer: class names whose bodies may use its names}
        self.classes: list[str] = []
        self.found: list[tuple[int, str]] = []

    def _check(self, node: ast.AST, obj: ast.AST, name: str) -> None:
        layers = self.closed.get(name)
        if not layers:
            return
        if isinstance(obj, ast.Name) and obj.id == "self":
            return  # a class's own field (or, in an exempt class, the layer's)
        for layer in layers:
            for c in self.classes:
                if c in self.exempt_classes.get(layer, ()):
                    return
        self.found.append((node.lineno, f"{ast.unparse(obj)}.{name} ({' / '.join(layers)})"))

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.classes.append(node.name)
        self.generic_visit(node)
        self.classes.pop()

    def visit_Attribute(self, node: ast.Attribute) -> None:
        self._check(node, node.value, node.attr)
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        if (isinstance(node.func, ast.Name) and node.func.id in _ATTR_CALLS and len(node.args) >= 2
                and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str)):
            self._check(node, node.args[0], node.args[1].value)
        self.generic_visit(node)


def closed_names() -> dict[str, tuple[str, ...]]:
    """``{private name: its layers}`` for the scanner's and the JSON lexer's classes (read from their source)."""
    names: dict[str, tuple[str, ...]] = {}
    for layer, path, classes in (("scanner", SCANNER, SCANNER_CLASSES), ("json lexer", JSONSCAN, LEXER_CLASSES)):
        for n in private_names(path, classes):
            names[n] = names.get(n, ()) + (layer,)
    return names


def offences(source: str, filename: str, closed: dict[str, tuple[str, ...]] | None = None) -> list[str]:
    """``file:line: what`` for every access in ``source`` to a closed layer's private field from outside it.

    ``filename`` names the module (``callscale/parsers/scanner.py`` itself is the scanner's inside; in
    ``callscale/parsers/jsonscan.py`` the lexer's class bodies are the lexer's inside).
    """
    closed = closed_names() if closed is None else closed
    path = filename.replace("\\", "/")
    if path.endswith("callscale/parsers/scanner.py"):
        closed = {n: tuple(x for x in layers if x != "scanner") for n, layers in closed.items()}
    exempt = {"json lexer": LEXER_CLASSES} if path.endswith("callscale/parsers/jsonscan.py") else {}
    visitor = _Offences(closed, exempt)
    visitor.visit(ast.parse(source, filename))
    return [f"{filename}:{line}: {what}" for line, what in visitor.found]


def test_the_closed_layers_private_names_are_read_from_their_classes():
    names = closed_names()
    for n in ("_buf", "_pos", "_mark", "_kept", "_holdback_start", "_scan", "_regex"):
        assert "scanner" in names[n], n
    for n in ("_capture", "_cap_start", "_pause", "_hex_left", "_stack", "_mode", "_held"):
        assert "json lexer" in names[n], n
    assert "feed" not in names and "__init__" not in names and "__slots__" not in names


def test_no_module_of_callscale_reads_the_scanner_or_the_json_lexer_from_outside():
    closed = closed_names()
    found: list[str] = []
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT.parent).as_posix()
        found += offences(path.read_text(encoding="utf-8"), rel, closed)
    assert not found, f"{len(found)} private reads of the scanner / JSON lexer:\n" + "\n".join(found)


PLANTED = '''\
class P:
    def _s_step(self, final):
        sc = self.scanner
        sc._pos -= 1
        buf = self.scanner._buf
        self._buf = []  # P's own field: allowed
        if self._lexer._capture == "arguments":
            getattr(sc, "_mark")
        return buf


class JsonValidator:
    def scan(self, other):
        return other._stack
'''


def test_the_scan_names_each_planted_offence_by_file_and_line():
    assert offences(PLANTED, "callscale/parsers/planted.py") == [
        "callscale/parsers/planted.py:4: sc._pos (scanner)",
        "callscale/parsers/planted.py:5: self.scanner._buf (scanner)",
        "callscale/parsers/planted.py:7: self._lexer._capture (json lexer)",
        "callscale/parsers/planted.py:8: sc._mark (scanner)",
        "callscale/parsers/planted.py:14: other._stack (json lexer)",  # a JsonValidator outside jsonscan.py
    ]
    # inside: the scanner's module reads its own fields; jsonscan's lexer classes read each other's
    assert offences(PLANTED, "callscale/parsers/scanner.py") == [
        "callscale/parsers/scanner.py:7: self._lexer._capture (json lexer)",
        "callscale/parsers/scanner.py:14: other._stack (json lexer)",
    ]
    assert offences(PLANTED, "callscale/parsers/jsonscan.py") == [
        "callscale/parsers/jsonscan.py:4: sc._pos (scanner)",
        "callscale/parsers/jsonscan.py:5: self.scanner._buf (scanner)",
        "callscale/parsers/jsonscan.py:7: self._lexer._capture (json lexer)",
        "callscale/parsers/jsonscan.py:8: sc._mark (scanner)",
    ]
