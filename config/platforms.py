"""The terminal's section of a workspace, `[workspaces.console]`, and what every platform's
section checks of its secrets. A chat platform's section is its package's
(`config/platform_sections.py`)."""

from __future__ import annotations

from pydantic import SecretStr

from config.strict import Strict


def present(secret: SecretStr | None) -> SecretStr | None:
    """An empty secret would check nothing (an absent header matches an empty secret, and
    anyone can sign with an empty key): refused, so no door opens by a variable left empty."""
    if secret is not None and not secret.get_secret_value().strip():
        raise ValueError("is empty; set it (an empty secret would let anyone in)")
    return secret


class ConsoleConfig(Strict):
    operator: str
    enabled: bool = True
