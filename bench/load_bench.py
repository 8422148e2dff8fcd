"""Issue 18: intake while the product works. Signed Slack events from the operator in 50
threads of one allowed channel, sent open loop at a fixed rate (`bench/load/openloop.py`, a
process of its own) to a real `switchboard run` process whose model answers at once, so turns
run and replies and progress go out to the fake Slack (under Slack's rate limits) meanwhile;
and, in the same run, to slack-bolt's own aiohttp server doing one durable insert (the least
the job needs). Ack latency is counted from each request's due time.

`python -m bench.load_bench [--rates 100,500,1000] [--seconds 5]`; each rate gets a fresh
Switchboard (no backlog carried over)."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench import slack_bench
from bench.replicas.processes import ALICE, BARE_BANNER, Replica, made
from bench.replicas.slack_side import fakes
from tests.config_file import anthropic, workspace, write_config
from tests.fakes.slack_api import FakeSlack


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.load_bench", description=__doc__)
    parser.add_argument("--rates", default="100,500,1000", help="events per second, each run")
    parser.add_argument("--seconds", type=float, default=5.0, help="how long each rate is sent")
    parser.add_argument(
        "--profile",
        type=Path,
        help="also sample Switchboard with py-spy ($PY_SPY, else on PATH) into this folder",
    )
    return parser.parse_args(argv)


def config(where: Path, slack: FakeSlack, token: str, model_url: str) -> Path:
    alice = {"id": "alice", "primary": True, "slack_user_id": ALICE}
    team = {
        "team_id": "T1",
        "bot_token": token,
        "signing_secret": slack_bench.SECRET,
        "api_base_url": slack.base_url,
        "channels": ["COPS"],
    }
    return write_config(
        made(where) / "switchboard.toml",
        db=where / "sb.db",
        provider=anthropic(model_url),
        logging={"level": "warning"},
        workspaces=[workspace("acme", [alice], slack=team)],
    )


def requests_file(requests: list[tuple[bytes, dict[str, str]]], file: Path) -> Path:
    lines = (json.dumps({"body": b.decode(), "headers": h}) for b, h in requests)
    file.write_text("\n".join(lines))
    return file


async def send(url: str, file: Path, rate: float) -> dict[str, Any]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bench.load.openloop", url, str(file), str(rate),
        stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, _ = await proc.communicate()
    return dict(json.loads(out))


async def sample(target: Replica, out: Path, seconds: float) -> asyncio.subprocess.Process:
    """py-spy sampling the process while the load runs: collapsed stacks, idle included."""
    out.parent.mkdir(parents=True, exist_ok=True)
    spy = os.environ.get("PY_SPY") or shutil.which("py-spy") or "py-spy"
    return await asyncio.create_subprocess_exec(
        spy, "record", "--format", "raw", "--idle", "--rate", "200", "-d", str(int(seconds) + 1),
        "-p", str(target.proc.pid), "-o", str(out), stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )  # fmt: skip


async def main(argv: list[str] | None = None) -> None:
    args = parse(argv)
    rates = [float(r) for r in args.rates.split(",")]
    where = Path(tempfile.mkdtemp(prefix="sb-load-"))
    slack, model, runners = await fakes()
    team = slack.add_team("T1")
    bare_argv = [
        sys.executable, "-m", "bench.replicas_bench", "--serve-bare", "slack",
        "--bare-db", str(where / "bare.db"), "--telegram-api", "http://127.0.0.1:9",
    ]  # fmt: skip
    bare = await Replica.spawn("bare", bare_argv, where / "bare.out", BARE_BANNER)
    first = 1
    rows = []
    try:
        for rate in rates:
            count = int(rate * args.seconds)
            server = await Replica.start(
                config(where / f"sb-{int(rate)}", slack, team.token, model.url), "switchboard"
            )
            try:
                results = {}
                for name, target in (("bare", bare), ("switchboard", server)):
                    requests = slack_bench._requests(slack, count, first)
                    first += count
                    cpu = target.cpu()
                    file = requests_file(requests, where / f"{name}-{int(rate)}.jsonl")
                    spy = None
                    if args.profile and name == "switchboard":
                        spy = await sample(
                            target, args.profile / f"rate-{int(rate)}.txt", args.seconds
                        )
                    result = await send(f"{target.url}/slack/events", file, rate)
                    if spy is not None:
                        await spy.wait()
                    result["cpu_ms"] = round(1000 * (target.cpu() - cpu) / count, 2)
                    results[name] = result
                rows.append((rate, results, len(model.requests)))
            finally:
                await server.stop()
    finally:
        await bare.stop()
        for runner in runners:
            await runner.cleanup()
    print("| rate | server | ack p50 | ack p99 | ack max | failures | CPU per event |")
    print("|---|---|---|---|---|---|---|")
    for rate, results, _ in rows:
        for name, r in results.items():
            print(
                f"| {rate:g}/s | {name} | {r['p50_ms']} ms | {r['p99_ms']} ms | {r['max_ms']} ms"
                f" | {r['failures'] or 0} | {r['cpu_ms']} ms |"
            )
    print(f"model requests answered in all: {rows[-1][2] if rows else 0}")


if __name__ == "__main__":
    asyncio.run(main())
