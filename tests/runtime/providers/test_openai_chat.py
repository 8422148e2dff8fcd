"""The OpenAI-compatible provider through the real `openai` SDK against the loopback fake:
tool rounds, the transcript's tool-call ids on servers of other id shapes, streaming, files,
usage with cached tokens, and what is never sent."""

from __future__ import annotations

import base64
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestServer

from runtime.agents import AgentSpec
from runtime.engine import Runtime
from runtime.errors import ProviderError, TranscriptInvariantError
from runtime.prompts import render_summary
from runtime.providers import tool_ids
from runtime.providers.base import ProviderRequest, StopReason
from runtime.providers.openai_chat import OpenAIChatProvider, lower_request
from runtime.records import RunStatus
from runtime.tools.base import ToolSpec
from runtime.transcript import (
    AttachmentBlock,
    AttachmentForm,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    TranscriptMessage,
)
from tests.fakes.openai_api import FakeOpenAI, Reply, text, tools
from tests.fakes.openai_rules import NINE_ALNUM_IDS, check_chat_request
from tests.runtime.helpers import operator

MODEL = "gpt-4.1-mini"
Serve = Callable[..., Awaitable[TestServer]]


async def _serve(aiohttp_server: Serve, fake: FakeOpenAI) -> FakeOpenAI:
    server = await aiohttp_server(fake.app(), host="127.0.0.1")
    fake.url = str(server.make_url("/v1"))
    return fake


@pytest.fixture
async def openai_api(aiohttp_server: Serve) -> FakeOpenAI:
    return await _serve(aiohttp_server, FakeOpenAI())


class NoWait:
    """A clock whose waits return at once: a retry here is tested without sleeping."""

    def monotonic(self) -> float:
        return 0.0

    def wall(self) -> float:
        return 0.0

    async def sleep(self, seconds: float) -> None:
        pass


def _provider(fake: FakeOpenAI, cleanup: list[object], **kw: Any) -> OpenAIChatProvider:
    kw.setdefault("clock", NoWait())
    provider = OpenAIChatProvider(MODEL, api_key="test-key", base_url=fake.url, **kw)
    cleanup.append(provider)
    return provider


def _user(*blocks: Any) -> TranscriptMessage:
    return TranscriptMessage(role="user", blocks=list(blocks))


def _assistant(*blocks: Any) -> TranscriptMessage:
    return TranscriptMessage(role="assistant", blocks=list(blocks))


def _request(*messages: TranscriptMessage, **kw: Any) -> ProviderRequest:
    return ProviderRequest(MODEL, kw.pop("system", "Be brief."), list(messages), [], 1000, **kw)


def _ignore(*_: object) -> None:
    pass


async def test_a_tool_round_trip_over_two_rounds_through_the_runtime(
    aiohttp_server: Serve, db_path: Path, cleanup: list[object]
) -> None:
    # The server gives `call_0` in every round, as some do: the transcript's ids stay unique.
    fake = await _serve(aiohttp_server, FakeOpenAI(reuse_ids=True))
    fake.script = [
        tools(("sleep", {"seconds": 0}), say="Let me wait."),
        tools(("sleep", {"seconds": 0})),
        text("Done waiting."),
    ]
    provider = OpenAIChatProvider(MODEL, api_key="test-key", base_url=fake.url)
    agent = AgentSpec("assistant", "You are a test agent.", ("notify_operator", "sleep"))
    rt = await Runtime.open(db_path, provider=provider, agents=[agent])
    cleanup.append(rt)
    sid = await rt.create_session("assistant")
    await rt.submit(sid, operator("wait twice"))
    await rt.wait_idle()

    [run] = await rt.store.runs(session_id=sid)
    assert run.status is RunStatus.COMPLETED and run.final_text == "Done waiting."
    calls = await rt.store.tool_calls()
    assert [c.name for c in calls] == ["sleep", "sleep"] and calls[0].id != calls[1].id
    assert fake.refused == []
    last = fake.requests[-1]["messages"]
    assert [m["role"] for m in last] == ["system", "user", "assistant", "tool", "assistant", "tool"]
    assert last[2]["content"] == "Let me wait." and last[4]["content"] is None
    for asked, answered in ((last[2], last[3]), (last[4], last[5])):
        [call] = asked["tool_calls"]
        assert call["function"] == {"name": "sleep", "arguments": '{"seconds": 0}'}
        assert answered["tool_call_id"] == call["id"] and "slept" in answered["content"]
    assert fake.requests[0]["tools"][0]["type"] == "function"


async def test_repeated_server_ids_give_unique_transcript_ids(
    aiohttp_server: Serve, cleanup: list[object]
) -> None:
    fake = await _serve(aiohttp_server, FakeOpenAI(reuse_ids=True))
    fake.script = [tools(("sleep", {"seconds": 1}), ("sleep", {"seconds": 2}))] * 2
    provider = _provider(fake, cleanup)
    first = await provider.complete(_request(_user(TextBlock(text="go"))), _ignore, _ignore)
    second = await provider.complete(_request(_user(TextBlock(text="go"))), _ignore, _ignore)
    ids = [b.id for r in (first, second) for b in r.tool_uses()]
    assert len(set(ids)) == 4 and not {"call_0", "call_1"} & set(ids)
    assert [b.input for b in first.tool_uses()] == [{"seconds": 1}, {"seconds": 2}]
    assert first.stop_reason is StopReason.TOOL_USE


def _anthropic_conversation() -> list[TranscriptMessage]:
    """A conversation begun on Anthropic: its ids are `toolu_...`, 30 characters."""
    first, second = "toolu_01A09q90qw90lq917835lq9", "toolu_01B09q90qw90lq917835lq9"
    return [
        _user(TextBlock(text="check twice")),
        _assistant(
            TextBlock(text="Checking."),
            ToolUseBlock(id=first, name="sleep", input={"seconds": 1}),
            ToolUseBlock(id=second, name="sleep", input={"seconds": 2}),
        ),
        _user(
            ToolResultBlock(tool_use_id=first, content="slept 1s"),
            ToolResultBlock(tool_use_id=second, content="slept 2s", is_error=True),
            TextBlock(text="and then?"),
        ),
    ]


async def test_anthropic_ids_reach_a_server_of_nine_alphanumerics(
    aiohttp_server: Serve, cleanup: list[object]
) -> None:
    fake = await _serve(aiohttp_server, FakeOpenAI(NINE_ALNUM_IDS))
    fake.script = [text("Both done.")]
    request = _request(*_anthropic_conversation())
    provider = _provider(fake, cleanup, id_shape=tool_ids.NINE_ALNUM, name="mistral")
    answer = await provider.complete(request, _ignore, _ignore)
    assert answer.text() == "Both done." and fake.refused == []
    sent = fake.requests[0]["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool", "tool", "user"]
    ids = [c["id"] for c in sent[2]["tool_calls"]]
    assert all(len(i) == 9 and i.isalnum() for i in ids) and len(set(ids)) == 2
    assert [sent[3]["tool_call_id"], sent[4]["tool_call_id"]] == ids
    assert sent[4]["content"] == "Error: slept 2s" and sent[5]["content"] == "and then?"

    unmapped = _provider(fake, cleanup, max_attempts=1)  # OpenAI's shape: the ids as they are
    with pytest.raises(ProviderError, match="must be a-z, A-Z, 0-9, with a length of 9"):
        await unmapped.complete(request, _ignore, _ignore)


async def test_streamed_text_arrives_in_order(
    openai_api: FakeOpenAI, cleanup: list[object]
) -> None:
    said = "The quick brown fox jumps over the lazy dog."
    openai_api.script = [text(said)]
    deltas: list[str] = []
    answer = await _provider(openai_api, cleanup).complete(
        _request(_user(TextBlock(text="tell me"))), deltas.append, _ignore
    )
    assert len(deltas) > 3 and "".join(deltas) == said == answer.text()
    assert answer.stop_reason is StopReason.END_TURN and answer.model == MODEL
    body = openai_api.requests[0]
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert body["max_tokens"] == 1000 and body["messages"][0] == {
        "role": "system",
        "content": "Be brief.",
    }


PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


def _file(id_: str, name: str, media_type: str, form: AttachmentForm, size: int) -> AttachmentBlock:
    return AttachmentBlock(id=id_, name=name, media_type=media_type, form=form, size=size)


async def test_images_pdfs_and_text_files_are_lowered_as_the_api_takes_them(
    openai_api: FakeOpenAI, cleanup: list[object]
) -> None:
    picture = _file("a1", "chart.png", "image/png", AttachmentForm.IMAGE, len(PNG))
    pdf = _file("a2", "report.pdf", "application/pdf", AttachmentForm.DOCUMENT, 9)
    notes = _file("a3", "notes.txt", "text/plain", AttachmentForm.TEXT, 5)
    screenshot = _file("a4", "screen.png", "image/png", AttachmentForm.IMAGE, len(PNG))
    files = {"a1": PNG, "a2": b"%PDF-1.4\n", "a3": b"hello", "a4": PNG}
    request = _request(
        _user(picture, pdf, notes, TextBlock(text="what do these say?")),
        _assistant(ToolUseBlock(id="toolu_shot", name="screenshot")),
        _user(ToolResultBlock(tool_use_id="toolu_shot", content="{}", attachments=[screenshot])),
        files=files,
    )
    openai_api.script = [text("A chart.")]
    await _provider(openai_api, cleanup).complete(request, _ignore, _ignore)
    assert openai_api.refused == []
    first, tool, after = (openai_api.requests[0]["messages"][i] for i in (1, 3, 4))
    kinds = [p["type"] for p in first["content"]]
    assert kinds == ["text", "image_url", "text", "file", "text", "text"]
    png_url = "data:image/png;base64," + base64.b64encode(PNG).decode()
    assert first["content"][1]["image_url"]["url"] == png_url
    assert first["content"][3]["file"]["filename"] == "report.pdf"
    assert first["content"][3]["file"]["file_data"].startswith("data:application/pdf;base64,")
    assert '<file name="notes.txt">\nhello\n</file>' in first["content"][4]["text"]
    # a tool message holds text only: the picture follows it, in a user message
    assert tool == {"role": "tool", "tool_call_id": "toolu_shot", "content": "{}"}
    assert after["role"] == "user" and after["content"][2]["image_url"]["url"] == png_url


async def test_usage_maps_cached_tokens_apart_from_the_uncached(
    openai_api: FakeOpenAI, cleanup: list[object]
) -> None:
    provider = _provider(openai_api, cleanup)
    system = "You are the operations agent. " * 300  # about 2,250 tokens: cacheable
    first = await provider.complete(
        _request(_user(TextBlock(text="one")), system=system), _ignore, _ignore
    )
    again = _request(
        _user(TextBlock(text="one")),
        _assistant(TextBlock(text="ok")),
        _user(TextBlock(text="two")),
        system=system,
    )
    second = await provider.complete(again, _ignore, _ignore)
    reported = openai_api.usages[1]
    cached = reported["prompt_tokens_details"]["cached_tokens"]
    assert first.usage.cache_read_tokens == 0 and cached >= 1024
    assert second.usage.cache_read_tokens == cached
    assert second.usage.input_tokens == reported["prompt_tokens"] - cached
    assert second.usage.request_tokens == reported["prompt_tokens"]
    assert second.usage.output_tokens == reported["completion_tokens"] > 0


async def test_an_invalid_transcript_is_refused_before_sending(
    openai_api: FakeOpenAI, cleanup: list[object]
) -> None:
    unpaired = _request(
        _user(TextBlock(text="hi")),
        _assistant(ToolUseBlock(id="t1", name="sleep")),
        _user(TextBlock(text="no result")),
    )
    with pytest.raises(TranscriptInvariantError, match="without tool_result"):
        await _provider(openai_api, cleanup).complete(unpaired, _ignore, _ignore)
    assert openai_api.requests == [] and openai_api.refused == []


async def test_arguments_that_are_not_json_are_asked_again_and_said_plainly(
    openai_api: FakeOpenAI, cleanup: list[object]
) -> None:
    broken = tools(("sleep", '{"seconds": 1'))
    openai_api.script = [broken, tools(("sleep", {"seconds": 1}))]
    notices: list[str] = []
    answer = await _provider(openai_api, cleanup).complete(
        _request(_user(TextBlock(text="go"))), _ignore, lambda n, d, why: notices.append(why)
    )
    assert [b.input for b in answer.tool_uses()] == [{"seconds": 1}]
    assert len(notices) == 1 and "not a JSON object" in notices[0]
    openai_api.script = [broken]
    with pytest.raises(ProviderError, match="'sleep' with arguments that are not a JSON object"):
        await _provider(openai_api, cleanup, max_attempts=1).complete(
            _request(_user(TextBlock(text="go"))), _ignore, _ignore
        )


@pytest.mark.parametrize(
    ("reply", "stop", "said"),
    [
        (text("word " * 40), StopReason.MAX_TOKENS, "word " * 8),  # cut at 10 tokens
        (text("", finish_reason="content_filter"), StopReason.REFUSAL, ""),
        (Reply(refusal="I can't help with that."), StopReason.REFUSAL, "I can't help with that."),
        (tools(("sleep", {"seconds": 1}), finish_reason="length"), StopReason.MAX_TOKENS, ""),
        (
            tools(("sleep", {"seconds": 1}), say="Hm.", finish_reason="stop"),
            StopReason.TOOL_USE,
            "Hm.",
        ),
    ],
)
async def test_finish_reasons(
    openai_api: FakeOpenAI, cleanup: list[object], reply: Reply, stop: StopReason, said: str
) -> None:
    openai_api.script = [reply]
    request = ProviderRequest(MODEL, "", [_user(TextBlock(text="go"))], [], 10)
    answer = await _provider(openai_api, cleanup).complete(request, _ignore, _ignore)
    assert answer.stop_reason is stop and answer.text() == said


@pytest.mark.parametrize(
    "broken",
    [Reply(text="half an", stream_cut=True), Reply(text="half an", stream_error="server_error")],
)
async def test_a_stream_cut_or_failed_midway_is_retried_not_taken_as_the_answer(
    openai_api: FakeOpenAI, cleanup: list[object], broken: Reply
) -> None:
    openai_api.script = [broken, text("whole answer")]
    notices: list[str] = []
    answer = await _provider(openai_api, cleanup).complete(
        _request(_user(TextBlock(text="go"))), _ignore, lambda n, d, why: notices.append(why)
    )
    assert answer.text() == "whole answer" and len(notices) == 1


def test_the_summary_opens_the_conversation_and_tools_are_functions() -> None:
    spec = ToolSpec(name="sleep", description="Wait.", input_schema={"type": "object"})
    request = ProviderRequest(
        MODEL, "", [_user(TextBlock(text="and now?"))], [spec], 50, summary="We fixed the DNS."
    )
    params = lower_request(request)
    assert params["messages"] == [
        {"role": "user", "content": f"{render_summary('We fixed the DNS.')}\n\nand now?"}
    ]
    assert params["tools"] == [
        {
            "type": "function",
            "function": {"name": "sleep", "description": "Wait.", "parameters": {"type": "object"}},
        }
    ]
    check_chat_request({**params, "stream": True})
