"""Test fixture: a team's own workload generators, for ``--workload team_workloads:NAME`` (``tests/`` importable).

``config_file`` returns text (a ``write_file`` call whose content is ``length`` characters of JSON lines,
rendered by the format's renderer, as a team's own generator might write it); ``as_case`` returns a whole
``Case``; ``raises`` and ``not_text`` are bad generators.
"""

from __future__ import annotations

import json
import random

from callscale.workloads import catalog, render


def config_file(fmt: str, length: int, seed: int = 0) -> str:
    """A sentence, then one ``write_file`` call whose ``content`` is ``length`` characters of JSON lines."""
    rng = random.Random(f"config:{seed}")
    lines, size = [], 0
    while size < length:
        line = json.dumps({"id": rng.randrange(10**6), "name": rng.choice(["ana", "bo", "chloé"]),
                           "tags": ["a", "b"][: rng.randint(0, 2)]}, ensure_ascii=False) + "\n"
        lines.append(line)
        size += len(line)
    content = "".join(lines)[:length]
    call = render.Call("write_file", {"path": "data/config.jsonl", "content": content})
    return render.get(fmt).render([call], catalog.intro(render.get(fmt), "Saving the config."))


def as_case(fmt: str, length: int, seed: int = 0):
    """The catalog's ``write_file`` case, as a generator may return a whole ``Case``."""
    return catalog.make("write_file", fmt, length, seed)


def raises(fmt: str, length: int, seed: int = 0) -> str:
    raise ValueError("no such template")


def not_text(fmt: str, length: int, seed: int = 0):
    return 42
