"""The trtllm plugin file (`python -m callscale.serve trtllm --path` prints its path): importing it registers
every callscale format in trtllm's tool-parser registry (see :mod:`callscale.serve.trtllm`).

It is a file of its own because an engine may import a plugin file as a module named after the
file (vLLM does): a file named ``trtllm.py`` would take the engine's own name.
"""

import callscale.serve.trtllm  # noqa: F401  (registers on import)
