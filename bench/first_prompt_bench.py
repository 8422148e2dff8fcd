"""From `git clone` to the console's first prompt, as a newcomer gets it.

Clones this repository into a temporary folder, runs `make run` there in a pseudo-terminal and
reports how long until the banner ("Type a message") shows, split into the clone, `make`'s
install of the product (no test extras) and the start itself. The pip cache is the one the
machine has: a machine that never installed these packages also pays their download.

    .venv/bin/python -m bench.first_prompt_bench [--repo PATH]
"""

from __future__ import annotations

import argparse
import os
import pty
import select
import subprocess
import sys
import tempfile
import time
from pathlib import Path

READY = b"Type a message"
INSTALLED = b"touch .venv/.installed-stamp"
LIMIT_S = 600.0


def _wait_for_banner(folder: Path) -> tuple[float, float]:
    """Run `make run` in a pty; the seconds until the install ended and until the banner."""
    started = time.monotonic()
    parent, child = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "SWITCHBOARD_CONFIG")}
    proc = subprocess.Popen(
        ["make", "run"], cwd=folder, stdin=child, stdout=child, stderr=child, env=env
    )
    os.close(child)
    seen = b""
    installed_at: float | None = None
    try:
        while time.monotonic() - started < LIMIT_S:
            ready, _, _ = select.select([parent], [], [], 1.0)
            if not ready:
                continue
            try:
                seen += os.read(parent, 65536)
            except OSError:
                break
            if installed_at is None and INSTALLED in seen:
                installed_at = time.monotonic() - started
            if READY in seen:
                return installed_at or 0.0, time.monotonic() - started
        output = seen.decode(errors="replace")
        raise SystemExit(f"no banner within {LIMIT_S:.0f} s; output:\n{output}")
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        os.close(parent)


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", default=str(Path(__file__).resolve().parent.parent))
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "switchboard"
        started = time.monotonic()
        subprocess.run(["git", "clone", "--quiet", args.repo, str(folder)], check=True)
        cloned = time.monotonic() - started
        installed, banner = _wait_for_banner(folder)
    total = cloned + banner
    print(
        f"git clone to first prompt: {total:.1f} s "
        f"(clone {cloned:.1f} s, install {installed:.1f} s, start {banner - installed:.1f} s)"
    )


if __name__ == "__main__":
    main(sys.argv[1:])
