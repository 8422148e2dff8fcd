"""`POST /toy/{workspace}` with the workspace's token in `X-Toy-Token`: checked, stored,
answered."""

from __future__ import annotations

import json
from collections.abc import Hashable, Mapping
from functools import partial
from typing import Any

from aiohttp import web

from adapters.intake.door import DoorKind, Failed, Poll, Store
from adapters.intake.record import Arrival, Put
from config.schema import SwitchboardConfig
from tests.adapters.toy_platform.settings import TOY_SECTION


def keys(config: SwitchboardConfig) -> Any:
    tokens = {
        w.id: toy.token.get_secret_value()
        for w in config.workspaces
        if (toy := TOY_SECTION.of(w)) is not None
    }
    return tokens or None


class ToyDoor:
    def __init__(self, put: Put, failed: Failed) -> None:
        self._tokens: dict[str, str] = {}

    def update(self, keys: Any) -> None:
        self._tokens = dict(keys or {})

    def route(self, app: web.Application, store: Store) -> None:
        app.router.add_post("/toy/{workspace}", partial(self._line, store))

    def pollers(self) -> Mapping[Hashable, Poll]:
        return {}

    async def _line(self, store: Store, request: web.Request) -> web.Response:
        workspace = request.match_info["workspace"]
        token = self._tokens.get(workspace)
        if token is None or request.headers.get("X-Toy-Token") != token:
            raise web.HTTPForbidden(text="wrong token")
        line = await request.json()
        body = json.dumps(line)
        await store(Arrival("toy", workspace, line["where"], str(line["n"]), body, "toy token"))
        return web.Response(text="stored")


TOY_DOOR = DoorKind("toy", keys, ToyDoor)
