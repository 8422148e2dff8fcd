"""Which Chromium the browser tests drive, how it is launched, and why it may be missing."""

from __future__ import annotations

import os

import pytest

# Debian's chromium-headless-shell: Chromium's own headless build, the one Playwright drives
# for headless tests by default (same Blink and V8 as the full browser, without the browser's
# window and UI layers): its CPU in the browser tests is about a quarter less. Debian's full
# chromium stands in where only it is installed.
HEADLESS_SHELL = "/usr/bin/chromium-headless-shell"
CHROMIUM = os.environ.get("SWITCHBOARD_CHROMIUM") or (
    HEADLESS_SHELL if os.access(HEADLESS_SHELL, os.X_OK) else "/usr/bin/chromium"
)
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
            f"no Chromium at {CHROMIUM}: the browser tests need Debian's chromium-headless-shell "
            "or chromium package (`apt-get install chromium-headless-shell` as root; `make test` "
            "does it where it can), "
            "or SWITCHBOARD_CHROMIUM naming a Chromium executable"
        )
    return None
