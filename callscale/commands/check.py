"""``callscale check``: stream each fault case and workload under many chunkings and compare with the expected
result and with ``detect_and_parse``; ``--against`` compares two versions of a parser (:mod:`callscale.against`).
"""

from __future__ import annotations

import argparse
import sys

from .. import config
from .options import (add_parser_options, add_shard, add_timeout, check_chunking,
                      check_team_workloads, check_workloads, load_settings, memory_limit_of, narrow,
                      non_negative_int, paired_formats, parser_of, parser_specs, split_values, timeout_of)


def add_arguments(p: argparse.ArgumentParser) -> None:
    """``callscale check``'s options."""
    add_parser_options(p, null=False)
    p.add_argument("--workload", action="append", metavar="NAME",
                   help="a workload to check; repeat or comma-separate; default: every workload")
    p.add_argument("--lengths", metavar="SIZES", default="1k",
                   help="call lengths in characters, comma-separated (default 1k)")
    p.add_argument("--chunkings", metavar="SPECS",
                   help="comma-separated chunkings to stream under (default: whole, tokens:1,2,3,7 and "
                        "tokens-random:0..19:8, which never split a special token)")
    p.add_argument("--strict", action="store_true",
                   help="also split inside special tokens: char, fixed:2,3,4,7 and random:0..19:8")
    p.add_argument("--no-faults", action="store_true", help="skip the shared streaming fault cases")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="progress bar on stderr (default: only when stderr is a terminal)")
    p.add_argument("--seed", type=int, default=0, help="workload seed (default 0)")
    p.add_argument("--show", type=non_negative_int, default=20, metavar="N",
                   help="failing streams to print, 0 for none (default 20)")
    add_timeout(p)
    from ..against import add_arguments as add_against

    add_against(p)  # --against SPEC: old versus new (callscale/against.py)
    add_shard(p)


def run(args: argparse.Namespace) -> int:
    """``callscale check``: 0 when every stream matches, 1 when one differs, 2 bad option, 3 callscale's own
    files changed during the run (:func:`callscale.integrity.guarded`), 125 cannot test."""
    from .. import integrity  # what was measured must not have changed callscale's own files

    return integrity.guarded(lambda: check_run(args), "check")


def check_run(args: argparse.Namespace) -> int:
    """The check command itself (:func:`run` guards it)."""
    p = parser_of(args, "check")
    from callscale.workloads import catalog
    from callscale.workloads.chunking import CHECK_CHUNKINGS, INSIDE_TOKEN_CHUNKINGS

    from .. import check

    try:
        lengths = [config.parse_size(x) for x in args.lengths.split(",") if x.strip()]
    except config.ConfigError as exc:
        p.error(str(exc))
    if not lengths:
        p.error("--lengths needs at least one size")
    chunkings = ([check_chunking(p, spec) for spec in split_values([args.chunkings])] if args.chunkings
                 else list(CHECK_CHUNKINGS))
    if args.strict:
        chunkings += [spec for spec in INSIDE_TOKEN_CHUNKINGS if spec not in chunkings]
    if args.against is not None:
        from .. import against

        return against.run(p, args, lengths, chunkings if args.chunkings or args.strict else None,
                           check_workloads(p, split_values(args.workload) or catalog.names()),
                           timeout_of(args, load_settings(p)),
                           dict(paired_formats(p, args, split_values(args.parser))))
    if not split_values(args.parser):
        from callscale import parsers

        args.parser = parsers.names()
    settings = load_settings(p)
    timeout = timeout_of(args, settings)
    specs = narrow(p, args, parser_specs(p, split_values(args.parser), args, null=False, timeout=timeout,
                                         memory_limit=memory_limit_of(args, settings)))
    workloads = check_workloads(p, split_values(args.workload) or catalog.names())
    check_team_workloads(p, workloads, specs, lengths, args.seed, timeout)
    if not args.chunkings:  # the model's own tokens where a tokenizer is installed
        from callscale.workloads.chunking import model_check_chunkings

        extra, note = model_check_chunkings([spec.format for spec in specs])
        chunkings += extra
        print(note, file=sys.stderr)
    elif any(spec.startswith("model") for spec in chunkings):
        from callscale import tokenizers

        print("note: model chunking tokenizers: " + ", ".join(
            f"{fmt} {tokenizers.describe(fmt)}" for fmt in dict.fromkeys(spec.format for spec in specs)),
            file=sys.stderr)
    from ..adapters.protocol import subject_of

    # a subject streamed elsewhere delivers its own chunks (the protocol's check_chunkings)
    own = [subject_of(spec.factory).check_chunkings(chunkings) for spec in specs]
    for note in dict.fromkeys(note for _, note in own if note):
        print(note, file=sys.stderr)
    texts = []
    for spec in specs:
        items = [] if args.no_faults else check.fault_items(spec.format)
        items += check.workload_items(spec.format, workloads, lengths, args.seed)
        texts.append(items)
    from ..bounded import stop_new

    try:
        results = check.run_bounded(specs, texts, chunkings, timeout, args.progress, memory_limit_of(args, settings))
    finally:
        stop_new()
    named = None
    if any(str(c).startswith("model") for c in chunkings):  # which tokenizer cut the model deltas
        from callscale import tokenizers

        named = tokenizers.note([spec.format for spec in specs])
    if own and all(theirs != chunkings for theirs, _ in own):  # what the report names: the subjects' deliveries
        chunkings, named = own[0][0], None
    for line in check.report(results, chunkings, args.show, named):
        print(line)
    return 0 if all(r.passed for r in results) else 1
