"""A differential flame graph: what a change added to a parser's profile, from two collapsed-stack files.

    >>> base, head = flamediff.read("base.folded"), flamediff.read("head.folded")
    >>> flamediff.write_diff(base, head, "diff.folded")          # flamegraph.pl's difffolded lines
    >>> flamediff.svg(base, head, "diff.svg", "qwen3 on write_file")
    >>> flamediff.frames(base, head)[:10]                         # the frames that grew most

A collapsed-stack file (py-spy's ``raw`` format, Brendan Gregg's
``stackcollapse`` output) holds one line per distinct stack: frames from the
root joined by ``;``, a space, the sample count. Frames are matched between
the two sides by name with the line number dropped (``f (mod.py:12)`` and
``f (mod.py:14)`` are one frame: an edit above a function moves its line).

The two sides sample different amounts of work (the profile child streams
the case again and again for a fixed time), so each side's counts are read
as shares of its own total, as ``difffolded.pl -n`` does: the diff says how
the share of each frame changed. The SVG draws the head's profile (widths:
its samples) and colours each frame by its change: red where its share grew
(the change added work there), blue where it shrank, the deeper the larger
the change; each frame's tooltip gives both shares.

Both the differential graph and a plain profile's (:func:`svg` with no base) start at the parser: the
stacks are cut at the profile child's streaming loop (:data:`STREAM`, whose children are the parser's
``parse_streaming_increment`` and ``finish``), and the samples outside it (the interpreter's start-up,
imports, building the case, the watchdog) are one frame, :data:`OUTSIDE`, at the right. The graph hangs
from the top (an icicle): the root, then the streaming loop, then the parser's frames, within the first
screen; siblings are ordered by how much their share grew (the plain graph: by share), and the title and
the line under it say which frames grew, by how many points of the samples.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

__all__ = ["read", "parse", "normalize_frame", "write_diff", "Frame", "frames", "svg", "STREAM", "OUTSIDE",
           "from_streaming", "grown", "headline"]

STREAM = re.compile(r"^_stream \((?:.*/)?callscale/_child\.py(?::\d+)?\)$")
"""The profile child's streaming loop (:func:`callscale._child._stream`, frame name without its line):
where the drawn stacks start."""
OUTSIDE = "outside the streaming: start-up, imports, building the case, the harness"
"""The one frame the samples outside :data:`STREAM` are folded into."""

_LINE = re.compile(r"^(?P<stack>.*\S)\s+(?P<count>\d+)\s*$")
_FRAME_LINE = re.compile(r"(\(.*?):\d+\)$")


def normalize_frame(frame: str) -> str:
    """``f (mod.py:12)`` -> ``f (mod.py)``: a frame's name without its line number."""
    return _FRAME_LINE.sub(r"\1)", frame.strip())


def parse(text: str, keep_lines: bool = False) -> dict[str, int]:
    """Collapsed stacks (``a;b;c 12`` per line) -> ``{stack: samples}``, frames without line numbers (unless
    ``keep_lines``: one profile drawn alone), counts of stacks that become equal added. Lines that are not
    ``STACK COUNT`` are skipped."""
    out: dict[str, int] = {}
    for line in text.splitlines():
        m = _LINE.match(line)
        if not m:
            continue
        stack = ";".join(f.strip() if keep_lines else normalize_frame(f) for f in m.group("stack").split(";"))
        out[stack] = out.get(stack, 0) + int(m.group("count"))
    return out


def read(path: Path | str, keep_lines: bool = False) -> dict[str, int]:
    """:func:`parse` of a file. Raises ``OSError``, or ``ValueError`` when it holds no stack."""
    stacks = parse(Path(path).read_text(encoding="utf-8", errors="replace"), keep_lines)
    if not stacks:
        raise ValueError(f"{path} holds no collapsed stacks (lines `frame;frame;... COUNT`)")
    return stacks


def _share(stacks: Mapping[str, int]) -> dict[str, float]:
    total = sum(stacks.values()) or 1
    return {k: v / total for k, v in stacks.items()}


def write_diff(base: Mapping[str, int], head: Mapping[str, int], path: Path | str) -> Path:
    """Write ``STACK BASE HEAD`` per stack (flamegraph.pl's difffolded format; ``flamegraph.pl`` and
    ``inferno-flamegraph`` draw it), the base's counts scaled to the head's total. Returns the path."""
    scale = sum(head.values()) / (sum(base.values()) or 1)
    lines = [f"{stack} {round(base.get(stack, 0) * scale)} {head.get(stack, 0)}"
             for stack in sorted(set(base) | set(head))]
    path = Path(path)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@dataclass
class Frame:
    """One function in both profiles: its inclusive share of samples (0-1) in each, and the change."""

    name: str
    base: float
    head: float

    @property
    def change(self) -> float:
        return self.head - self.base


def _inclusive(stacks: Mapping[str, int]) -> dict[str, float]:
    """Each function's inclusive share: the share of samples whose stack holds it (counted once per stack)."""
    out: dict[str, float] = {}
    for stack, share in _share(stacks).items():
        for name in set(stack.split(";")):
            out[name] = out.get(name, 0.0) + share
    return out


def frames(base: Mapping[str, int], head: Mapping[str, int]) -> list[Frame]:
    """Every function of either side, the one whose share grew most first."""
    a, b = _inclusive(base), _inclusive(head)
    found = [Frame(name, a.get(name, 0.0), b.get(name, 0.0)) for name in set(a) | set(b)]
    return sorted(found, key=lambda f: (-f.change, f.name))


def from_streaming(stacks: Mapping[str, int]) -> dict[str, int]:
    """``stacks`` cut to start at :data:`STREAM` (the frames above it, the interpreter's and the child's
    own, left out), the stacks that do not reach it folded into the one frame :data:`OUTSIDE`. The
    counts are kept, so shares stay shares of every sample. Stacks without the loop at all (a profile
    of something else) are returned as they are."""
    out: dict[str, int] = {}
    found = False
    for stack, count in stacks.items():
        names = stack.split(";")
        at = next((i for i, name in enumerate(names) if STREAM.match(name)), None)
        found = found or at is not None
        key = OUTSIDE if at is None else ";".join(names[at:])
        out[key] = out.get(key, 0) + count
    return out if found else dict(stacks)


def grown(base: Mapping[str, int], head: Mapping[str, int], most: int = 10) -> list[Frame]:
    """The ``most`` frames under the streaming loop whose share of the samples grew most, by at least 0.5
    points (:func:`frames` of :func:`from_streaming`'s stacks, the loop and :data:`OUTSIDE` left out)."""
    found = [f for f in frames(from_streaming(base), from_streaming(head))
             if f.change >= 0.005 and f.name not in (OUTSIDE, "all") and not STREAM.match(f.name)]
    return found[:most]


def headline(base: Mapping[str, int], head: Mapping[str, int], most: int = 3) -> str:
    """What grew, in words: the :func:`grown` frames, ``NAME +C points (B% -> H%)`` joined by ``; ``;
    ``no frame's share grew`` when none did."""
    grown_ = grown(base, head, most)
    if not grown_:
        return "no frame's share grew"
    return "; ".join(f"{_short(f.name)} {100 * f.change:+.1f} points ({100 * f.base:.1f}% -> {100 * f.head:.1f}%)"
                     for f in grown_)


def _short(name: str) -> str:
    """A frame's function without its file: ``Parser._reparse (team_parser.py)`` -> ``Parser._reparse``."""
    return name.split(" (", 1)[0] if " (" in name else name


class _Node:
    __slots__ = ("name", "head", "base", "children")

    def __init__(self, name: str) -> None:
        self.name, self.head, self.base, self.children = name, 0.0, 0.0, {}


def _tree(base: Mapping[str, int], head: Mapping[str, int]) -> _Node:
    root = _Node("all")
    for side, stacks in (("head", head), ("base", base)):
        for stack, share in _share(stacks).items():
            node = root
            setattr(node, side, getattr(node, side) + share)
            for name in stack.split(";"):
                node = node.children.setdefault(name, _Node(name))
                setattr(node, side, getattr(node, side) + share)
    return root


def _colour(change: float, largest: float) -> str:
    """Light grey for no change (under 0.05 points), else from white to red (grew) or blue (shrank) at the
    largest change."""
    if abs(change) < 0.0005:
        return "rgb(238,238,238)"
    t = min(1.0, abs(change) / largest) if largest > 0 else 0.0
    fade = int(235 - 175 * t)
    return f"rgb(250,{fade},{fade})" if change > 0 else f"rgb({fade},{fade},250)"


def _warm(name: str) -> str:
    """A plain flame graph's colour for ``name``: warm, the same for a name in every graph; grey for
    :data:`OUTSIDE`."""
    import zlib

    if name == OUTSIDE:
        return "rgb(200,200,200)"
    h = zlib.crc32(name.encode("utf-8"))
    return f"rgb({205 + h % 50},{80 + (h >> 8) % 130},{(h >> 16) % 55})"


def svg(base: Mapping[str, int] | None, head: Mapping[str, int], path: Path | str, title: str = "",
        width: int = 1200, row: int = 16, min_width: float = 0.5) -> Path:
    """Draw the flame graph of ``head`` as an SVG at ``path``, from the streaming loop on
    (:func:`from_streaming`), hanging from the top: each frame as wide as its share of the head's samples,
    frames narrower than ``min_width`` pixels left out.

    With a ``base`` (the differential graph, the module docstring): each frame coloured by the change of its
    share, its ``<title>`` ``NAME (base B%, head H%, +C points)``, siblings ordered by that change (the most
    grown at the left), and ``title`` followed by :func:`headline`. With ``base`` ``None`` (a plain
    profile): warm colours by name, each ``<title>`` ``NAME (N samples, P%)`` as py-spy writes it, siblings
    by share. Returns the path."""
    plain = base is None
    head = from_streaming(head)
    base = head if plain else from_streaming(base)
    root = _tree(base, head)
    largest = 0.0 if plain else max((abs(f.change) for f in frames(base, head)), default=0.0)
    total = sum(head.values())
    boxes: list[tuple[int, float, float, _Node]] = []

    def order(node: _Node) -> list[_Node]:
        key = (lambda n: (n.name == OUTSIDE, -n.head, n.name)) if plain else \
            (lambda n: (n.name == OUTSIDE, -(n.head - n.base), -n.head, n.name))
        return sorted(node.children.values(), key=key)

    def walk(node: _Node, depth: int, x: float) -> int:
        deepest = depth
        for child in order(node):
            w = child.head * (width - 20)
            if w >= min_width:
                boxes.append((depth + 1, x, w, child))
                deepest = max(deepest, walk(child, depth + 1, x))
            x += w
        return deepest

    boxes.append((0, 10.0, (width - 20) * root.head, root))
    depth = walk(root, 0, 10.0)
    top = 64
    height = top + (depth + 1) * row + 10
    if plain:
        streaming = sum(n.head for n in root.children.values() if n.name != OUTSIDE)
        subtitle = (f"frames by function, py-spy samples, from the streaming loop on ({100 * streaming:.0f}% of "
                    f"the {total:,} samples; the rest, start-up, imports, building the case and the harness, is the grey frame)")
        legend = "widths: each frame's share of the samples; the parser's frames hang under the loop"
    else:
        title = f"{title}: {headline(base, head, most=1)}" if title else headline(base, head, most=1)
        subtitle = "grew most: " + headline(base, head)
        legend = ("widths: the head's samples; red: a larger share than in the base (work the change added), blue: "
                  "a smaller one; grey: outside the streaming")
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'font-family="Verdana, sans-serif" font-size="12">',
           f'<rect width="100%" height="100%" fill="#fafafa"/>',
           f'<text id="title" x="{width / 2}" y="20" text-anchor="middle" font-size="15">'
           f'{html.escape(title or "flame graph")}</text>',
           f'<text id="subtitle" x="{width / 2}" y="38" text-anchor="middle" fill="#333">{html.escape(subtitle)}</text>',
           f'<text x="{width / 2}" y="54" text-anchor="middle" fill="#666" font-size="11">{html.escape(legend)}</text>']
    for level, x, w, node in boxes:
        y = top + level * row
        change = node.head - node.base
        if plain:
            label = f"{node.name} ({round(node.head * total):,} samples, {100 * node.head:.2f}%)"
            fill = _warm(node.name) if level else "rgb(230,230,230)"
        else:
            label = (f"{node.name} (base {100 * node.base:.1f}%, head {100 * node.head:.1f}%, "
                     f"{100 * change:+.1f} points)")
            fill = "rgb(215,215,215)" if node.name == OUTSIDE else _colour(change, largest)
        text = node.name if len(node.name) * 7 < w else (node.name[: int(w / 7) - 2] + ".." if w > 28 else "")
        out.append(f'<g><title>{html.escape(label)}</title><rect x="{x:.1f}" y="{y}" width="{w:.1f}" '
                   f'height="{row - 1}" fill="{fill}" stroke="#fff" stroke-width="0.5"/>'
                   + (f'<text x="{x + 3:.1f}" y="{y + row - 4}">{html.escape(text)}</text>' if text else "")
                   + "</g>")
    out.append("</svg>")
    path = Path(path)
    path.write_text("\n".join(out) + "\n", encoding="utf-8")
    return path
