"""Rendering and splitting answers as the outbox does (`python -m bench.markdown_bench`): the
time per answer for the corpus of model answers (tests/adapters/markdown_corpus) and for long
answers of about 20,000 characters (prose, a list, a table, a code block), on Telegram and
Slack, with the number of messages each becomes; and the longest the event loop stalls while
the outbox splits the 20k table (the split runs in a thread, as `bridge/outbox.py` does, and
in the loop itself for comparison).

As in `switchboard run`, what the imports built is frozen out of garbage collection first.
Each time is wall-clock and the thread's CPU time (what the answer costs, whatever else the
machine runs), the median of the runs; the kept parses (`bridge.markdown.RECENT`) are
forgotten before each run, so no run reuses another's."""

from __future__ import annotations

import asyncio
import gc
import statistics
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from adapters.slack.platform import SLACK
from adapters.telegram.platform import TELEGRAM
from bridge import markdown as md
from bridge.platform import PlatformProfile
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


def timed(profile: PlatformProfile, markdown: str) -> tuple[float, float, int]:
    """Wall-clock ms, CPU ms and the number of messages."""
    walls, cpus, chunks = [], [], 0
    for _ in range(RUNS):
        md.RECENT.clear()
        start, cpu = time.perf_counter(), time.thread_time()
        chunks = deliver(profile, markdown)
        cpus.append(time.thread_time() - cpu)
        walls.append(time.perf_counter() - start)
    return statistics.median(walls) * 1000, statistics.median(cpus) * 1000, chunks


def least_cpu(profile: PlatformProfile, markdown: str, runs: int = 25) -> float:
    """The least CPU ms of the runs: what the answer costs on a core of its own."""
    cpus = []
    for _ in range(runs):
        md.RECENT.clear()
        cpu = time.thread_time()
        deliver(profile, markdown)
        cpus.append(time.thread_time() - cpu)
    return min(cpus) * 1000


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


async def stalls(markdown: str) -> tuple[float, float, float]:
    """The loop's longest stall (the median of the runs) with the split in a thread, with it
    in the loop, and with nothing to do for 0.2 s (what the machine's other work costs)."""

    async def in_loop() -> object:
        await asyncio.sleep(0.01)
        return deliver(TELEGRAM, markdown)

    async def median(work: Callable[[], Awaitable[object]]) -> float:
        stalled = []
        for _ in range(RUNS):
            md.RECENT.clear()
            stalled.append(await longest_stall(asyncio.ensure_future(work())))
        return statistics.median(stalled)

    threaded = await median(lambda: asyncio.to_thread(deliver, TELEGRAM, markdown))
    return threaded, await median(in_loop), await median(lambda: asyncio.sleep(0.2))


def main() -> None:
    # What is imported lives as long as the process: frozen out of the garbage collector's
    # walks, as `switchboard run` does once started (else each full collection walks it all).
    gc.collect()
    gc.freeze()
    corpus = [p.read_text() for p in sorted(CORPUS.glob("*.md"))]
    print("| answer | chars | Telegram ms, CPU ms (messages) | Slack ms, CPU ms (messages) |")
    print("|---|--:|--:|--:|")
    cells = []
    for profile in (TELEGRAM, SLACK):
        runs = [timed(profile, a) for a in corpus]
        wall, cpu = (statistics.median(r[i] for r in runs) for i in (0, 1))
        cells.append(f"{wall:.1f}, {cpu:.1f}")
    size = statistics.median(len(a) for a in corpus)
    print(f"| corpus, {len(corpus)} answers (median) | {size:,.0f} | {cells[0]} | {cells[1]} |")
    for name, answer in long_answers().items():
        tg, sl = timed(TELEGRAM, answer), timed(SLACK, answer)
        print(
            f"| {name} | {len(answer):,} | {tg[0]:.0f}, {tg[1]:.0f} ({tg[2]}) "
            f"| {sl[0]:.0f}, {sl[1]:.0f} ({sl[2]}) |"
        )
    table = long_answers()["table 20k"]
    tg_least, sl_least = (least_cpu(profile, table) for profile in (TELEGRAM, SLACK))
    print(
        f"\nThe 20k table, least CPU of 25 runs: Telegram {tg_least:.0f} ms, "
        f"Slack {sl_least:.0f} ms."
    )
    threaded, inline, idle = asyncio.run(stalls(table))
    print(
        f"The event loop's longest stall while the 20k table is split for Telegram: "
        f"{threaded:.0f} ms with the split in a thread (as the outbox does), {inline:.0f} ms in "
        f"the loop; {idle:.0f} ms with nothing to split."
    )


if __name__ == "__main__":
    main()
