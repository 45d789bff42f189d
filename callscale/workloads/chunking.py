"""Chunkings: the ways a server may split model output into deltas.

A chunking spec is a string:

| spec | deltas |
|---|---|
| ``whole`` | the whole text in one delta |
| ``detect`` | no streaming: the whole text to the parser's ``detect_and_parse(text, tools)`` once (the non-streaming path, an engine's ``extract_tool_calls``), measured as a cost of its own (:func:`drive`) |
| ``char`` | one character per delta |
| ``fixed:K`` | K characters per delta (the last may be shorter) |
| ``random:SEED:MAX`` | seeded random sizes from 1 to MAX characters, splitting anywhere, also inside special tokens |
| ``tokens:K`` | K characters per delta, but a special token is never split: it is one token of the model's vocabulary, and a detokenizer emits it whole (the default, ``tokens:4``); each special token is a delta of its own |
| ``tokens-random:SEED:MAX`` | seeded random sizes from 1 to MAX characters, never splitting a special token: a cut that would fall inside one moves to its end, so a special token may share a delta with the text around it (as a detokenizer that emits several tokens at once does) |
| ``alternate:K1/K2/...`` | deltas of K1, K2, ... characters in turn, the sizes cycling (``alternate:1/50``: 1, 50, 1, 50 ...; ``alternate:1/50/1/50/512``: alternations with a 512-character bundle each cycle), a cut inside a special token moved to its end (as ``tokens-random``): a server whose deltas change size from step to step (a detokenizer catching up after a multi-byte character, speculative decoding accepting a run of drafted tokens, then one) |
| ``parts:N`` | N deltas of about equal size (``len(text) / N`` characters each, so a delta grows with the text), a cut inside a special token moved to its end: what a server that hands over many tokens at once does at scale (speculative decoding, ``stream_interval``), and the delivery under which a parser whose cost per delta grows faster than the delta's size is quadratic (one ``whole`` delta is ``parts:1``) |
| ``model`` | the model's own tokens, one per delta, as an engine's detokenizer emits them (a token ending inside a UTF-8 character waits for the next); each delta carries its token ids (:class:`callscale.tokenizers.Piece`). The format's real tokenizer where installed (:mod:`callscale.tokenizers`), else the stand-in split below |
| ``model-random:SEED:K`` | the same tokens, seeded random 1 to K of them per delta (an engine that emits several tokens a step) |

The ``model`` stand-in (no real tokenizer for the format, or its package not
installed): each of the format's special tokens is a token, and other text
is cut as a byte-level BPE pre-tokenizer cuts it (a word with its leading
space, up to three digits, a run of punctuation, a run of whitespace); it
carries no token ids. :func:`callscale.tokenizers.describe` names which
one a format gets.

All sizes are in characters (``model``: tokens). ``"".join(chunk(text, spec)) == text`` always.
The splits a detokenizer can make are ``whole``, ``tokens:K`` and
``tokens-random``; ``char``, ``fixed:K`` and ``random`` also split inside
special tokens (a stricter test of a parser, which ours pass too).
"""

from __future__ import annotations

import itertools
import random
import re
from dataclasses import dataclass
from typing import Iterator, Sequence

from ..streaming import DetectAndParse

__all__ = ["Chunking", "parse_chunking", "chunk", "drive", "DETECT", "DEFAULT_CHUNKING", "CHECK_CHUNKINGS", "INSIDE_TOKEN_CHUNKINGS",
           "STRICT_CHECK_CHUNKINGS", "MODEL_CHUNKINGS", "model_check_chunkings"]

DEFAULT_CHUNKING = "tokens:4"
#: Sizes in turn: ``alternate:1/50`` (:class:`Chunking`), the sizes separated by :data:`SIZE_SEPARATOR`
#: (not a comma: a workload name holds a delivery, and a list of workloads is comma-separated).
ALTERNATE = "alternate"
SIZE_SEPARATOR = "/"
#: The most sizes an ``alternate`` spec holds.
MAX_ALTERNATE_SIZES = 64

#: The chunking of the non-streaming path: one call of ``detect_and_parse`` (:func:`drive`).
DETECT = "detect"

#: The chunkings ``callscale check`` streams every case under by default, the
#: splits a detokenizer can make: whole, 1, 2, 3 and 7 characters per delta
#: and 20 seeded random splits of 1-8 characters, none splitting a special token.
CHECK_CHUNKINGS = ("whole", "tokens:1", "tokens:2", "tokens:3", "tokens:7") + tuple(
    f"tokens-random:{seed}:8" for seed in range(20)
)

#: Splits inside special tokens too: one character, 2, 3, 4 and 7 characters
#: per delta, and 20 seeded random splits of 1-8 characters. A server never
#: makes them; a parser that passes them is split-proof at any boundary.
INSIDE_TOKEN_CHUNKINGS = ("char", "fixed:2", "fixed:3", "fixed:4", "fixed:7") + tuple(
    f"random:{seed}:8" for seed in range(20)
)

#: ``callscale check --strict``: both sets.
STRICT_CHECK_CHUNKINGS = CHECK_CHUNKINGS + INSIDE_TOKEN_CHUNKINGS

#: The model's tokens: one a delta, and 5 seeded random splits of 1-4 tokens a delta.
MODEL_CHUNKINGS = ("model",) + tuple(f"model-random:{seed}:4" for seed in range(5))


def model_check_chunkings(formats: Sequence[str]) -> tuple[list[str], str]:
    """The ``model`` chunkings ``callscale check`` adds to its defaults for ``formats``, and a one-line note.

    :data:`MODEL_CHUNKINGS` when a real tokenizer is installed for one of
    ``formats`` (the others get the stand-in split), else none: the note
    then says the ``model`` chunking was skipped and how to install the
    tokenizers.
    """
    from callscale import tokenizers

    named = {fmt: tokenizers.describe(fmt) for fmt in dict.fromkeys(formats)}
    if not any(tokenizers.available(fmt) for fmt in named):
        return [], f"note: the model chunking is skipped: no real tokenizer installed ({tokenizers.MISSING_NOTE})"
    return list(MODEL_CHUNKINGS), "note: model chunking tokenizers: " + ", ".join(
        f"{fmt} {name}" for fmt, name in named.items())


@dataclass(frozen=True)
class Chunking:
    """A parsed chunking spec: ``kind`` in whole/char/fixed/random/tokens/tokens-random/alternate/parts/model/model-random,
    ``size`` (characters; tokens for the model kinds; the number of deltas for ``parts``), ``seed``."""

    kind: str
    size: int = 1
    seed: int = 0
    #: ``alternate``: the sizes in turn (characters); ``size`` is then the largest.
    sizes: tuple[int, ...] = ()

    def __str__(self) -> str:
        if self.kind in ("whole", "char", "model", "detect"):
            return self.kind
        if self.kind == ALTERNATE:
            return f"{self.kind}:" + SIZE_SEPARATOR.join(map(str, self.sizes))
        if self.kind in ("random", "tokens-random", "model-random"):
            return f"{self.kind}:{self.seed}:{self.size}"
        return f"{self.kind}:{self.size}"

    def split(self, text: str, special_tokens: Sequence[str] = (), fmt: str | None = None) -> list[str]:
        """Split ``text`` into deltas; ``special_tokens`` matter for the ``tokens`` and model stand-in kinds,
        ``fmt`` (the format, for its tokenizer) for the ``model`` kinds only."""
        if not text:
            return []
        if self.kind in ("model", "model-random"):
            pieces = _model_pieces(text, special_tokens, fmt)
            return pieces if self.kind == "model" else _group(pieces, self.size, self.seed)
        if self.kind in ("whole", "detect"):
            return [text]
        if self.kind in ("char", "fixed"):
            k = self.size
            return [text[i:i + k] for i in range(0, len(text), k)]
        if self.kind == "random":
            rng = random.Random(self.seed)
            out, i = [], 0
            while i < len(text):
                k = rng.randint(1, self.size)
                out.append(text[i:i + k])
                i += k
            return out
        if self.kind == "tokens-random":
            rng = random.Random(self.seed)
            return _token_cuts(text, iter(lambda: rng.randint(1, self.size), None), special_tokens)
        if self.kind == ALTERNATE:
            return _token_cuts(text, itertools.cycle(self.sizes), special_tokens)
        if self.kind == "parts":
            return _parts(text, self.size, special_tokens)
        return _token_split(text, self.size, special_tokens)


#: A byte-level BPE pre-tokenizer's cuts (a letter word with its leading space or punctuation
#: mark, up to three digits, a run of other symbols, line breaks, spaces), in ``re`` syntax.
_PRETOKEN = re.compile(r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\w]?[^\W\d_]+|\d{1,3}| ?[^\s\w]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+|_+""")


def _model_pieces(text: str, special_tokens: Sequence[str], fmt: str | None) -> list[str]:
    """The model's tokens of ``text`` (real tokenizer of ``fmt``), else the stand-in split (module docstring)."""
    from callscale import tokenizers

    tok = tokenizers.get(fmt) if fmt else None
    if tok is not None:
        return list(tok.pieces(text))
    pattern = _token_pattern(special_tokens)
    out: list[str] = []
    pos = 0
    hits = list(pattern.finditer(text)) if pattern is not None else []
    for hit in hits + [None]:
        end = hit.start() if hit is not None else len(text)
        out.extend(m.group() for m in _PRETOKEN.finditer(text, pos, end))
        if hit is not None:
            out.append(hit.group())
            pos = hit.end()
    return out


def _group(pieces: list[str], size: int, seed: int) -> list[str]:
    """Seeded random runs of 1..``size`` pieces joined into one delta each (token ids joined too)."""
    from callscale.tokenizers import Piece

    rng = random.Random(seed)
    out: list[str] = []
    i = 0
    while i < len(pieces):
        run = pieces[i:i + rng.randint(1, size)]
        ids = [t for p in run for t in getattr(p, "token_ids", ())]
        joined = "".join(run)
        out.append(Piece(joined, ids) if ids else joined)
        i += len(run)
    return out


def _token_pattern(special_tokens: Sequence[str]) -> re.Pattern[str] | None:
    """A pattern matching any special token, the longest first; ``None`` when there are none."""
    specials = sorted({t for t in special_tokens if t}, key=len, reverse=True)
    return re.compile("|".join(re.escape(t) for t in specials)) if specials else None


def _token_cuts(text: str, sizes: Iterator[int], special_tokens: Sequence[str]) -> list[str]:
    """Deltas of the ``sizes`` in turn (characters); a cut inside a special token moves to the token's end."""
    pattern = _token_pattern(special_tokens)
    spans = [hit.span() for hit in pattern.finditer(text)] if pattern is not None else []
    out: list[str] = []
    i = j = 0
    while i < len(text):
        end = i + next(sizes)
        while j < len(spans) and spans[j][1] <= end:
            j += 1
        if j < len(spans) and spans[j][0] < end:  # the cut falls inside a special token
            end = spans[j][1]
            j += 1
        out.append(text[i:end])
        i = end
    return out


def _parts(text: str, n: int, special_tokens: Sequence[str]) -> list[str]:
    """``n`` deltas of about ``len(text) / n`` characters (fewer when the text is shorter), a cut inside
    a special token moved to the token's end."""
    pattern = _token_pattern(special_tokens)
    spans = [hit.span() for hit in pattern.finditer(text)] if pattern is not None else []
    out: list[str] = []
    start = j = 0
    for i in range(1, n + 1):
        end = round(i * len(text) / n)
        while j < len(spans) and spans[j][1] <= end:
            j += 1
        if j < len(spans) and spans[j][0] < end:
            end = spans[j][1]
        if end > start:
            out.append(text[start:end])
            start = end
    return out


def _token_split(text: str, k: int, special_tokens: Sequence[str]) -> list[str]:
    """K characters per delta, each special token a delta (part of one) of its own size."""
    pattern = _token_pattern(special_tokens)
    if pattern is None:
        return [text[i:i + k] for i in range(0, len(text), k)]
    out: list[str] = []
    pos = 0
    for hit in pattern.finditer(text):
        out.extend(text[i:min(i + k, hit.start())] for i in range(pos, hit.start(), k))
        out.append(hit.group())
        pos = hit.end()
    out.extend(text[i:i + k] for i in range(pos, len(text), k))
    return out


_SPEC = re.compile(r"^(whole|detect|char|model|fixed:(\d+)|tokens:(\d+)|parts:(\d+)|(tokens-random|random|model-random):(\d+):(\d+)"
                   r"|alternate:(\d+(?:/\d+)*))$")


def parse_chunking(spec: str) -> Chunking:
    """Parse a chunking spec (see the module docstring).

    Raises ``ValueError`` with a one-line message for anything else, or a
    size below 1.
    """
    hit = _SPEC.match(spec.strip()) if isinstance(spec, str) else None
    if hit is None:
        raise ValueError(
            f"bad chunking {spec!r}: expected whole, detect, char, fixed:K, tokens:K, parts:N, random:SEED:MAX, tokens-random:SEED:MAX, "
            "alternate:K1/K2/..., model or model-random:SEED:K"
        )
    body = hit.group(1)
    if body in ("whole", "detect", "char", "model"):
        return Chunking(body)
    if hit.group(2) is not None:
        chunking = Chunking("fixed", int(hit.group(2)))
    elif hit.group(3) is not None:
        chunking = Chunking("tokens", int(hit.group(3)))
    elif hit.group(4) is not None:
        chunking = Chunking("parts", int(hit.group(4)))
    elif hit.group(8) is not None:
        sizes = tuple(int(k) for k in hit.group(8).split(SIZE_SEPARATOR))
        if len(sizes) > MAX_ALTERNATE_SIZES:
            raise ValueError(f"bad chunking {spec!r}: at most {MAX_ALTERNATE_SIZES} sizes")
        chunking = Chunking(ALTERNATE, max(sizes), sizes=sizes)
        if min(sizes) < 1:
            raise ValueError(f"bad chunking {spec!r}: every size must be at least 1")
    else:
        chunking = Chunking(hit.group(5), int(hit.group(7)), int(hit.group(6)))
    if chunking.size < 1:
        raise ValueError(f"bad chunking {spec!r}: the size must be at least 1")
    return chunking


def chunk(text: str, spec: str | Chunking = DEFAULT_CHUNKING, special_tokens: Sequence[str] = (),
          fmt: str | None = None) -> list[str]:
    """Split ``text`` into deltas by a chunking spec; see :func:`parse_chunking`. ``fmt``: the format
    whose tokenizer the ``model`` kinds use (without it they use the stand-in split)."""
    chunking = spec if isinstance(spec, Chunking) else parse_chunking(spec)
    return chunking.split(text, special_tokens, fmt)


def drive(factory, chunking):
    """The factory to stream a case's deltas through under ``chunking`` (a spec or :class:`Chunking`).

    ``factory`` itself, except under ``detect``: then a factory of parsers whose one increment calls
    ``detect_and_parse`` (the measured cost is the non-streaming path's). Raises ``ValueError`` for a
    bad spec.
    """
    kind = chunking.kind if isinstance(chunking, Chunking) else parse_chunking(str(chunking)).kind
    if kind != DETECT:
        return factory

    def detecting():
        return DetectAndParse(factory())

    detecting.name = getattr(factory, "name", None) or getattr(factory, "__name__", "parser")
    return detecting
