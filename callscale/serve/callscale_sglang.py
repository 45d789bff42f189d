"""The sglang plugin file (`python -m callscale.serve sglang --path` prints its path): importing it registers
every callscale format in sglang's tool-parser registry (see :mod:`callscale.serve.sglang`).

It is a file of its own because an engine may import a plugin file as a module named after the
file (vLLM does): a file named ``sglang.py`` would take the engine's own name.
"""

import callscale.serve.sglang  # noqa: F401  (registers on import)
