"""A streamed chat completion through vLLM's own serving code, with callscale's parser and with vLLM's.

Run it where vLLM is installed (docs/serving.md; no model, no GPU)::

    python scripts/serve_vllm_stream.py [--formats qwen3,kimi_k2] [--workloads many_short_calls,write_file]
                                        [--length 1024] [--chunking model]

For each format and workload (callscale's workloads, with their tools and
the expected content and calls), the model output is cut into deltas (the
model's tokens where its tokenizer is installed, else the stand-in split;
token ids as :func:`callscale.adapters.vllm.delta_ids` gives them) and fed,
as pre-made ``RequestOutput`` objects, to vLLM's
``OpenAIServingChat.chat_completion_stream_generator`` (the SSE generator
the HTTP route returns), built without an engine: only the attributes that
generator reads are set. The parser class is composed by vLLM's
``ParserManager.get_parser`` from ``--tool-call-parser`` names: vLLM's own
parser for the format, then ``callscale_<format>`` (the plugin imported).
The SSE chunks are read back as a client would (content concatenated; per
tool-call index the name and the arguments pieces) and compared with the
case's expected result and with each other. One line per case: ``ok`` /
``WRONG (...)`` for each parser. Exit 0 when callscale's parser is right on
every case.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from types import SimpleNamespace
from typing import Any

from callscale import adapters, workloads
from callscale.adapters.vllm import delta_ids, tokenizer_for

#: Compiled packages vLLM's serving module imports (structured output backends) that the stream does not use.
GPU_ONLY = ("torch", "triton", "llguidance")
WORKLOADS = ("write_file", "many_short_calls", "parallel_calls", "repeated_opener")


def vllm_names() -> dict[str, str]:
    """format -> the name vLLM registers its own parser of that format under (vLLM's registry)."""
    from vllm.tool_parsers import ToolParserManager

    by_class = {f"{module}:{cls}": name for name, (module, cls) in sorted(ToolParserManager.lazy_parsers.items())}
    out: dict[str, str] = {}
    for target, fmt in adapters.KNOWN_CLASSES.items():
        for f in (fmt, *adapters.ALSO_FORMATS.get(target, ())):
            if target in by_class and f not in out:
                out[f] = by_class[target]
    return out


#: Formats vLLM serves through a composed ``Parser`` of its own, whatever --tool-call-parser names:
#: gpt-oss (``model_type`` ``gpt_oss``: ``HarmonyParser``, which accepts only vLLM's ``GptOssToolParser``).
HARMONY = {"gpt_oss"}


def serving(parser_cls: Any) -> Any:
    """vLLM's ``OpenAIServingChat`` without an engine: the attributes its streaming generator reads."""
    from vllm.entrypoints.openai.chat_completion.serving import OpenAIServingChat

    chat = object.__new__(OpenAIServingChat)
    chat.parser_cls = parser_cls
    chat.model_config = None
    chat.response_role = "assistant"
    chat.enable_auto_tools = True
    chat.enable_force_include_usage = False
    chat._include_reasoning_tokens_details = False
    chat.enable_log_outputs = False
    chat.enable_log_deltas = False
    chat.request_logger = None
    chat.system_fingerprint = None
    chat.enable_per_request_metrics = False
    chat.enable_prompt_tokens_details = False
    return chat


def outputs(deltas: list, tokenizer: Any):
    """The engine's ``RequestOutput`` stream for ``deltas`` (one output a delta; the last finishes)."""
    async def gen():
        for i, delta in enumerate(deltas):
            last = i == len(deltas) - 1
            out = SimpleNamespace(index=0, text=str(delta), token_ids=delta_ids(tokenizer, delta),
                                  finish_reason="stop" if last else None, stop_reason=None, logprobs=None,
                                  weight_versions=None)
            yield SimpleNamespace(prompt_token_ids=[1, 2, 3], encoder_prompt_token_ids=None, num_cached_tokens=0,
                                  num_cache_creation_tokens=0, prompt=None, outputs=[out], kv_transfer_params=None,
                                  metrics=None)
    return gen()


def stream(name: str, case: Any, chunking: str, is_harmony: bool = False) -> dict:
    """Stream ``case`` through vLLM's SSE generator with tool parser ``name``; what a client assembles."""
    from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
    from vllm.entrypoints.generate.base.protocol import RequestResponseMetadata
    from vllm.parser.parser_manager import ParserManager

    tokenizer = tokenizer_for(case.format)
    parser_cls = ParserManager.get_parser(tool_parser_name=name, enable_auto_tools=True, is_harmony=is_harmony)
    request = ChatCompletionRequest(model="callscale", messages=[{"role": "user", "content": "go"}],
                                    tools=list(case.tools), tool_choice="auto", stream=True)
    chat = serving(parser_cls)
    deltas = case.deltas(chunking)

    async def run() -> list[str]:
        frames = []
        async for frame in chat.chat_completion_stream_generator(
                request, outputs(deltas, tokenizer), "chatcmpl-1", "callscale", [], tokenizer,
                RequestResponseMetadata(request_id="chatcmpl-1")):
            frames.append(frame)
        return frames

    content, calls, errors, finish = [], {}, [], None
    for frame in asyncio.run(run()):
        data = frame[len("data: "):].strip()
        if data == "[DONE]":
            continue
        chunk = json.loads(data)
        if "error" in chunk or chunk.get("object") == "error":
            errors.append(chunk.get("error", chunk).get("message", str(chunk))[:200])
            continue
        for choice in chunk.get("choices", ()):
            finish = choice.get("finish_reason") or finish
            delta = choice.get("delta", {})
            if delta.get("content"):
                content.append(delta["content"])
            for tc in delta.get("tool_calls") or ():
                entry = calls.setdefault(tc["index"], {"id": None, "name": None, "arguments": []})
                if tc.get("id"):
                    entry["id"] = entry["id"] or tc["id"]
                fn = tc.get("function") or {}
                if fn.get("name"):
                    entry["name"] = fn["name"]
                if fn.get("arguments"):
                    entry["arguments"].append(fn["arguments"])
    return {"content": "".join(content), "errors": errors, "finish": finish,
            "calls": [(calls[i]["name"], "".join(calls[i]["arguments"]), calls[i]["id"]) for i in sorted(calls)]}


def judge(got: dict, case: Any) -> str:
    """``ok`` or ``WRONG (what)`` against the case's expected content and calls."""
    problems = []
    if got["errors"]:
        return f"ERROR ({got['errors'][0]})"
    expected = [(c.name, dict(c.arguments)) for c in case.calls]
    actual = []
    for name, arguments, _ in got["calls"]:
        try:
            actual.append((name, json.loads(arguments)))
        except ValueError:
            actual.append((name, f"<not JSON: {arguments[-40:]!r}>"))
    if len(actual) != len(expected):
        problems.append(f"{len(actual)} calls, expected {len(expected)}")
    elif actual != expected:
        bad = next(i for i, (a, e) in enumerate(zip(actual, expected)) if a != e)
        problems.append(f"call {bad} differs")
    if any(cid is None for _, _, cid in got["calls"]):
        problems.append("a call without id")
    if got["content"] != case.content:
        problems.append(f"content {len(got['content'])} chars, expected {len(case.content)}")
    if expected and got["finish"] != "tool_calls":
        problems.append(f"finish_reason {got['finish']}")
    return "ok" if not problems else "WRONG (" + "; ".join(problems) + ")"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--formats", default="")
    ap.add_argument("--workloads", default=",".join(WORKLOADS))
    ap.add_argument("--length", type=int, default=1024)
    ap.add_argument("--chunking", default="model")
    args = ap.parse_args(argv)

    from callscale.adapters import gpu_stubs

    gpu_stubs.install(GPU_ONLY)  # where missing: vLLM's serving module imports them, no parsing uses them
    import torch

    if not hasattr(torch, "__file__"):  # the stand-in: request models read torch.iinfo(torch.long) for bounds
        torch.iinfo = lambda dtype: SimpleNamespace(min=-2**63, max=2**63 - 1, bits=64)
    import callscale.serve.vllm  # noqa: F401  (registers callscale_<format>, as --tool-parser-plugin does)
    from callscale.serve import engine_name, formats

    theirs = vllm_names()
    chosen = [f for f in args.formats.split(",") if f] or formats()
    failures = 0
    print("format | workload | vLLM's parser | callscale's | same calls")
    for fmt in chosen:
        for workload in [w for w in args.workloads.split(",") if w]:
            case = workloads.make(workload, fmt, args.length)
            ours = stream(engine_name(fmt), case, args.chunking)
            verdict = judge(ours, case)
            failures += verdict != "ok"
            if fmt in theirs:
                try:
                    engine = stream(theirs[fmt], case, args.chunking, is_harmony=fmt in HARMONY)
                    engine_verdict = f"{theirs[fmt]}: {judge(engine, case)}"
                    same = [c[:2] for c in engine["calls"]] == [c[:2] for c in ours["calls"]]
                except Exception as e:  # the engine's parser failing on this case is a finding, not a crash
                    engine_verdict, same = f"{theirs[fmt]}: RAISED {type(e).__name__}: {str(e)[:80]}", False
            else:
                engine_verdict, same = "(none in vLLM's registry)", None
            print(f"{fmt} | {workload} | {engine_verdict} | {verdict} | {same}")
            sys.stdout.flush()
    print(f"callscale's parser wrong on {failures} case(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
