"""Test fixture: a DeepSeek V3.1 parser whose first instance starts a detached process (a new session, the
daemon's double fork) that appends a line to the file named by CALLSCALE_TEST_DETACHED (``--out/scaling-fits.csv``)
half a second after the gate wrote its last file (``summary.md``), when the gate has exited. It writes its process id to that path + ``.pid`` first."""

from __future__ import annotations

import os
import time

from callscale.parsers.deepseek import DeepSeekV31Parser

_started = False


class Parser(DeepSeekV31Parser):
    def __init__(self) -> None:
        super().__init__()
        global _started
        target = os.environ.get("CALLSCALE_TEST_DETACHED")
        if _started or not target:
            return
        _started = True
        first = os.fork()
        if first == 0:
            try:
                os.setsid()
                if os.fork() == 0:
                    with open(target + ".pid", "w") as fh:
                        fh.write(str(os.getpid()))
                    done = os.path.join(os.path.dirname(target), "summary.md")  # the gate's last file
                    deadline = time.monotonic() + float(os.environ.get("CALLSCALE_TEST_DETACHED_WAIT", "120"))
                    while not os.path.exists(done) and time.monotonic() < deadline:
                        time.sleep(0.05)
                    time.sleep(0.5)
                    with open(target, "a") as fh:
                        fh.write("rogue,row,written,after,the,gate\n")
            finally:
                os._exit(0)
        os.waitpid(first, 0)
