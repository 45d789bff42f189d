"""Child process of ``callscale check --against``: stream deltas through one parser and report every result.

Self-contained on purpose: it is run by path (``runpy.run_path``), from the
folder of the side it streams (the current checkout, or an old commit
materialised in a temporary folder), so it must not import this version of
callscale for its own work (the old side may be callscale itself at an
older commit). It imports the parser only: ``callscale.plugins.resolve``
(registered names, ``module:Class``, engine adapters) as the side's folder
and import path find it, else a plain ``module:attribute`` import.

Protocol (one JSON object per line each way, on a copy of the original
stdout; the parser's own prints go to stderr):

- ``{"op": "init", "target": T, "format": F}`` -> ``{"ok": true}`` or ``{"error": "one line"}``;
- ``{"op": "digests", "jobs": [[tools, [deltas, ...]], ...]}`` -> ``{"results": [[[digest, n], ...], ...]}``,
  per job, per delta list: the SHA-1 of the stream's results and their number;
- ``{"op": "full", "job": [tools, [deltas, ...]]}`` -> ``{"results": [[result, ...], ...]}``.

A stream's results: one per increment, then the first and a second
``finish(tools)``, each ``[normal_text, reasoning_text, [[tool_index, name,
parameters], ...]]``; an exception ends the stream with ``["raised", type name]``.
"""

import hashlib
import importlib
import json
import os
import sys


def _get(obj, key, default=None):
    if isinstance(obj, dict):
        return obj.get(key, default)
    return getattr(obj, key, default)


def _plain(result):
    calls = []
    for item in _get(result, "calls", None) or ():
        params = _get(item, "parameters", "")
        if params is not None and not isinstance(params, str):
            params = json.dumps(params, ensure_ascii=False, sort_keys=True)
        calls.append([_get(item, "tool_index"), _get(item, "name"), params])
    return [_get(result, "normal_text", "") or "", _get(result, "reasoning_text", "") or "", calls]


def _factory(target, fmt):
    try:
        from callscale.plugins import resolve
    except ImportError:
        resolve = None
    if resolve is not None:
        try:
            factory = resolve(target, fmt if ":" in target else None).factory
        except TypeError:  # an old resolve without the format argument
            factory = resolve(target).factory
        if type(factory).__name__ == "LazyFactory":  # a resolve that defers the import: load it here
            factory = factory.load()
        return factory
    module_name, _, attr = target.partition(":")
    obj = importlib.import_module(module_name)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


def _stream(factory, tools, deltas):
    out = []
    try:
        parser = factory()
        for delta in deltas:
            out.append(_plain(parser.parse_streaming_increment(delta, tools)))
        out.append(_plain(parser.finish(tools)))
        out.append(_plain(parser.finish(tools)))
    except Exception as exc:  # a parser's fault is a result, compared like any other
        out.append(["raised", type(exc).__name__])
    return out


def main():
    reply = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)  # the parser's prints go to stderr, never into the protocol
    sys.stdout = sys.stderr
    factory = None
    for line in sys.stdin:
        msg = json.loads(line)
        op = msg["op"]
        if op == "init":
            try:
                factory = _factory(msg["target"], msg.get("format"))
                answer = {"ok": True}
            except BaseException as exc:  # SystemExit too: the import failed
                answer = {"error": f"{type(exc).__name__}: {' '.join(str(exc).split())}"}
        elif op == "digests":
            results = []
            for tools, streams in msg["jobs"]:
                row = []
                for deltas in streams:
                    out = _stream(factory, tools, deltas)
                    try:
                        text = json.dumps(out, ensure_ascii=False)
                    except (TypeError, ValueError) as exc:  # a result that is not text
                        out = [["raised", f"unserializable result: {exc}"]]
                        text = json.dumps(out)
                    row.append([hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest(), len(out)])
                results.append(row)
            answer = {"results": results}
        elif op == "full":
            tools, streams = msg["job"]
            answer = {"results": [_stream(factory, tools, deltas) for deltas in streams]}
        else:
            answer = {"error": f"unknown op {op!r}"}
        reply.write(json.dumps(answer, ensure_ascii=False) + "\n")
        reply.flush()


if __name__ == "__main__":
    main()
