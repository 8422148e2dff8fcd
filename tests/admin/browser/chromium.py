"""Which Chromium the browser tests drive, how it is launched, and why it may be missing."""

from __future__ import annotations

import os

import pytest

CHROMIUM = os.environ.get("SWITCHBOARD_CHROMIUM", "/usr/bin/chromium")  # Debian's package
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
# Every browser test runs in its worker's session event loop, where the browser lives:
# each module says `pytestmark = LOOP`.
LOOP = pytest.mark.asyncio(loop_scope="session")


def missing_browser() -> str | None:
    """Why the browser tests cannot run here, or None."""
    if not os.access(CHROMIUM, os.X_OK):
        return (
            f"no Chromium at {CHROMIUM}: the browser tests need Debian's chromium package "
            "(`apt-get install chromium` as root; `make test` does it where it can), "
            "or SWITCHBOARD_CHROMIUM naming a Chromium executable"
        )
    return None
