"""Rendering and splitting answers as the outbox does (`python -m bench.markdown_bench`): the
time per answer for the corpus of model answers (tests/adapters/markdown_corpus) and for long
answers of about 20,000 characters (prose, a list, a table, a code block), on Telegram and
Slack, with the number of messages each becomes; and the longest the event loop stalls while
the outbox splits the 20k table (the split runs in a thread, as `bridge/outbox.py` does, and
in the loop itself for comparison)."""

from __future__ import annotations

import asyncio
import statistics
import time
from pathlib import Path

from adapters.slack.platform import SLACK
from adapters.telegram.platform import TELEGRAM
from bridge import PlatformProfile
from bridge.split import split

CORPUS = Path(__file__).resolve().parents[1] / "tests/adapters/markdown_corpus"
RUNS = 5


def long_answers() -> dict[str, str]:
    return {
        "prose 20k": "\n\n".join(
            f"Paragraph {i} on **the plan** for `module_{i}` & [docs](https://x.org/{i}). " * 3
            for i in range(90)
        ),
        "list 20k": "\n".join(f"{i}. item **{i}** with `code_{i}` and more" for i in range(460)),
        "table 20k": "| n | name | note |\n|--:|---|---|\n"
        + "\n".join(f"| {i} | `row_{i}` | a < b & c |" for i in range(700)),
        "code 20k": "```python\n"
        + "\n".join(f"value_{i} = compute({i}) if a < b else None" for i in range(450))
        + "\n```",
    }


def deliver(profile: PlatformProfile, markdown: str) -> int:
    """What the outbox does with an answer: split it, then render each chunk."""
    chunks = split(markdown, profile.limits.max_chars, lambda s: len(profile.render(s)))
    for chunk in chunks:
        profile.render(chunk)
    return len(chunks)


def timed(profile: PlatformProfile, markdown: str) -> tuple[float, int]:
    times, chunks = [], 0
    for _ in range(RUNS):
        start = time.perf_counter()
        chunks = deliver(profile, markdown)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000, chunks


async def longest_stall(work: asyncio.Future[object]) -> float:
    """The longest gap, in ms, between ticks of a 5 ms timer while `work` runs."""
    loop = asyncio.get_running_loop()
    longest, last = 0.0, loop.time()
    while not work.done():
        await asyncio.sleep(0.005)
        now = loop.time()
        longest, last = max(longest, now - last - 0.005), now
    await work
    return longest * 1000


async def stalls(markdown: str) -> tuple[float, float]:
    """The loop's longest stall with the split in a thread, and with it in the loop."""

    async def in_loop() -> object:
        await asyncio.sleep(0.01)
        return deliver(TELEGRAM, markdown)

    threaded = await longest_stall(
        asyncio.ensure_future(asyncio.to_thread(deliver, TELEGRAM, markdown))
    )
    inline = await longest_stall(asyncio.ensure_future(in_loop()))
    return threaded, inline


def main() -> None:
    corpus = [p.read_text() for p in sorted(CORPUS.glob("*.md"))]
    print("| answer | chars | Telegram ms (messages) | Slack ms (messages) |")
    print("|---|--:|--:|--:|")
    tg_ms, sl_ms = (statistics.median(timed(p, a)[0] for a in corpus) for p in (TELEGRAM, SLACK))
    size = statistics.median(len(a) for a in corpus)
    print(f"| corpus, {len(corpus)} answers (median) | {size:,.0f} | {tg_ms:.1f} | {sl_ms:.1f} |")
    for name, answer in long_answers().items():
        (tg_ms, tg_n), (sl_ms, sl_n) = timed(TELEGRAM, answer), timed(SLACK, answer)
        print(f"| {name} | {len(answer):,} | {tg_ms:.0f} ({tg_n}) | {sl_ms:.0f} ({sl_n}) |")
    threaded, inline = asyncio.run(stalls(long_answers()["table 20k"]))
    print(
        f"\nThe event loop's longest stall while the 20k table is split for Telegram: "
        f"{threaded:.0f} ms with the split in a thread (as the outbox does), {inline:.0f} ms in "
        "the loop."
    )


if __name__ == "__main__":
    main()
