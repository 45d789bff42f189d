"""``python -m callscale``: the same as the ``callscale`` command."""

from .cli import main

raise SystemExit(main())
