"""Differential split fuzz for one parser: random outputs whose values hold markup-like text, each parsed
whole and streamed by characters and under random splits; a disagreement is minimized and printed.

    python scripts/fuzz_split.py --parser minimax_m3 --runs 3000 --seed 1

The texts: the format's renderer writes 1-3 calls whose string values mix ordinary characters with the
format's special tokens and markup-like pieces (closing tags, the namespace, quotes), with prose and
whitespace between them; pieces of rendered calls are spliced in too (cut calls, stray tags). A case is
minimized by dropping characters while the disagreement stays (ddmin over characters), and printed as
``repr`` with the differences. Exit 1 when any disagreement was found.
"""

from __future__ import annotations

import argparse
import random
import sys

from callscale import check, parsers
from callscale.workloads import render
from callscale.workloads.chunking import chunk
from callscale.workloads.render import Call

MARKUP_LIKE = ["<", ">", "</", "/>", '"', "=", "\n", " ", "\r\n", "<a>", "</a>", "<item>", "</item>", "x", "0"]


def _text(rng: random.Random, specials: list[str]) -> str:
    return "".join(rng.choice(MARKUP_LIKE + specials) for _ in range(rng.randint(0, 6)))


def _case(rng: random.Random, name: str) -> str:
    r = render.get(name)
    specials = list(r.special_tokens)
    calls = []
    for i in range(rng.randint(1, 3)):
        value = _text(rng, specials)
        args = {"a": value} if rng.random() < 0.7 else {"a": [value, _text(rng, specials)], "b": {"k": value}}
        calls.append(Call(f"f{i}", args))
    text = r.render(calls, content=_text(rng, []) if rng.random() < 0.5 else "")
    if rng.random() < 0.3:  # a piece of a call spliced in: a cut call, a stray tag
        a = rng.randrange(len(text) + 1)
        text = text[:a] + text[a:a + rng.randint(1, 30)] + text[a:]
    return text


def disagreement(name: str, text: str, seed: int) -> list[str]:
    """Differences between ``detect_and_parse`` and streams by characters and two random splits ([] when none)."""
    whole = check.whole(parsers.get(name)(), text, [])
    for spec in ("char", f"random:{seed}:7", f"random:{seed + 1}:3"):
        got = check.stream(parsers.get(name)(), chunk(text, spec), [])
        problems = check.compare(got, whole)
        if problems:
            return [f"{spec}: {p}" for p in problems]
    return []


def minimize(name: str, text: str, seed: int) -> str:
    """Drop characters (halves, then smaller pieces) while the disagreement stays."""
    n = 2
    while len(text) >= 2:
        size = max(1, len(text) // n)
        for start in range(0, len(text), size):
            shorter = text[:start] + text[start + size:]
            if shorter and disagreement(name, shorter, seed):
                text, n = shorter, max(n - 1, 2)
                break
        else:
            if size == 1:
                break
            n = min(n * 2, len(text))
    return text


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--parser", required=True)
    ap.add_argument("--runs", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--show", type=int, default=5, help="minimized cases to print")
    args = ap.parse_args(argv)
    if args.parser not in parsers.names():
        print(f"fuzz_split: no parser {args.parser!r}", file=sys.stderr)
        return 2
    rng = random.Random(args.seed)
    found: dict[str, list[str]] = {}
    for i in range(args.runs):
        text = _case(rng, args.parser)
        if disagreement(args.parser, text, i):
            small = minimize(args.parser, text, i)
            found.setdefault(small, disagreement(args.parser, small, i))
            if len(found) >= args.show:
                break
    print(f"{args.parser}: {len(found)} minimized disagreement(s) in {args.runs} texts (seed {args.seed})")
    for text, problems in sorted(found.items(), key=lambda kv: len(kv[0])):
        print(repr(text))
        for p in problems[:3]:
            print("   ", p)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
