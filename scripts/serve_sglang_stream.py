"""A streamed tool-call response through SGLang's own ``FunctionCallParser``, with callscale's detector and SGLang's.

Run it where SGLang is installed (docs/serving.md)::

    python scripts/serve_sglang_stream.py [--formats qwen3,kimi_k2] [--workloads ...] [--length 1024]

For each format and workload, the model output is cut into deltas
(``tokens:4``) and fed as SGLang's ``serving_chat._process_tool_call_stream``
feeds them: ``FunctionCallParser(tools, name).parse_stream_chunk(delta)`` per
delta, ``parse_stream_end()`` with the last, then SGLang's
``_check_for_unstreamed_tool_args`` rule (the last call's
``prev_tool_call_arr`` arguments past ``streamed_args_for_tool``). The
client's view (content; per call index the name and the arguments pieces)
is compared with the case's expected result, for SGLang's own detector of
the format (its ``ToolCallParserEnum`` name) and for ``callscale_<format>``;
``parse_non_stream`` (the non-streaming path) is judged too. Exit 0 when
callscale's detector is right on every case.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from callscale import adapters, workloads

WORKLOADS = ("write_file", "many_short_calls", "parallel_calls", "repeated_opener")


def sglang_names() -> dict[str, str]:
    """format -> the name SGLang registers its own detector of that format under."""
    from sglang.srt.function_call.function_call_parser import FunctionCallParser

    by_class = {f"{cls.__module__}:{cls.__name__}": name for name, cls in FunctionCallParser.ToolCallParserEnum.items()}
    out: dict[str, str] = {}
    for target, fmt in adapters.KNOWN_CLASSES.items():
        if target in by_class and fmt not in out:
            out[fmt] = by_class[target]
    return out


def unstreamed(detector: Any) -> str:
    """SGLang's ``_check_for_unstreamed_tool_args`` for the last call."""
    arr = getattr(detector, "prev_tool_call_arr", None)
    sent = getattr(detector, "streamed_args_for_tool", None)
    if not arr or not sent or len(arr) - 1 >= len(sent):
        return ""
    expected = arr[-1].get("arguments", {})
    expected = expected if isinstance(expected, str) else json.dumps(expected, ensure_ascii=False)
    actual = sent[len(arr) - 1]
    return expected[len(actual):] if expected.startswith(actual) else ""


def stream(name: str, case: Any) -> dict:
    from sglang.srt.entrypoints.openai.protocol import Tool
    from sglang.srt.function_call.function_call_parser import FunctionCallParser

    tools = [Tool.model_validate(t) for t in case.tools]
    parser = FunctionCallParser(tools, name)
    content, calls = [], {}

    def take(normal: str, items: list) -> None:
        content.append(normal or "")
        for item in items:
            entry = calls.setdefault(item.tool_index, [None, []])
            entry[0] = entry[0] or item.name
            entry[1].append(item.parameters or "")

    deltas = case.deltas("tokens:4")
    for i, delta in enumerate(deltas):
        take(*parser.parse_stream_chunk(delta))
        if i == len(deltas) - 1:
            take(*parser.parse_stream_end())
    rest = unstreamed(parser.detector)
    if rest and calls:
        calls[max(calls)][1].append(rest)
    normal, whole = FunctionCallParser(tools, name).parse_non_stream(case.text)
    return {"content": "".join(content), "calls": [(calls[i][0], "".join(calls[i][1])) for i in sorted(calls)],
            "whole": (normal, [(c.name, c.parameters) for c in whole])}


def judge(content: str, calls: list, case: Any) -> str:
    expected = [(c.name, dict(c.arguments)) for c in case.calls]
    actual = []
    for name, arguments in calls:
        try:
            actual.append((name, json.loads(arguments)))
        except ValueError:
            actual.append((name, None))
    problems = []
    if len(actual) != len(expected):
        problems.append(f"{len(actual)} calls, expected {len(expected)}")
    elif actual != expected:
        problems.append("call %d differs" % next(i for i, (a, e) in enumerate(zip(actual, expected)) if a != e))
    if content != case.content:
        problems.append(f"content {len(content)} chars, expected {len(case.content)}")
    return "ok" if not problems else "WRONG (" + "; ".join(problems) + ")"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--formats", default="")
    ap.add_argument("--workloads", default=",".join(WORKLOADS))
    ap.add_argument("--length", type=int, default=1024)
    ap.add_argument("--skip-engine", default="", help="formats whose SGLang detector is not run (e.g. one that "
                                                       "does not finish: SGLang 0.5.23's PythonicDetector)")
    args = ap.parse_args(argv)

    import callscale.serve.sglang  # noqa: F401  (registers callscale_<format>, as the launch script's import does)
    from callscale.serve import engine_name, formats

    theirs = sglang_names()
    failures = 0
    print("format | workload | SGLang's detector: stream / whole | callscale's: stream / whole")
    for fmt in [f for f in args.formats.split(",") if f] or formats():
        for workload in [w for w in args.workloads.split(",") if w]:
            case = workloads.make(workload, fmt, args.length)
            ours = stream(engine_name(fmt), case)
            verdicts = [judge(ours["content"], ours["calls"], case), judge(*ours["whole"], case)]
            failures += verdicts != ["ok", "ok"]
            if fmt in args.skip_engine.split(","):
                engine = "(not run: --skip-engine)"
            elif fmt in theirs:
                try:
                    got = stream(theirs[fmt], case)
                    engine = f"{theirs[fmt]}: {judge(got['content'], got['calls'], case)} / {judge(*got['whole'], case)}"
                except Exception as e:  # the engine's detector failing is a finding
                    engine = f"{theirs[fmt]}: RAISED {type(e).__name__}: {str(e)[:80]}"
            else:
                engine = "(none in SGLang's registry)"
            print(f"{fmt} | {workload} | {engine} | {verdicts[0]} / {verdicts[1]}")
            sys.stdout.flush()
    print(f"callscale's detector wrong on {failures} case(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
