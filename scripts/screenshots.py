"""Make the screenshots in docs/screenshots/: the main job's terminal output at 120 columns, and the first
screen of a differential flame graph for a planted change.

    python scripts/screenshots.py                  # both: runs `callscale scale` (about a minute) and a profile
    python scripts/screenshots.py --scale-text F   # the terminal shot from F, a saved `callscale scale` output
    python scripts/screenshots.py --only flamediff # one of them (scale, flamediff)

- ``scale.png``: ``callscale scale`` (every built-in parser, the default workloads and lengths) run with
  ``--no-progress --out`` a temporary folder (shown as ``results``), its standard output drawn as a
  120-column terminal (Pillow, DejaVu Sans Mono, the font matplotlib ships); the text in ``scale.txt``.
- ``flamediff.png``: a throw-away git repository whose ``HEAD~1`` holds a linear DeepSeek V3.1 parser (ours)
  and ``HEAD`` the planted quadratic one (``tests/helpers/quadratic_parser.py``: it re-reads its buffer on every
  delta), then ``callscale profile --against HEAD~1`` at 8k characters; the differential SVG's first screen
  (1200 pixels wide, at most 700 high) screenshotted by headless Chromium (``apt-get install chromium``).

Exit status 0, or 1 when a command failed (its error on stderr).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "screenshots"
COLUMNS = 120


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def terminal_png(lines: list[str], path: Path, columns: int = COLUMNS, size: int = 14) -> Path:
    """Draw ``lines`` as a terminal ``columns`` wide (light text on a dark background) into the PNG ``path``."""
    from matplotlib import font_manager
    from PIL import Image, ImageDraw, ImageFont

    font = ImageFont.truetype(font_manager.findfont("DejaVu Sans Mono"), size)
    width = font.getlength("M")
    height = size + 4
    pad = 12
    image = Image.new("RGB", (int(columns * width) + 2 * pad, len(lines) * height + 2 * pad), (30, 30, 36))
    draw = ImageDraw.Draw(image)
    for i, line in enumerate(lines):
        colour = (240, 120, 110) if line.startswith(("FAIL ", "gate failed")) else (
            (150, 200, 255) if line.startswith("$ ") else (225, 225, 225))
        draw.text((pad, pad + i * height), line, font=font, fill=colour)
    path.parent.mkdir(parents=True, exist_ok=True)
    image.save(path)
    return path


def scale_shot(text: Path | None) -> Path:
    """``scale.png`` from a run of the main job (or from ``text``, its saved standard output)."""
    if text is None:
        with tempfile.TemporaryDirectory() as folder:
            proc = subprocess.run([sys.executable, "-m", "callscale", "scale", "--no-progress", "--out", folder],
                                  cwd=ROOT, env=_env(), capture_output=True, text=True, stdin=subprocess.DEVNULL)
            if proc.returncode not in (0, 1):
                raise RuntimeError(f"callscale scale: exit {proc.returncode}: {proc.stderr.strip()[-500:]}")
            output = proc.stdout.replace(folder, "results")
            (OUT / "scale.txt").parent.mkdir(parents=True, exist_ok=True)
            (OUT / "scale.txt").write_text(output, encoding="utf-8")  # the text drawn, to read and to diff
    else:
        output = text.read_text(encoding="utf-8")
    lines = ["$ callscale scale"] + output.rstrip("\n").splitlines()
    return terminal_png(lines, OUT / "scale.png")


def _planted_repo(folder: Path) -> Path:
    """A git repository whose HEAD~1 holds our linear DeepSeek V3.1 parser and HEAD the quadratic one."""
    repo = folder / "team"
    repo.mkdir()
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}

    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=env)

    git("init", "-q", "-b", "main")
    (repo / "team_parser.py").write_text("from callscale.parsers.deepseek import DeepSeekV31Parser as Parser\n")
    git("add", "-A")
    git("commit", "-qm", "linear")
    quadratic = (ROOT / "tests" / "quadratic_parser.py").read_text(encoding="utf-8")
    (repo / "team_parser.py").write_text(quadratic + "\nParser = QuadraticParser\n")
    git("commit", "-qam", "rescan the buffer")
    return repo


def flamediff_shot() -> Path:
    """``flamediff.png``: the first screen of ``profile --against HEAD~1`` on the planted change."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        raise RuntimeError("chromium is not installed: apt-get install -y chromium")
    with tempfile.TemporaryDirectory() as folder:
        repo = _planted_repo(Path(folder))
        env = _env()
        env["PYTHONPATH"] = f"{repo}{os.pathsep}{env['PYTHONPATH']}"
        svg = Path(folder) / "out" / "team.svg"
        proc = subprocess.run([sys.executable, "-m", "callscale", "profile", "--parser", "team_parser:Parser",
                               "--workload-format", "deepseek_v31", "--workload", "write_file", "--length", "8k",
                               "--seconds", "2", "--against", "HEAD~1", "-o", str(svg)],
                              cwd=repo, env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL)
        if proc.returncode != 0:
            raise RuntimeError(f"callscale profile: exit {proc.returncode}: {proc.stderr.strip()[-500:]}")
        print(proc.stdout, end="")
        drawn = svg.with_name("team.diff.svg")
        OUT.mkdir(parents=True, exist_ok=True)
        target = OUT / "flamediff.png"
        import re

        tall = int(re.search(r'height="(\d+)"', drawn.read_text(encoding="utf-8")).group(1))
        subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                        "--hide-scrollbars", f"--screenshot={target}", f"--window-size=1200,{min(700, tall)}",
                        drawn.as_uri()], check=True, capture_output=True, timeout=120)
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", choices=("scale", "flamediff"), help="make one of the two")
    parser.add_argument("--scale-text", type=Path, metavar="FILE",
                        help="draw the terminal shot from a saved `callscale scale` output instead of running it")
    args = parser.parse_args(argv)
    status = 0
    for name, make in (("scale", lambda: scale_shot(args.scale_text)), ("flamediff", flamediff_shot)):
        if args.only in (None, name):
            try:
                print(f"wrote {make().relative_to(ROOT)}")
            except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
                print(f"screenshots: {name}: {exc}", file=sys.stderr)
                status = 1
    return status


if __name__ == "__main__":
    raise SystemExit(main())
