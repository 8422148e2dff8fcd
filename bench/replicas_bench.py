"""`.venv/bin/python -m bench.replicas_bench`: replicas on PostgreSQL (issue 14) measured with
real `switchboard run` processes; the parts are described in `bench/replicas/` (part 5, a
replica's death with sessions spread over three replicas, in `bench/replicas/spread_failover.py`).
Options make each part smaller or skip it (`--help`)."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import logging
import tempfile
import time
from pathlib import Path

from bench.replicas.bare import (
    overhead,
    serve_bare,
)
from bench.replicas.failover import failover
from bench.replicas.interjections import (
    interjections,
)
from bench.replicas.processes import (
    LIVE,
    DroppedStreams,
    Postgres,
)
from bench.replicas.report import (
    loadavg,
    print_failover,
    print_interjections,
    print_overhead,
    print_spread_failover,
    print_throughput,
)
from bench.replicas.spread_failover import spread_failover
from bench.replicas.throughput import throughput

NAMES = {1: "one", 2: "two", 3: "three", 4: "four"}


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.replicas_bench")
    parser.add_argument("--events", type=int, default=500, help="part 1: events per setup")
    parser.add_argument("--concurrency", type=int, default=32, help="part 1: requests in flight")
    parser.add_argument("--workspaces", type=int, default=6, help="part 1: Slack workspaces")
    parser.add_argument("--channels", type=int, default=48, help="part 1: channels of each")
    parser.add_argument("--kills", type=int, default=20, help="part 2: SIGKILL rounds")
    parser.add_argument("--ttl", type=float, default=3.0, help="parts 2 and 5: lease_ttl_s")
    parser.add_argument("--interjections", type=int, default=60, help="part 3: messages")
    parser.add_argument(
        "--command-interjections", type=int, default=10, help="part 3: during a command tool"
    )
    parser.add_argument("--intake", type=int, default=1000, help="part 4: requests per run")
    parser.add_argument("--runs", type=int, default=3, help="part 4: runs of each, alternating")
    parser.add_argument(
        "--spread-kills",
        type=int,
        default=30,
        help="part 5: SIGKILLs of a non-active replica",
    )
    parser.add_argument(
        "--spread-active-kills", type=int, default=10, help="part 5: SIGKILL rounds of the active"
    )
    parser.add_argument("--spread-sessions", type=int, default=24, help="part 5: sessions")
    parser.add_argument(
        "--spread-json", type=Path, help="part 5: every round's samples into this JSON file"
    )
    parser.add_argument(
        "--spread-logs", type=Path, help="part 5: copy every replica's output into this folder"
    )
    parser.add_argument(
        "--spread-settle", type=float, default=12.0, help="part 5: seconds between rounds"
    )
    parser.add_argument(
        "--replicas",
        default="1,3",
        help="part 1: PostgreSQL replica counts, e.g. 1,2 (none: SQLite only, `--profile` it)",
    )
    parser.add_argument(
        "--pin", action="store_true", help="part 1: each replica on a core of its own (taskset)"
    )
    parser.add_argument(
        "--profile", type=Path, help="part 1: py-spy the one replica into this raw file"
    )
    parser.add_argument("--parts", default="12345", help="which parts to run, e.g. 24")
    parser.add_argument("--serve-bare", choices=["slack", "telegram"], help=argparse.SUPPRESS)
    parser.add_argument("--bare-db", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--telegram-api", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


async def main(argv: list[str] | None = None) -> None:
    args = parse(argv)
    if args.serve_bare:
        await serve_bare(args.serve_bare, args.bare_db, args.telegram_api)
        return
    started = time.monotonic()
    logging.getLogger("aiohttp.server").addFilter(DroppedStreams())
    print(f"load average at the start: {loadavg()}")
    with tempfile.TemporaryDirectory(prefix="sb-replicas-") as tmp:
        root = Path(tmp)
        pg = Postgres(root / "pg") if set(args.parts) & set("1235") else None
        try:
            if "1" in args.parts:
                assert pg is not None
                spread = (
                    f"each a new thread, over {args.workspaces} workspaces x "
                    f"{args.channels} channels"
                )
                common = dict(
                    events=args.events,
                    concurrency=args.concurrency,
                    workspaces=args.workspaces,
                    channels=args.channels,
                )
                counts = [int(n) for n in args.replicas.split(",") if n]
                results = [
                    await throughput(
                        "SQLite, one process",
                        root / "t-sqlite",
                        root / "t-sqlite" / "sb.db",
                        1,
                        postgres=None,
                        pin=args.pin,
                        profile=args.profile if not counts else None,  # `--replicas ''`
                        **common,
                    )
                ]
                for n in counts:
                    results.append(
                        await throughput(
                            f"PostgreSQL, {NAMES.get(n, str(n))} replica{'s' if n > 1 else ''}"
                            + (" (round robin)" if n > 1 else ""),
                            root / f"t-pg{n}",
                            pg.schema(),
                            n,
                            postgres=pg,
                            pin=args.pin,
                            profile=args.profile if n == 1 else None,
                            **common,
                        )
                    )
                print_throughput(results, args.concurrency, spread)
            if "2" in args.parts and args.kills > 0:
                assert pg is not None
                outcome = await failover(pg, root / "failover", args.kills, args.ttl)
                print_failover(*outcome, args.ttl)
            if "3" in args.parts and args.interjections > 0:
                assert pg is not None
                print_interjections(
                    *await interjections(
                        pg, root / "interject", args.interjections, args.command_interjections
                    )
                )
            if "4" in args.parts:
                result = await overhead(root / "intake", args.intake, args.runs, 16)
                print_overhead(result, args.intake, 16)
            if "5" in args.parts and args.spread_kills + args.spread_active_kills > 0:
                assert pg is not None
                moved = await spread_failover(
                    pg,
                    root / "spread",
                    args.spread_kills,
                    args.spread_active_kills,
                    args.ttl,
                    sessions=args.spread_sessions,
                    settle_s=args.spread_settle,
                    logs=args.spread_logs,
                )
                print_spread_failover(moved)
                if args.spread_json is not None:
                    args.spread_json.write_text(json.dumps(dataclasses.asdict(moved), indent=1))
        finally:
            await asyncio.gather(*(r.stop() for r in list(LIVE.values())))
            if pg is not None:
                pg.stop()
    print(
        f"\n(replicas_bench: {time.monotonic() - started:.0f} s; load average at the end "
        f"{loadavg()})"
    )


if __name__ == "__main__":
    asyncio.run(main())
