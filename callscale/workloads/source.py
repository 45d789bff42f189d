"""Real text to fill argument values and content: Python source and prose from the standard library.

Both generators read a fixed, sorted list of the running Python's own
standard-library modules (located with ``sysconfig.get_paths()["stdlib"]``),
so the text is the same on every machine with the same Python version, and
depends only on ``(n_chars, seed)``:

- :func:`source_code` gives exactly ``n_chars`` characters of source code,
  starting at the start of a line. The modules were chosen so that the text
  has quotes of both kinds, backslashes (escapes in string literals and
  regular expressions), indentation, and non-ASCII characters (``shlex``,
  ``re._casefix``, ``email.message`` ... have them in string literals and
  comments).
- :func:`prose` gives exactly ``n_chars`` characters of plain English text,
  paragraphs of the modules' docstrings, for use as message content.

Neither ever contains a tool-call format's markers. A module whose text
contains one of :data:`SOURCE_FORBIDDEN` (a closing tag ``</``, a special
token bracket ``<|``/``|>``, a full-width bar ``｜``, an opening tag of a
format, a code fence) is left out of the source text, and a docstring
paragraph with any of :data:`PROSE_FORBIDDEN_CHARS` (``<``, ``>``, ``|``,
``｜``, backtick) is left out of the prose. Both are checked when the files
are read, so a different Python version cannot bring a marker in.

File reads and the assembled texts are cached (``functools.lru_cache``): the
first call reads about 550k characters once; after that a 64k-character value is a
slice of a cached string (well under a millisecond).
"""

from __future__ import annotations

import ast
import bisect
import inspect
import random
import re
import sysconfig
from functools import lru_cache
from pathlib import Path

__all__ = [
    "SOURCE_FILES",
    "SOURCE_FORBIDDEN",
    "PROSE_FORBIDDEN_CHARS",
    "source_code",
    "prose",
    "source_corpus",
    "prose_corpus",
]

#: Standard-library modules (paths relative to the stdlib directory), sorted.
#: Non-ASCII text is in email/message.py, encodings/punycode.py, fractions.py,
#: ftplib.py, getopt.py, heapq.py, re/_casefix.py (Greek, Cyrillic), runpy.py,
#: shlex.py (Latin-1 letters), statistics.py. Backslashes are dense in
#: tokenize.py, re/_parser.py, json/encoder.py, csv.py.
SOURCE_FILES: tuple[str, ...] = (
    "base64.py",
    "csv.py",
    "email/_encoded_words.py",
    "email/message.py",
    "encodings/idna.py",
    "encodings/punycode.py",
    "fnmatch.py",
    "fractions.py",
    "ftplib.py",
    "getopt.py",
    "gettext.py",
    "glob.py",
    "heapq.py",
    "json/decoder.py",
    "json/encoder.py",
    "netrc.py",
    "quopri.py",
    "re/_casefix.py",
    "re/_compiler.py",
    "re/_parser.py",
    "runpy.py",
    "shlex.py",
    "shutil.py",
    "statistics.py",
    "string.py",
    "textwrap.py",
    "tokenize.py",
)

#: Substrings that would look like a tool-call format's markup inside a
#: value; a module containing any of them is left out of :func:`source_code`.
SOURCE_FORBIDDEN: tuple[str, ...] = (
    "</", "<|", "|>", "｜", "```",
    "<tool", "<function", "<param", "<arg_", "<invoke", "<minimax", "<start_", "<end_", "<think",
    '"}}',  # Llama 3 JSON's end of a call's arguments (Python 3.13's tokenize.py writes it)
)

#: Characters that no prose paragraph may contain: every format's markers
#: start with ``<`` (or are backtick fences), and ``|``/``｜`` are the bars of
#: special tokens.
PROSE_FORBIDDEN_CHARS: frozenset[str] = frozenset("<>|｜`")

_FORBIDDEN_RE = re.compile("|".join(re.escape(s) for s in SOURCE_FORBIDDEN))


def _stdlib() -> Path:
    return Path(sysconfig.get_paths()["stdlib"])


@lru_cache(maxsize=None)
def _read(relpath: str) -> str | None:
    """The text of one stdlib module, or ``None`` when missing or carrying a forbidden substring."""
    try:
        text = (_stdlib() / relpath).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    if _FORBIDDEN_RE.search(text):
        return None
    return text


@lru_cache(maxsize=1)
def source_corpus() -> str:
    """The source text: the readable modules of :data:`SOURCE_FILES` in order, separated by a blank line.

    Raises ``RuntimeError`` when none of them can be read (a Python installed
    without its ``.py`` sources).
    """
    texts = [t for t in (_read(p) for p in SOURCE_FILES) if t]
    if not texts:
        raise RuntimeError(f"no standard-library source found under {_stdlib()}; workloads need the .py files")
    return "\n\n".join(t.strip("\n") for t in texts) + "\n\n"


@lru_cache(maxsize=1)
def _source_line_starts() -> tuple[int, ...]:
    """Offsets (characters) in :func:`source_corpus` of the lines that are not blank."""
    corpus = source_corpus()
    return tuple(m.start() for m in re.finditer(r"(?m)^(?=[ \t]*\S)", corpus))


def _cyclic_slice(corpus: str, start: int, n: int) -> str:
    """``n`` characters of ``corpus`` from ``start``, wrapping around to its beginning."""
    end = start + n
    if end <= len(corpus):
        return corpus[start:end]
    parts = [corpus[start:]]
    size = len(parts[0])
    while size < n:
        piece = corpus[: n - size]
        parts.append(piece)
        size += len(piece)
    return "".join(parts)


@lru_cache(maxsize=1)
def _non_ascii_offsets() -> tuple[int, ...]:
    """Offsets (characters) of the non-ASCII characters of :func:`source_corpus`, ascending."""
    return tuple(m.start() for m in re.finditer(r"[^\x00-\x7f]", source_corpus()))


#: What a source text should show: both quotes, a backslash, an indented line.
_FEATURES = ('"', "'", "\\", "\n    ")


def _window_features(start: int, n: int) -> tuple[bool, bool]:
    """``(basic, non_ascii)`` for the window ``[start, start + n)`` of the source corpus.

    ``basic``: it has every one of :data:`_FEATURES`; ``non_ascii``: it has a
    non-ASCII character. Found without copying the window (unless it wraps).
    """
    corpus = source_corpus()
    end = start + n
    if end > len(corpus):  # wraps around: check a copy (only for very long texts)
        text = _cyclic_slice(corpus, start, n)
        return all(s in text for s in _FEATURES), not text.isascii()
    basic = all(corpus.find(s, start, end) != -1 for s in _FEATURES)
    offsets = _non_ascii_offsets()
    i = bisect.bisect_left(offsets, start)
    return basic, i < len(offsets) and offsets[i] < end


#: How many seeded start lines :func:`source_code` tries to find a window with
#: every feature (quotes, backslash, indentation, non-ASCII).
_TRIES = 256


def source_code(n_chars: int, seed: int = 0) -> str:
    """Exactly ``n_chars`` characters of real Python source (stdlib), deterministic for ``seed``.

    The text starts at the start of a non-blank line chosen by ``seed``. Of
    up to 256 seeded start lines, the first whose text has quotes (``"`` and
    ``'``), a backslash, an indented line and a non-ASCII character is
    taken; failing that, the first with all but non-ASCII; failing that, the
    first. At 4,000 characters and above the text practically always has all
    four. Longer than the corpus (about 550k characters), the text wraps
    around to the corpus's start.

    Raises ``ValueError`` for a negative ``n_chars``.
    """
    if n_chars < 0:
        raise ValueError(f"n_chars must be >= 0, got {n_chars}")
    if n_chars == 0:
        return ""
    starts = _source_line_starts()
    rng = random.Random(f"source:{seed}")
    first = best = fallback = None
    for _ in range(_TRIES):
        start = starts[rng.randrange(len(starts))]
        if first is None:
            first = start
        basic, non_ascii = _window_features(start, n_chars)
        if basic and non_ascii:
            best = start
            break
        if basic and fallback is None:
            fallback = start
    chosen = best if best is not None else fallback if fallback is not None else first
    return _cyclic_slice(source_corpus(), chosen, n_chars)


# ----------------------------------------------------------------- prose

_WORD = re.compile(r"[^\W\d_]{2,}")


def _prose_paragraphs(source: str) -> list[str]:
    """The plain-text paragraphs of a module's docstrings, each on one line."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    out: list[str] = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        doc = ast.get_docstring(node, clean=False)
        if not doc:
            continue
        for block in re.split(r"\n[ \t]*\n", inspect.cleandoc(doc)):
            lines = block.split("\n")
            # indented lines are code examples, tables or argument lists
            if any(line[:1].isspace() for line in lines):
                continue
            para = " ".join(line.strip() for line in lines)
            if _is_prose(para):
                out.append(para)
    return out


def _is_prose(para: str) -> bool:
    if len(para) < 60 or not para[0].isupper() or not para.endswith("."):
        return False
    if PROSE_FORBIDDEN_CHARS.intersection(para):
        return False
    if any(ord(c) < 32 for c in para):
        return False
    letters = sum(c.isalpha() or c == " " for c in para)
    # mostly words, not code: few symbols, several words
    return letters >= 0.85 * len(para) and len(_WORD.findall(para)) >= 8


@lru_cache(maxsize=1)
def prose_corpus() -> tuple[str, ...]:
    """The prose paragraphs, in module order then document order, duplicates dropped.

    Raises ``RuntimeError`` when no paragraph could be read.
    """
    seen: dict[str, None] = {}
    for relpath in SOURCE_FILES:
        text = _read(relpath)
        if text:
            for para in _prose_paragraphs(text):
                seen.setdefault(para, None)
    if not seen:
        raise RuntimeError(f"no standard-library docstrings found under {_stdlib()}")
    return tuple(seen)


@lru_cache(maxsize=1)
def _prose_text() -> tuple[str, tuple[int, ...]]:
    """All paragraphs joined by blank lines, and each paragraph's start offset."""
    paras = prose_corpus()
    starts, pos = [], 0
    for para in paras:
        starts.append(pos)
        pos += len(para) + 2
    return "\n\n".join(paras) + "\n\n", tuple(starts)


def prose(n_chars: int, seed: int = 0) -> str:
    """Exactly ``n_chars`` characters of plain English prose (stdlib docstrings), deterministic for ``seed``.

    Paragraphs are separated by a blank line (``"\\n\\n"``); the text starts
    at the start of a paragraph chosen by ``seed`` and never starts or ends
    with whitespace (a last whitespace character becomes ``"."``). It never
    contains ``<``, ``>``, ``|``, ``｜`` or a backtick, so no format's marker
    can appear in it. Raises ``ValueError`` for a negative ``n_chars``.
    """
    if n_chars < 0:
        raise ValueError(f"n_chars must be >= 0, got {n_chars}")
    if n_chars == 0:
        return ""
    text, starts = _prose_text()
    rng = random.Random(f"prose:{seed}")
    start = starts[rng.randrange(len(starts))]
    out = _cyclic_slice(text, start, n_chars)
    if out[-1].isspace():
        out = out[:-1] + "."
    return out

