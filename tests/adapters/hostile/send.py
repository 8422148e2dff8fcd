"""Sending hostile input to the two public HTTP doors, and what to look for afterwards."""

from __future__ import annotations

import asyncio
import copy
import hashlib
import hmac
import logging
import time
from typing import Any

import aiohttp
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from adapters.server.app import App
from runtime.messages import MessageKind
from tests.adapters.slack_harness import ACME_SECRET
from tests.topology import drained

TG_SECRET = "s3cret"
TG_HEADER = "X-Telegram-Bot-Api-Secret-Token"
PROPERTY = settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def slack_signature(body: bytes, timestamp: str, secret: str = ACME_SECRET) -> str:
    base = b"v0:" + timestamp.encode() + b":" + body
    return "v0=" + hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()


async def post_slack(
    http: aiohttp.ClientSession,
    app: App,
    body: bytes | str,
    *,
    content_type: str | None = "application/json",
    signed: bool = True,
    headers: dict[str, str] | None = None,
) -> tuple[int, str]:
    raw = body.encode() if isinstance(body, str) else body
    sent: dict[str, str] = {}
    if content_type is not None:
        sent["Content-Type"] = content_type
    if signed:
        timestamp = str(int(time.time()))
        sent["X-Slack-Request-Timestamp"] = timestamp
        sent["X-Slack-Signature"] = slack_signature(raw, timestamp)
    sent |= headers or {}
    url = f"http://127.0.0.1:{app.port}/slack/events"
    async with http.post(url, data=raw, headers=sent) as response:
        return response.status, await response.text()


async def post_telegram(
    http: aiohttp.ClientSession,
    app: App,
    body: bytes | str,
    *,
    content_type: str | None = "application/json",
    secret: str | None = TG_SECRET,
    headers: dict[str, str] | None = None,
) -> tuple[int, str]:
    raw = body.encode() if isinstance(body, str) else body
    sent: dict[str, str] = {}
    if content_type is not None:
        sent["Content-Type"] = content_type
    if secret is not None:
        sent[TG_HEADER] = secret
    sent |= headers or {}
    url = f"http://127.0.0.1:{app.port}/telegram/acme"
    async with http.post(url, data=raw, headers=sent) as response:
        return response.status, await response.text()


async def prompts(app: App, *, at_least: int = 0, limit_s: float = 10) -> list[str | None]:
    """The texts of every operator prompt that reached the store (and so the model), once there
    are `at_least` of them (or `limit_s` passed): behind the door process or a standby replica,
    a request answered is handled a moment later."""
    await drained(app)
    deadline = time.monotonic() + limit_s
    while True:
        found = [
            entry.message.text
            for entry in await app.runtime.store.messages()
            if entry.message.kind is MessageKind.OPERATOR_PROMPT
        ]
        if len(found) >= at_least or time.monotonic() > deadline:
            return found
        await asyncio.sleep(0.02)


def server_errors(records: list[logging.LogRecord]) -> list[str]:
    """Unhandled exceptions (aiohttp's "Error handling request") and any other error lines,
    but for clients of an earlier test's event loop that the garbage collector closes now."""
    return [
        f"{r.name}: {r.getMessage()}"
        for r in records
        if (r.levelno >= logging.ERROR or "Error handling request" in r.getMessage())
        and "Event loop is closed" not in str(r.exc_info and r.exc_info[1]) + r.getMessage()
    ]


def refusals(records: list[logging.LogRecord]) -> list[logging.LogRecord]:
    return [
        r for r in records if r.getMessage() in ("slack request refused", "telegram update refused")
    ]


# -- properties -------------------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=10,
)
header_text = st.text(
    st.characters(min_codepoint=0x20, max_codepoint=0x2FF, exclude_characters="\x7f"), max_size=30
)
extra_headers = st.dictionaries(
    st.from_regex(r"X-[A-Za-z0-9-]{1,12}", fullmatch=True), header_text, max_size=3
)
content_types = st.one_of(
    st.none(),
    st.sampled_from(
        [
            "application/json",
            "application/json; charset=utf-8",
            "application/x-www-form-urlencoded",
            "text/plain",
            "multipart/form-data; boundary=x",
            "application/octet-stream",
        ]
    ),
    header_text,
)


def mutated(reals: list[Any], keys: list[str]) -> st.SearchStrategy[Any]:
    """A real payload with a few fields, at any depth, replaced by random JSON or removed."""

    @st.composite
    def build(draw: st.DrawFn) -> Any:
        payload = copy.deepcopy(draw(st.sampled_from(reals)))
        for _ in range(draw(st.integers(0, 3))):  # 0: the real payload as it is
            node = payload
            while True:
                inner = sorted(k for k, v in node.items() if isinstance(v, dict))
                if not inner or draw(st.booleans()):
                    break
                node = node[draw(st.sampled_from(inner))]
            key = draw(st.sampled_from(sorted(node) + keys))
            if draw(st.booleans()):
                node[key] = draw(json_values)
            else:
                node.pop(key, None)
        return payload

    return build()


def intake_fails(patch: pytest.MonkeyPatch) -> None:
    """Every store into the intake fails, as a full disk or a database gone would make it: the
    inbox file's insert (SQLite), the shared table's (PostgreSQL)."""

    async def database_gone(self: object, request: object) -> bool:
        raise OSError("could not write: the database server closed the connection")

    patch.setattr("bridge.store.intake.INSERT_ONCE", "INSERT INTO intake_on_a_full_disk VALUES (?)")
    patch.setattr("bridge.store.store.BridgeStore.take_request", database_gone)
