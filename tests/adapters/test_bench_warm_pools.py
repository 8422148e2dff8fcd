"""The throughput benchmark (`bench/replicas/throughput.py`) measures turns on warm connection
pools: its warm-up is as wide as its load, so the CPU it reports per turn is not that of the
connections a process new to a burst that wide opens once (about 430 for 500 turns, 0.2 ms a
turn, when the warm-up was 24 requests). A short load: the model's pool keeps what idled less
than 5 s."""

from __future__ import annotations

from pathlib import Path

from bench.replicas.throughput import throughput


async def test_the_load_opens_no_connection_the_warm_up_did_not(tmp_path: Path) -> None:
    result = await throughput(
        "SQLite",
        tmp_path / "t",
        tmp_path / "t" / "sb.db",
        1,
        events=32,
        concurrency=32,
        workspaces=2,
        channels=16,
        postgres=None,
    )
    # A warm-up of 8 left this load to open 30 to 44; a few may still open where the load
    # happens to run more requests at once than the warm-up did.
    assert result.opened < result.events // 4, result.opened
