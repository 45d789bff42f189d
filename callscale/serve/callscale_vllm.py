"""The vllm plugin file (`python -m callscale.serve vllm --path` prints its path): importing it registers
every callscale format in vllm's tool-parser registry (see :mod:`callscale.serve.vllm`).

It is a file of its own because an engine may import a plugin file as a module named after the
file (vLLM does): a file named ``vllm.py`` would take the engine's own name.
"""

import callscale.serve.vllm  # noqa: F401  (registers on import)
