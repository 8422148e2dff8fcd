"""Issue 18: the CPU one model answer costs the process that asks for it. The SDK as it comes
(its stream helper `messages.stream`: a pydantic model per event, a message snapshot after
each; its default httpx transport) against `AnthropicProvider` (its own reading of the events,
`runtime/providers/anthropic_stream.py`, over the SDK's aiohttp transport), both streaming the
same short answer from the loopback fake Messages API, one at a time and 50 at once,
alternating, in one run. The fake runs in this process too, so the figures include its
share; only their difference is the client's.

`python -m bench.provider_bench [--requests 300] [--rounds 3]`"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections.abc import Awaitable, Callable

import anthropic

from bench.loopback import serve
from runtime.providers.anthropic import AnthropicProvider
from runtime.providers.base import ProviderRequest
from runtime.transcript import TextBlock, TranscriptMessage
from tests.fakes.anthropic_api import FakeAnthropic, text

ANSWER = "Here is a short answer of a dozen words, as a reply often is."


async def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.provider_bench")
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    fake = FakeAnthropic()
    fake.responder = lambda body: text(ANSWER)
    runner, url = await serve(fake.app())
    sdk = anthropic.AsyncAnthropic(api_key="bench-key", base_url=url, max_retries=0)
    provider = AnthropicProvider("claude-test-model", api_key="bench-key", base_url=url)
    params = {
        "model": "claude-test-model",
        "max_tokens": 100,
        "messages": [{"role": "user", "content": "hi"}],
    }
    request = ProviderRequest(
        model="claude-test-model",
        system="",
        messages=[TranscriptMessage(role="user", blocks=[TextBlock(text="hi")])],
        tools=[],
        max_tokens=100,
    )

    async def helper() -> None:
        async with sdk.messages.stream(**params) as stream:  # type: ignore[arg-type]
            async for _ in stream.text_stream:
                pass
            await stream.get_final_message()

    async def ours() -> None:
        await provider.complete(request, lambda _: None, lambda *_: None)

    runs: dict[str, list[float]] = {}
    try:
        for _ in range(args.rounds):
            for at_once in (1, 50):
                for name, call in (("SDK stream helper", helper), ("AnthropicProvider", ours)):
                    key = f"{name}, {at_once} at once"
                    runs.setdefault(key, []).append(await cpu_ms(call, args.requests, at_once))
    finally:
        await sdk.close()
        await provider.close()
        await runner.cleanup()
    print(f"CPU per streamed answer, client and fake together (median of {args.rounds}):")
    for name, values in runs.items():
        print(f"  {name}: {statistics.median(values):.2f} ms")


async def cpu_ms(call: Callable[[], Awaitable[None]], requests: int, at_once: int) -> float:
    for _ in range(20):  # warm: connections, lazily built models
        await call()
    room = asyncio.Semaphore(at_once)

    async def one() -> None:
        async with room:
            await call()

    start = time.process_time()
    await asyncio.gather(*(one() for _ in range(requests)))
    return 1000 * (time.process_time() - start) / requests


if __name__ == "__main__":
    asyncio.run(main())
