"""The environment a tool's process starts with: a few variables every program expects, and
what the tool's own config names. Nothing else of this process's environment is passed on: it
holds every workspace's tokens and the model key, and a tool that prints its environment
would hand them to the model."""

from __future__ import annotations

import os
from collections.abc import Mapping

PASSED_ON = ("PATH", "HOME", "LANG", "TZ")


def tool_environment(named: Mapping[str, str]) -> dict[str, str]:
    """PATH, HOME, LANG and TZ where this process has them, then `named` (which wins)."""
    return {**{k: os.environ[k] for k in PASSED_ON if k in os.environ}, **named}
