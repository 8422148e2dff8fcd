"""The fake Bot API's HTML parse mode refuses what Telegram refuses, through the real
python-telegram-bot client, with Telegram's 400 text."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import pytest
from pytest_aiohttp import AiohttpServer
from telegram import Bot
from telegram.constants import ParseMode
from telegram.error import BadRequest

from tests.fakes.telegram_api import FakeTelegram
from tests.fakes.telegram_html import EntityError, parse

REFUSED = {
    "unsupported tag": "<h1>Title</h1>",
    "unsupported span": "<span>x</span>",
    "unclosed tag": "<b>bold",
    "misnested tags": "<b><i>x</b></i>",
    "end tag never opened": "x</b>",
    "bare less-than": "a < b",
    "bare ampersand": "fish & chips",
    "unknown entity": "&nbsp;",
    "link without href": "<a>x</a>",
    "relative href": '<a href="docs/x.md">x</a>',
    "javascript href": '<a href="javascript:alert(1)">x</a>',
    "href with a space": '<a href="https://a b.org">x</a>',
    "bold inside code": "<code><b>x</b></code>",
    "text beside the code of a pre": '<pre>x<code class="language-py">y</code></pre>',
    "code inside a link": '<a href="https://x.org"><code>x</code></a>',
    "nested quotes": "<blockquote>a<blockquote>b</blockquote></blockquote>",
}
ACCEPTED = {
    "escaped text": (
        "a &lt; b &amp;&amp; c &gt; d &quot;q&quot; &#128512;",
        'a < b && c > d "q" 😀',
    ),
    "nesting": ("<b>bold <i>both</i></b> <s>gone</s> <u>u</u>", "bold both gone u"),
    "aliases": ("<strong>a</strong><em>b</em><del>c</del>", "abc"),
    "pre with language": ('<pre><code class="language-py">x = 1</code></pre>', "x = 1"),
    "link with query": ('<a href="https://x.org/a_(b)?q=1&amp;r=2">site</a>', "site"),
    "quote with code": ("<blockquote>say <code>hi</code></blockquote>", "say hi"),
    "spoiler": ('<tg-spoiler>a</tg-spoiler><span class="tg-spoiler">b</span>', "ab"),
    "bare greater-than": ("a > b", "a > b"),
}


@pytest.fixture
async def telegram_api(
    aiohttp_server: Callable[..., Awaitable[AiohttpServer]],
) -> FakeTelegram:
    fake = FakeTelegram(enforce_limits=False)  # flood control is not what is tried here
    server = await aiohttp_server(fake.app(), host="127.0.0.1")
    fake.url = str(server.make_url("")).rstrip("/")
    return fake


@pytest.mark.parametrize("html", REFUSED.values(), ids=REFUSED.keys())
def test_the_parser_refuses_what_telegram_refuses(html: str) -> None:
    with pytest.raises(EntityError, match=r"^Bad Request: can.t parse entities: "):
        parse(html)


@pytest.mark.parametrize(("html", "shown"), ACCEPTED.values(), ids=ACCEPTED.keys())
def test_the_parser_takes_what_telegram_takes(html: str, shown: str) -> None:
    assert parse(html) == shown


async def test_send_message_is_refused_with_telegrams_400(telegram_api: FakeTelegram) -> None:
    async with Bot(telegram_api.token, base_url=telegram_api.base_url) as bot:
        for html in REFUSED.values():
            with pytest.raises(BadRequest, match=r"^Can.t parse entities: "):
                await bot.send_message(1001, html, parse_mode=ParseMode.HTML)
        shown = await bot.send_message(1001, "<b>ok</b> &amp; fine", parse_mode=ParseMode.HTML)
    assert shown.text == "ok & fine"
    assert len(telegram_api.refused) == len(REFUSED)
    assert telegram_api.sent() == [
        {"chat_id": 1001, "text": "<b>ok</b> &amp; fine", "parse_mode": "HTML"}
    ]


async def test_the_4096_limit_counts_the_text_after_entity_parsing(
    telegram_api: FakeTelegram,
) -> None:
    async with Bot(telegram_api.token, base_url=telegram_api.base_url) as bot:
        await bot.send_message(1001, f"<b>{'x' * 4096}</b>", parse_mode=ParseMode.HTML)
        await bot.send_message(1001, "&amp;" * 4096, parse_mode=ParseMode.HTML)
        with pytest.raises(BadRequest, match="too long"):
            await bot.send_message(1001, f"<b>{'x' * 4097}</b>", parse_mode=ParseMode.HTML)
    assert len(telegram_api.sent()) == 2
