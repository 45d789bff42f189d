"""Content kinds: the text a workload writes into its arguments, by kind, as data plus one generator a kind.

A workload that carries argument text (``write_file``, ``many_short_calls``,
``parallel_calls``, ``unclosed_call``, ``literal_closing_tags``) is filled with
a kind when it is named ``WORKLOAD@KIND`` (``write_file@cjk``,
``many_short_calls@mixed``); without ``@KIND`` it is filled with ``code``, as
before. The format's own renderer writes the text (escaping it as the format
does), so the output stays valid and the expected calls stay right.

| kind | the text |
|---|---|
| ``code`` | real Python source from the standard library (the workloads' text before kinds) |
| ``json`` | minified JSON and JavaScript: brace-dense, one long line, no newline |
| ``cjk`` | Chinese, Japanese, Korean and other non-Latin scripts (Cyrillic, Greek, Arabic, Hebrew, Devanagari, Thai) |
| ``emoji`` | emoji and other characters outside the BMP: ZWJ sequences, skin tones, flags, keycaps, mathematical letters, CJK Extension B |
| ``escapes`` | backslashes, both quotes, literal ``\\u`` and ``\\x`` sequences, JSON and regex escapes, control characters |
| ``markup`` | HTML and XML, and every marker of every format and a prefix of each (read from the parser modules' source), except the format's own markers that a value cannot hold |
| ``whitespace`` | tabs, CRLF line ends, long runs of spaces and blank lines, Unicode spaces and line separators |
| ``numbers`` | integers, decimals, exponents, hexadecimal, and base64 blobs |
| ``bidi`` | right-to-left words (Hebrew, Arabic) among left-to-right ones with every bidirectional control character: the marks U+061C, U+200E, U+200F, the embeddings and overrides U+202A-U+202E, the isolates U+2066-U+2069 |
| ``nfd`` | accented Latin, Greek, Cyrillic and Vietnamese words in Unicode NFD: each accent a combining mark after its base letter (``unicodedata.combining(ch) != 0``), two or three stacked on one letter |
| ``mixed`` | stretches of every kind above, one after another |

Every generator is ``(n, seed, fmt) -> str`` giving exactly ``n`` characters
(``fmt`` matters to ``markup`` and ``mixed`` only); the text starts and ends
with a letter or digit, so no format trims a value's edge. Same arguments,
same text.

The format markers of ``markup`` are read from the parser modules' source
text (``ast``, module-level string constants and their concatenations), not
imported, so making a case imports no other format's module (the instruction
meter's counts of one format do not depend on another's module).
"""

from __future__ import annotations

import ast
import base64
import json
import random
import unicodedata
from functools import lru_cache
from pathlib import Path
from typing import Callable

__all__ = ["KINDS", "DEFAULT_KIND", "names", "text", "piece", "split_name", "format_markers"]

DEFAULT_KIND = "code"

#: The separator between a workload and its content kind in a workload name.
KIND_SEPARATOR = "@"

Generator = Callable[[int, int, str], str]

# ----------------------------------------------------------------- data

_CJK = (
    "函数返回一个新的列表，其中包含所有满足条件的元素。",
    "请把配置文件写入磁盘，然后重新启动服务。",
    "東京の天気は晴れ、最高気温は二十三度です。",
    "このファイルはユーザーの設定を保存します。",
    "서울의 날씨는 맑고 기온은 영상 십오 도입니다.",
    "파일을 저장한 뒤 서버를 다시 시작하세요.",
    "Привет, мир! Этот файл хранит настройки пользователя.",
    "Καλημέρα κόσμε· το αρχείο αποθηκεύει τις ρυθμίσεις.",
    "مرحبا بالعالم، هذا الملف يحفظ إعدادات المستخدم.",
    "שלום עולם, הקובץ הזה שומר את ההגדרות.",
    "नमस्ते दुनिया, यह फ़ाइल उपयोगकर्ता की सेटिंग्स सहेजती है।",
    "สวัสดีชาวโลก ไฟล์นี้เก็บการตั้งค่าของผู้ใช้",
    "繁體中文：這個函式會讀取檔案並回傳內容。",
    "全角記号：（括弧）「引用」【注記】、。・",
)

_EMOJI = (
    "👨\u200d👩\u200d👧\u200d👦",  # family: a ZWJ sequence
    "🏳\ufe0f\u200d🌈",  # rainbow flag: variation selector and ZWJ
    "👩🏽\u200d💻",  # skin tone modifier and ZWJ
    "🧑🏿\u200d🚀",
    "🇯🇵🇫🇷🇧🇷",  # regional indicator pairs
    "1\ufe0f\u20e3#\ufe0f\u20e3",  # keycaps
    "😀😂🥲🤖🚀🔥✨🎉",
    "𝔸𝕓𝒞𝓭𝖊",  # mathematical alphanumerics
    "𠀀𠜎𠮷𡃁",  # CJK Extension B
    "𝄞𝄢",  # musical symbols
    "🫠🫡🪿",
    "❤\ufe0f\u200d🔥",
)

_ESCAPES = (
    "C:\\Users\\ana\\new\\table.txt",
    'say "hi" and \'bye\'',
    "\\u00e9\\u4e2d\\ud83d\\ude00",
    "\\x41\\x00\\n\\t\\r\\\\",
    '{"k": "v\\"w", "p": "a\\\\b"}',
    "re.compile(r'\\d+\\.\\d*\\s*[\\\\/]')",
    "ctrl\x01\x02\x1b[31mred\x1b[0m\x7f",
    "bell\x07back\x08form\x0cvt\x0b",
    "nul\x00byte",
    "\\\\\\\"\\'",
    "tab\tcr\rlf\n",
    "\\/\\b\\f",
)

_HTML = (
    '<div class="note" id="n1">Hello &amp; welcome</div>',
    '<?xml version="1.0" encoding="UTF-8"?>',
    "<root><item key=\"a\">1</item><item key='b'/></root>",
    "<![CDATA[ if (a < b && c > d) { } ]]>",
    "<!-- a comment -- with dashes -->",
    '<a href="https://example.com/?q=1&amp;r=2">link</a>',
    "<br/><hr /><img src=x onerror=alert(1)>",
    "<svg:rect width='10'/>",
    "&lt;tag&gt; &#x1F600; &#169; &nbsp;",
    "<script>if (x<y) {z=\"</\"+\"script>\"}</script>",
    "<table><tr><td>a</td><td>b</td></tr></table>",
    "<ns:call xmlns:ns=\"urn:x\">",
)

_WHITESPACE = (
    "\t\tindent\twith\ttabs",
    "line one\r\nline two\r\n",
    " " * 40,
    "\n\n\n\n",
    "trailing   \t \n",
    "\u00a0nbsp\u00a0",
    "\u3000ideographic\u3000space",
    "line\u2028separator\u2029para",
    "\u2003em\u2002en\u2009thin",
    "\r\r\n\t \t",
    "zero\u200bwidth\ufeffbom",
)

_JS = (
    "function f(a,b){return{a:a,b:[b,{c:a+b}],d:function(){return this.a}}}",
    "const o={x:[1,2,[3,[4,{y:{z:[]}}]]],w:{}};",
    "if(a){b({c:d[e]})}else{f([g,{h:i}])}",
    "var m=new Map([[1,{k:'v'}],[2,{k:\"w\"}]]);",
    "(()=>{let s=`${a}{${b}}`;return s})();",
)

#: Bidirectional text: each piece holds right-to-left words and bidirectional control characters.
_BIDI = (
    "\u2067שלום עולם\u2069 means hello",  # a right-to-left isolate
    "\u2066left\u2069 \u2068auto مرحبا\u2069",  # left-to-right and first-strong isolates
    "price\u200e 100\u200f ₪",  # left-to-right and right-to-left marks
    "\u202bהקובץ נשמר\u202c ok",  # a right-to-left embedding and its pop
    "\u202aembedded ltr\u202c",  # a left-to-right embedding
    "user\u202eexe.txt\u202c",  # a right-to-left override (the filename trick)
    "\u202dforced ltr عربي\u202c",  # a left-to-right override
    "رقم\u061c 42",  # the Arabic letter mark
    "if (a\u2067 < \u2069b)",  # an isolate inside code (a "trojan source" layout)
)

#: Words with accents, written NFD below (the base letter, then one to three combining marks).
_ACCENTED = (
    "café", "naïve", "Zürich", "Ångström", "résumé", "crème brûlée", "São Paulo", "Kraków", "Dvořák",
    "Tiếng Việt", "Nguyễn", "phở", "Ελληνικά ἄνθρωπος", "ώρα", "йогурт", "ёлка", "Łódź", "Ærøskøbing", "ǖǘǚǜ",
)


# ----------------------------------------------------------------- helpers


def _fill(n: int, seed: int, label: str, pick: Callable[[random.Random], str], sep: str = " ") -> str:
    """``n`` characters of pieces from ``pick`` (seeded by ``label`` and ``seed``), each followed by ``sep``."""
    rng = random.Random(f"content:{label}:{seed}")
    parts: list[str] = []
    size = 0
    while size < n + 2:
        part = pick(rng)
        parts.append(part)
        size += len(part) + len(sep)
    return _edges("".join(p + sep for p in parts)[:n])


def _edges(text: str) -> str:
    """``text`` with a letter in place of a first or last character that is not a letter or digit."""
    if not text:
        return text
    if not text[0].isalnum():
        text = "a" + text[1:]
    if len(text) > 1 and not text[-1].isalnum():
        text = text[:-1] + "z"
    return text


def _json_value(rng: random.Random, depth: int = 0) -> object:
    roll = rng.random()
    if depth < 4 and roll < 0.35:
        return {f"k{rng.randrange(100)}": _json_value(rng, depth + 1) for _ in range(rng.randint(0, 4))}
    if depth < 4 and roll < 0.6:
        return [_json_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    if roll < 0.75:
        return rng.choice(("a", "b{c}", "[d]", "e:f", ""))
    if roll < 0.9:
        return rng.randint(-999, 999)
    return rng.choice((True, False, None, 1.5e-3))


def _numbers_piece(rng: random.Random) -> str:
    roll = rng.randrange(6)
    if roll == 0:
        return str(rng.randint(-10 ** 12, 10 ** 12))
    if roll == 1:
        return f"{rng.uniform(-1e6, 1e6):.6f}"
    if roll == 2:
        return f"{rng.uniform(1, 10):.3e}"
    if roll == 3:
        return hex(rng.getrandbits(64))
    if roll == 4:
        return ",".join(str(rng.randint(0, 255)) for _ in range(8))
    blob = bytes(rng.getrandbits(8) for _ in range(rng.randint(24, 96)))
    return base64.b64encode(blob).decode("ascii")


# ----------------------------------------------------------------- format markers


def _folder(name: str) -> Path:
    """``callscale/parsers`` or ``callscale/workloads/render``, made when read: a path held from import time
    would put the checkout folder's length into the heap every metered fork starts from (exact counts
    moved by 0.01-0.2% with the folder; tests/meters/test_exact.py)."""
    here = Path(__file__).resolve().parent
    return here.parent / "parsers" if name == "parsers" else here / "render"
_MARKUP_CHARS = set("<>|[]｜`=:.\"")


def _constants(path: Path) -> dict[str, str]:
    """Module-level string constants of a source file: literals, ``+`` of known names and literals, f-strings."""
    values: dict[str, str] = {}

    def value(node: ast.AST) -> str | None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.Name):
            return values.get(node.id)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left, right = value(node.left), value(node.right)
            return None if left is None or right is None else left + right
        if isinstance(node, ast.JoinedStr):
            out = []
            for part in node.values:
                inner = value(part.value) if isinstance(part, ast.FormattedValue) else value(part)
                if inner is None:
                    return None
                out.append(inner)
            return "".join(out)
        return None

    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("callscale.parsers."):
            other = _folder("parsers") / (node.module.rsplit(".", 1)[1] + ".py")
            if other.is_file():
                imported = _constants(other)
                for alias in node.names:
                    if alias.name in imported:
                        values[alias.asname or alias.name] = imported[alias.name]
            continue
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets, rhs = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, rhs = [node.target], node.value
        for target in targets:
            if isinstance(target, ast.Name):
                got = value(rhs)
                if got is not None:
                    values[target.id] = got
    return values


def _is_marker(s: str) -> bool:
    return len(s.strip()) >= 2 and any(c in _MARKUP_CHARS for c in s)


@lru_cache(maxsize=None)
def _module_markers() -> dict[str, tuple[str, ...]]:
    """Each format parser module's markers (``{module: markers}``): the modules the renderers import."""
    modules: list[str] = []
    for path in sorted(_folder("render").glob("*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("callscale.parsers."):
                modules.append(node.module.rsplit(".", 1)[1])
    out = {}
    for module in dict.fromkeys(modules):
        found = _constants(_folder("parsers") / f"{module}.py")
        out[module] = tuple(dict.fromkeys(v for k, v in found.items() if k.isupper() and _is_marker(v)))
    return out


_PRESET: dict[str, tuple[str, ...]] = {}

#: The kinds whose text holds the format markers (:func:`format_markers`).
MARKER_KINDS = ("markup", "mixed")


def needs_markers(workload: str) -> bool:
    """Whether a workload name's kind holds format markers (``write_file@mixed+parts:16``: yes)."""
    kind = split_name(workload.partition("+")[0])[1]
    return kind in MARKER_KINDS


def preset_markers(fmt: str, markers: list[str] | tuple[str, ...]) -> None:
    """Use ``markers`` as :func:`format_markers` of ``fmt`` in this process: what the instruction meter's
    fork does with the markers its caller read (reading every parser module's source under valgrind cost
    seconds a row)."""
    _PRESET[fmt] = tuple(markers)


def format_markers(fmt: str | None = None) -> tuple[str, ...]:
    """The markers a value of format ``fmt`` may hold as text (:func:`_format_markers`; a preset first)."""
    if fmt is not None and fmt in _PRESET:
        return _PRESET[fmt]
    return _format_markers(fmt)


@lru_cache(maxsize=None)
def _format_markers(fmt: str | None = None) -> tuple[str, ...]:
    """The markers a value of format ``fmt`` may hold as text, each followed by a proper prefix of it.

    Every marker of every format's parser module, less those of ``fmt``'s own
    module, its renderer's special tokens and opener (a value cannot hold
    them: they end or open a call), but with its renderer's ``closing_tags``
    (which its parser keeps in a value); for each marker of ``fmt``'s own
    module, a proper prefix of it. ``fmt=None``: every marker of every format.
    """
    per_module = _module_markers()
    everything = [m for markers in per_module.values() for m in markers]
    if fmt is None:
        return tuple(dict.fromkeys(everything))
    from . import render

    r = render.get(fmt)
    own_module = type(r).__module__.rsplit(".", 1)[1]
    own: set[str] = set(r.special_tokens) | {r.opener}
    for module, markers in per_module.items():
        if module == own_module or _imports(own_module, module):
            own.update(markers)
    # a marker that holds one of the format's own tokens cannot be in a value either
    tokens = [t for t in own if t]
    allowed = [m for m in everything if m not in own and not any(t in m or m in t for t in tokens)]
    allowed += [t for t in r.closing_tags if t]
    prefixes = [t[: max(2, len(t) // 2)] for t in sorted(own) if len(t.strip()) >= 4]
    # a prefix that is itself a whole token of the format is no prefix
    prefixes = [p for p in prefixes if p not in own]
    return tuple(dict.fromkeys(allowed + prefixes))


def _imports(renderer_module: str, parser_module: str) -> bool:
    """Whether renderer module ``renderer_module`` imports from parser module ``parser_module``."""
    path = _folder("render") / f"{renderer_module}.py"
    if not path.is_file():
        return False
    return any(isinstance(n, ast.ImportFrom) and n.module == f"callscale.parsers.{parser_module}"
               for n in ast.parse(path.read_text(encoding="utf-8")).body)


# ----------------------------------------------------------------- the generators

_KINDS: dict[str, Generator] = {}


def _kind(name: str) -> Callable[[Generator], Generator]:
    def wrap(fn: Generator) -> Generator:
        _KINDS[name] = fn
        return fn

    return wrap


@_kind("code")
def code(n: int, seed: int = 0, fmt: str = "") -> str:
    """Real Python source (:func:`callscale.workloads.source.source_code`)."""
    from .source import source_code

    return source_code(n, seed)


@_kind("json")
def minified(n: int, seed: int = 0, fmt: str = "") -> str:
    """Minified JSON values and JavaScript statements on one line (no newline)."""
    def pick(rng: random.Random) -> str:
        if rng.random() < 0.3:
            return rng.choice(_JS)
        return json.dumps(_json_value(rng), separators=(",", ":"), ensure_ascii=False)

    return _fill(n, seed, "json", pick, sep="")


@_kind("cjk")
def cjk(n: int, seed: int = 0, fmt: str = "") -> str:
    """Sentences in CJK and other non-Latin scripts."""
    return _fill(n, seed, "cjk", lambda rng: rng.choice(_CJK))


@_kind("emoji")
def emoji(n: int, seed: int = 0, fmt: str = "") -> str:
    """Emoji and astral characters (ZWJ sequences, modifiers, flags, keycaps) between short words."""
    return _fill(n, seed, "emoji", lambda rng: rng.choice(_EMOJI) + rng.choice(("ok", "le", "x", "")))


@_kind("escapes")
def escapes(n: int, seed: int = 0, fmt: str = "") -> str:
    """Backslashes, quotes, literal escape sequences and control characters."""
    return _fill(n, seed, "escapes", lambda rng: rng.choice(_ESCAPES))


@_kind("markup")
def markup(n: int, seed: int = 0, fmt: str = "") -> str:
    """HTML and XML, and the format markers a value of ``fmt`` may hold (:func:`format_markers`)."""
    markers = format_markers(fmt or None)

    def pick(rng: random.Random) -> str:
        if markers and rng.random() < 0.5:
            return rng.choice(markers) + " x"
        return rng.choice(_HTML)

    return _fill(n, seed, "markup", pick)


@_kind("whitespace")
def whitespace(n: int, seed: int = 0, fmt: str = "") -> str:
    """Tabs, CRLF, long runs of spaces and newlines, Unicode spaces, between words."""
    return _fill(n, seed, "whitespace", lambda rng: rng.choice(_WHITESPACE) + rng.choice(("word", "x", "9")))


@_kind("numbers")
def numbers(n: int, seed: int = 0, fmt: str = "") -> str:
    """Numbers of every notation and base64 blobs."""
    return _fill(n, seed, "numbers", _numbers_piece)


@_kind("bidi")
def bidi(n: int, seed: int = 0, fmt: str = "") -> str:
    """Right-to-left and left-to-right words with every bidirectional control character."""
    return _fill(n, seed, "bidi", lambda rng: rng.choice(_BIDI))


@_kind("nfd")
def nfd(n: int, seed: int = 0, fmt: str = "") -> str:
    """Accented words in NFD (combining marks after their base letters)."""
    return _fill(n, seed, "nfd", lambda rng: unicodedata.normalize("NFD", rng.choice(_ACCENTED)))


#: Characters a stretch of ``mixed`` holds: short enough that every kind appears by 4k.
_MIXED_STRETCH = (100, 400)


@_kind("mixed")
def mixed(n: int, seed: int = 0, fmt: str = "") -> str:
    """Stretches of 100-400 characters of every other kind, in turn (each kind in every 10 stretches)."""
    others = [k for k in _KINDS if k != "mixed"]
    rng = random.Random(f"content:mixed:{seed}")
    parts: list[str] = []
    size = i = 0
    while size < n:
        if i % len(others) == 0:
            rng.shuffle(others)
        k = min(rng.randint(*_MIXED_STRETCH), n - size)
        parts.append(_KINDS[others[i % len(others)]](k, seed + i, fmt) + ("\n" if size + k < n else ""))
        size += k + 1
        i += 1
    return _edges("".join(parts)[:n])


#: The kinds by name, in the order of the module docstring.
KINDS: dict[str, Generator] = _KINDS


def names() -> list[str]:
    """The content kind names (``code`` first, ``mixed`` last)."""
    return list(_KINDS)


def get(kind: str) -> Generator:
    """The generator of ``kind``; ``KeyError`` listing the known kinds if none."""
    try:
        return _KINDS[kind]
    except (KeyError, TypeError):
        raise KeyError(f"unknown content kind {kind!r}; known: {', '.join(_KINDS)}") from None


def text(kind: str, n: int, seed: int = 0, fmt: str = "") -> str:
    """Exactly ``n`` characters of ``kind`` for a value of format ``fmt``; ``KeyError`` for an unknown kind."""
    return get(kind)(n, seed, fmt)


def piece(kind: str, rng: random.Random, fmt: str = "", low: int = 8, high: int = 40) -> str:
    """A short value of ``kind`` (``low``..``high`` characters) for one short call's string argument."""
    return text(kind, rng.randint(low, high), rng.randrange(1 << 30), fmt)


def split_name(name: str) -> tuple[str, str | None]:
    """``"write_file@cjk"`` -> ``("write_file", "cjk")``; a name without ``@`` -> ``(name, None)``."""
    base, sep, kind = name.partition(KIND_SEPARATOR)
    return (base, kind) if sep else (name, None)
