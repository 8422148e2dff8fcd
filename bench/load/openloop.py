"""An open-loop load generator, run as its own process (so that it competes with neither the
server measured nor the fake platform): each request is sent at its due time, whether the
ones before it were answered or not, and its latency is counted from that due time (so a
server falling behind shows as growing latency, not as a slower sender).

`python -m bench.load.openloop URL REQUESTS.jsonl RATE`: prints one JSON line with the
latencies' p50, p99 and max in milliseconds, and the non-200 answers."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path

import aiohttp


async def fire(
    url: str, requests: list[tuple[bytes, dict[str, str]]], rate: float
) -> dict[str, object]:
    latencies: list[float] = []
    failures: dict[str, int] = {}
    connector = aiohttp.TCPConnector(limit=0)
    timeout = aiohttp.ClientTimeout(total=60)
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as http:
        start = time.perf_counter() + 0.2
        epoch = time.time() + 0.2  # the same moment, on the clock other processes read

        async def one(i: int, body: bytes, headers: dict[str, str]) -> None:
            due = start + i / rate
            await asyncio.sleep(max(0.0, due - time.perf_counter()))
            try:
                async with http.post(url, data=body, headers=headers) as response:
                    await response.read()
                    if response.status != 200:
                        failures[str(response.status)] = failures.get(str(response.status), 0) + 1
            except aiohttp.ClientError as exc:
                failures[type(exc).__name__] = failures.get(type(exc).__name__, 0) + 1
            latencies.append(time.perf_counter() - due)

        await asyncio.gather(*(one(i, b, h) for i, (b, h) in enumerate(requests)))
        took = time.perf_counter() - start
    latencies.sort()

    def at(share: float) -> float:
        return round(1000 * latencies[min(len(latencies) - 1, int(share * len(latencies)))], 1)

    return {
        "sent": len(requests),
        "start_epoch": epoch,
        "seconds": round(took, 2),
        "p50_ms": at(0.50),
        "p99_ms": at(0.99),
        "max_ms": round(1000 * latencies[-1], 1),
        "failures": failures,
    }


def main() -> None:
    url, path, rate = sys.argv[1], Path(sys.argv[2]), float(sys.argv[3])
    requests = []
    for line in path.read_text().splitlines():
        item = json.loads(line)
        requests.append((item["body"].encode(), item["headers"]))
    print(json.dumps(asyncio.run(fire(url, requests, rate))), flush=True)


if __name__ == "__main__":
    main()
