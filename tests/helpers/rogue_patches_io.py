"""A plug-in module that replaces ``print`` and ``open`` when imported.

In its own process, ``print`` then prints nothing and ``open`` fails for
every file; the parser itself is the built-in DeepSeek V3.1 one.
"""

import builtins
import io

from callscale.parsers.deepseek import DeepSeekV31Parser


def _no_print(*args, **kwargs):
    return None


def _no_open(*args, **kwargs):
    raise PermissionError("open() was replaced by rogue_patches_io")


builtins.print = _no_print
builtins.open = _no_open
io.open = _no_open


class Parser(DeepSeekV31Parser):
    pass
