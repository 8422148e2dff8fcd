"""A reply and the reactions go to Slack straight (`adapters/slack/straight.py`), not through
slack_sdk's `api_call` (issue 45: its work cost as much CPU as the request), with the very
request the SDK sends and the very outcome it gives: the same response, the same
`SlackApiError` for a refusal, a 429 or a body that is not JSON."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.web.async_slack_response import AsyncSlackResponse

from adapters.slack.straight import StraightCalls
from adapters.slack.transport import SlackTransport
from bridge.transport import Post
from bridge.types import DeliveryKind, Route

Seen = dict[str, Any]
Answer = Callable[[web.Request], Awaitable[web.StreamResponse]]


@pytest.fixture
async def slack() -> AsyncIterator[tuple[str, list[Seen], list[Answer]]]:
    """A Slack that records each request whole and answers with the next of `answers`
    (else `ok`)."""
    seen: list[Seen] = []
    answers: list[Answer] = []

    async def handle(request: web.Request) -> web.StreamResponse:
        body = await request.read()
        seen.append(
            {
                "method": request.method,
                "path": request.path,
                "query": dict(request.query),
                "headers": {k: v for k, v in request.headers.items() if k not in ("Host",)},
                "body": json.loads(body) if body else None,
            }
        )
        if answers:
            return await answers.pop(0)(request)
        return web.json_response({"ok": True, "channel": "C1", "ts": "1.2"})

    app = web.Application()
    app.router.add_route("*", "/api/{method}", handle)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        yield f"http://127.0.0.1:{runner.addresses[0][1]}/api/", seen, answers
    finally:
        await runner.cleanup()


def client(url: str, session: aiohttp.ClientSession) -> AsyncWebClient:
    return AsyncWebClient(token="xoxb-test-token", base_url=url, retry_handlers=[], session=session)


ROUTE = Route(
    platform="slack",
    workspace_id="w",
    conversation_id="C1",
    thread_id="1.0",
    reply_to="1.0",
)


async def test_a_reply_and_reactions_do_not_go_through_the_sdks_api_call(
    slack: tuple[str, list[Seen], list[Answer]], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, seen, _ = slack
    through_sdk: list[str] = []
    api_call = AsyncWebClient.api_call

    async def counted(self: AsyncWebClient, method: str, **kwargs: Any) -> AsyncSlackResponse:
        through_sdk.append(method)
        return await api_call(self, method, **kwargs)

    monkeypatch.setattr(AsyncWebClient, "api_call", counted)
    async with aiohttp.ClientSession() as session:
        transport = SlackTransport(client(url, session), "w")
        await transport.received(ROUTE)
        post = Post(ROUTE, "the answer", DeliveryKind.TURN_RESULT, "int_1", 0)
        assert await transport.send(post) == "C1:1.2"
    assert [s["path"] for s in seen] == ["/api/reactions.add", "/api/chat.postMessage"]
    assert through_sdk == []


async def both(
    url: str, method: str, **kwargs: Any
) -> list[tuple[AsyncSlackResponse | None, SlackApiError | None]]:
    """The outcome of `method` through the SDK, then straight."""
    outcomes: list[tuple[AsyncSlackResponse | None, SlackApiError | None]] = []
    async with aiohttp.ClientSession() as session:
        sdk = client(url, session)
        sdk_method = getattr(sdk, method.replace(".", "_"))
        straight = StraightCalls(sdk)
        params = {"params": kwargs} if method.startswith("reactions.") else {"body": kwargs}
        for call in (lambda: sdk_method(**kwargs), lambda: straight.call(method, **params)):
            try:
                outcomes.append((await call(), None))
            except SlackApiError as exc:
                outcomes.append((None, exc))
    return outcomes


POST = {
    "channel": "C1",
    "thread_ts": None,
    "text": "hi",
    "blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": "hi"}}],
    "unfurl_links": False,
    "metadata": {"event_type": "e", "event_payload": {"chunk": 0}},
}
REACTION = {"channel": "C1", "name": "eyes", "timestamp": "1.0"}  # as the SDK orders them


@pytest.mark.parametrize(
    ("method", "kwargs"), [("chat.postMessage", POST), ("reactions.add", REACTION)]
)
async def test_the_request_and_the_response_are_the_sdks(
    slack: tuple[str, list[Seen], list[Answer]], method: str, kwargs: dict[str, Any]
) -> None:
    url, seen, _ = slack
    (sdk, _), (straight, _) = await both(url, method, **kwargs)
    assert len(seen) == 2 and seen[0] == seen[1], seen
    assert "thread_ts" not in json.dumps(seen[1]), "a None value is left out"
    assert sdk is not None and straight is not None
    assert (straight.data, straight.status_code, straight.api_url, straight.http_verb) == (
        sdk.data,
        sdk.status_code,
        sdk.api_url,
        sdk.http_verb,
    )


async def refused(request: web.Request) -> web.StreamResponse:
    return web.json_response({"ok": False, "error": "channel_not_found"})


async def too_many(request: web.Request) -> web.StreamResponse:
    return web.json_response(
        {"ok": False, "error": "ratelimited"}, status=429, headers={"Retry-After": "7"}
    )


async def not_json(request: web.Request) -> web.StreamResponse:
    return web.Response(text="<html>bad gateway", status=502, content_type="application/json")


async def html(request: web.Request) -> web.StreamResponse:
    return web.Response(text="<html>bad gateway", status=502, content_type="text/html")


@pytest.mark.parametrize("answer", [refused, too_many, not_json, html])
@pytest.mark.parametrize(
    ("method", "kwargs"), [("chat.postMessage", POST), ("reactions.add", REACTION)]
)
async def test_a_failure_is_the_sdks_own_error(
    slack: tuple[str, list[Seen], list[Answer]],
    answer: Answer,
    method: str,
    kwargs: dict[str, Any],
) -> None:
    url, _, answers = slack
    answers += [answer, answer]
    (_, sdk), (_, straight) = await both(url, method, **kwargs)
    assert sdk is not None and straight is not None
    assert str(straight) == str(sdk)
    assert type(straight.response) is type(sdk.response)
    if isinstance(sdk.response, aiohttp.ClientResponse):  # not JSON: the SDK gives aiohttp's
        assert straight.response.status == sdk.response.status
        return
    assert (straight.response.status_code, straight.response.data) == (
        sdk.response.status_code,
        sdk.response.data,
    )
    assert straight.response.headers.get("Retry-After") == sdk.response.headers.get("Retry-After")
