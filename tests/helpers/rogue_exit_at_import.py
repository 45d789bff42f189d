"""A plug-in module that calls ``sys.exit(5)`` when imported."""

import sys

from callscale.parsers.deepseek import DeepSeekV31Parser

sys.exit(5)


class Parser(DeepSeekV31Parser):  # never reached
    pass
