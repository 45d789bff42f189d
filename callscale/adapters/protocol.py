"""What a subject of measurement offers: the one protocol every engine adapter speaks.

A subject is what ``--parser`` names, as :class:`callscale.plugins.ParserSpec` holds it in ``factory``. It offers
five things, each by a name of :data:`CAPABILITIES`:

- ``stream``: make a streamer, a fresh parser object in this process (``subject()``), which the meters drive
  delta by delta (:func:`callscale.check.stream`);
- ``count``: its instructions counted (:meth:`Subject.count_items`; the callgrind child by default);
- ``time``: a case timed by the time meter, which drives the streamer;
- ``check``: its streams compared with the expected result (:meth:`Subject.check_items`; the checker's workers by
  default);
- ``profile``: py-spy samples of its Python frames (``callscale profile``).

``cannot`` maps what a subject cannot do to the one line that says why; the commands print that line and exit 2.
The implementations:

- :class:`InProcess`: a parser class or factory made in this process, ours (:mod:`callscale.parsers`) or a team's;
  can do everything;
- the engines' Python classes (vLLM, SGLang, TensorRT-LLM): :func:`callscale.adapters.adapt` wraps the class in a
  factory of callscale-protocol parsers, an :class:`InProcess` subject;
- llama.cpp's C++ parsing through our harness (:mod:`callscale.adapters.llamacpp`): a Python class over the
  compiled library, an :class:`InProcess` subject;
- SMG's compiled tool parsers inside its router (:class:`callscale.adapters.smg_gateway.GatewayFactory`): no
  parser object in this process; it counts and checks through the router and cannot stream, time or profile.

The core (the meters, the checker, the commands) asks :func:`subject_of` and never names an engine.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

__all__ = ["CAPABILITIES", "Subject", "InProcess", "subject_of", "cannot", "counted_elsewhere",
           "AdapterError", "ENGINES"]

#: What a subject of measurement may offer (see the module docstring).
CAPABILITIES = ("stream", "count", "time", "check", "profile")

#: Engine name -> (top-level package, the pip distribution that provides it): the engines whose Python parser
#: classes an adapter drives in this process (:func:`callscale.adapters.adapt`).
ENGINES: dict[str, tuple[str, str]] = {
    "trtllm": ("tensorrt_llm", "tensorrt-llm"),
    "sglang": ("sglang", "sglang"),
    "vllm": ("vllm", "vllm"),
}


class AdapterError(ValueError):
    """An engine class that no adapter can drive, or an engine that is not installed (one-line message)."""


class Subject:
    """A subject of measurement. ``name``: what ``--parser`` called it; ``format``: the callscale format of the
    text it reads; ``cannot``: capability -> why it cannot (one line).

    The defaults are those of a parser made in this process: the meters and the checker drive ``subject()``
    themselves, and :meth:`count_items` and :meth:`check_items` return ``None`` to say so. A subject that runs
    elsewhere (a router, a server) overrides them, and says in ``cannot`` what it cannot do (a subject that makes
    no streamer here cannot be timed or profiled here; the instruction meter takes its count and outcome from
    :meth:`count_items`).
    """

    name: str = ""
    format: str | None = None
    cannot: Mapping[str, str] = {}
    prefix: str = ""
    """The selection prefix of the subjects of a class that counts its own items (``smg:``); such a class is
    found by :func:`counted_elsewhere` from an item's parser name alone."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.prefix:
            _COUNTING_ELSEWHERE[cls.prefix] = cls

    def __call__(self) -> Any:
        """A fresh streamer (``parse_streaming_increment``, ``finish``, ``detect_and_parse``)."""
        raise TypeError(self.cannot.get("stream") or f"{self.name} makes no streamer in this process")

    def chunking(self, meter: str, chunking: str, given: bool) -> tuple[str, str | None]:
        """The chunking this subject is measured under by ``meter`` (``chunking``: the run's; ``given``: named on
        the command line) and a note for stderr (or ``None``). Raises ``ValueError`` (one line) when it cannot be
        measured so."""
        return chunking, None

    def check_chunkings(self, chunkings: Sequence[str]) -> tuple[list[str], str | None]:
        """The deliveries ``callscale check`` reports for this subject (default: ``chunkings``) and a note."""
        return list(chunkings), None

    @classmethod
    def count_items(cls, items: Sequence[tuple], chunking: str, seed: int, timeout: float | None,
                    on_done: Callable[[tuple, Any], None] | None) -> dict | None:
        """``{item: callscale.instructions.Counted}`` for its items ``(parser, format, workload, length)``, or
        ``None``: the callgrind child counts them (:func:`callscale.instructions.count_items`)."""
        return None

    def check_items(self, spec: Any, items: Sequence[Any], timeout: float | None, bar: Any) -> Any:
        """A :class:`callscale.check.CheckResult` of its items, or ``None``: the checker's workers stream them."""
        return None


class InProcess(Subject):
    """A parser class or factory made in this process (ours, a team's, an engine's class behind its adapter,
    llama.cpp's harness): it can do everything, and the meters drive it."""

    def __init__(self, factory: Callable[[], Any], name: str = "", format: str | None = None) -> None:
        self.factory, self.name, self.format = factory, name, format

    def __call__(self) -> Any:
        return self.factory()


def subject_of(factory: Any, name: str = "", format: str | None = None) -> Subject:
    """``factory`` as a :class:`Subject`: itself when it is one, else an :class:`InProcess` around it."""
    return factory if isinstance(factory, Subject) else InProcess(factory, name, format)


def cannot(factory: Any, capability: str) -> str | None:
    """Why the subject ``factory`` cannot do ``capability`` (one line), or ``None`` when it can."""
    if capability not in CAPABILITIES:
        raise KeyError(f"unknown capability {capability!r}; known: {', '.join(CAPABILITIES)}")
    return subject_of(factory).cannot.get(capability)


#: Selection prefix -> the :class:`Subject` class whose subjects count their own items (filled as such a class is
#: defined, :meth:`Subject.__init_subclass__`).
_COUNTING_ELSEWHERE: dict[str, type[Subject]] = {}


def counted_elsewhere(name: str) -> type[Subject] | None:
    """The class that counts the items of the parser ``name`` itself (:meth:`Subject.count_items`, not in the
    callgrind child), from the name's prefix, else ``None``."""
    for prefix, cls in _COUNTING_ELSEWHERE.items():
        if str(name).startswith(prefix):
            return cls
    return None
