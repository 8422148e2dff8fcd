"""The checks `switchboard init` makes of a credential against its platform (each platform's
own, `setup.py`; the model key's here), each told apart as passed (what it belongs to), wrong
(the platform refused it: its own reason) or unreachable (the platform could not be asked:
which host, and that nothing was checked). The SDKs are imported only when a check runs."""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Literal

from adapters.platform_setup import Check
from config.errors import CredentialRefused, PlatformUnreachable

MODEL = "claude-sonnet-4-5"


@dataclass(frozen=True)
class Outcome:
    kind: Literal["ok", "wrong", "unreachable"]
    said: str  # what it belongs to, why it was refused, or which host was not reached


def outcome(check: Awaitable[str], *secrets: str) -> Outcome:
    """The check run to its end. An error may quote what it was sent: the secrets are cut
    out."""

    async def wait() -> str:
        return await check

    def without_secrets(said: str) -> str:
        for secret in secrets:
            said = said.replace(secret, "[the secret]")
        return said

    try:
        return Outcome("ok", asyncio.run(wait()))
    except CredentialRefused as exc:
        return Outcome("wrong", without_secrets(str(exc)))
    except PlatformUnreachable as exc:
        return Outcome("unreachable", without_secrets(str(exc)))


def model_check(args: argparse.Namespace) -> Check:
    """The model key's check, against Anthropic or the base URL given (a proxy, a fake)."""

    def check(key: str) -> Awaitable[str]:
        from runtime.providers.anthropic import check_model

        return check_model(MODEL, key, args.base_url or args.anthropic_api_base_url)

    return check
