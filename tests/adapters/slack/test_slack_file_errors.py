"""A file download that fails tells the operator why, and never how we asked: aiohttp's
errors carry the request's headers, the bot token among them."""

from __future__ import annotations

import asyncio

import aiohttp
import pytest
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack.files import SlackFiles
from bridge.attachments.source import FetchError
from bridge.types import FileKind, InboundFile

TOKEN = "xoxb-test-secret-not-a-real-token"


async def test_a_broken_answer_from_the_file_host_never_carries_the_token() -> None:
    async def broken(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read(4096)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: abc\r\n\r\nxx")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(broken, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        async with aiohttp.ClientSession() as session:
            client = AsyncWebClient(token=TOKEN, base_url=f"http://127.0.0.1:{port}/api/")
            files = SlackFiles(client, session, TOKEN)
            shared = InboundFile("F1", FileKind.DOCUMENT, url=f"http://127.0.0.1:{port}/f.txt")
            with pytest.raises(FetchError) as refused:
                await files.fetch("acme", shared, 1000)
    finally:
        server.close()
        await server.wait_closed()
    assert "Slack did not answer" in str(refused.value)
    assert TOKEN not in str(refused.value)
    assert refused.value.retryable
