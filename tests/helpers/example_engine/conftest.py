"""The example engine's test folder: what a team that ships tool parsers writes with callscale's pytest plugin.

``test_parsers.py`` holds a test that fails on purpose (the planted
quadratic parser), so the repository's own suite does not collect it;
``tests/commands/test_testing_api.py`` runs this folder in a pytest subprocess with
``CALLSCALE_EXAMPLE_ENGINE=1`` and checks the outcome. Run it by hand with

    CALLSCALE_EXAMPLE_ENGINE=1 python -m pytest -p no:cacheprovider tests/helpers/example_engine

``tests/`` plays the engine's installed package here (``quadratic_parser``).
"""

import os
import sys
from pathlib import Path

if not os.environ.get("CALLSCALE_EXAMPLE_ENGINE"):
    collect_ignore = ["test_parsers.py"]

TESTS = str(Path(__file__).resolve().parent.parent)
if TESTS not in sys.path:
    sys.path.append(TESTS)
