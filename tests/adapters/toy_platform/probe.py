"""Whose a toy token is: `toy-good` is the toy bot's; any other the toy refuses. Nothing is
sent anywhere."""

from __future__ import annotations

from functools import partial

from adapters.platform import Probe
from config.errors import CredentialRefused
from config.schema import WorkspaceConfig
from tests.adapters.toy_platform.settings import TOY_SECTION

GOOD = "toy-good"


async def whose(token: str) -> str:
    if token != GOOD:
        raise CredentialRefused("the toy does not know this token")
    return "the toy bot"


def probes(workspace: WorkspaceConfig) -> list[Probe]:
    toy = TOY_SECTION.of(workspace)
    return [] if toy is None else [("toy.token", partial(whose, toy.token.get_secret_value()))]
