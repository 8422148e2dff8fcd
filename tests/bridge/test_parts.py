"""A process composed from parts (`bridge/parts.py`): each part's life is one async context,
opened in order, run where the turns run, reconfigured by a reload in the same order, and
closed in reverse; a part that fails to open or to stop is named, and the others still close."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from bridge.parts import Change, Life, Part, Parts, Refused, StopFailed
from config.diff import ReloadReport
from config.loading import load
from tests.config_file import workspace, write_config


def recording(done: list[str], what: str, *, fails: str = "") -> Life:
    """A life that records `what` opened and closed; raises at `fails` ("open", "close")."""

    @contextlib.asynccontextmanager
    async def life() -> AsyncIterator[None]:
        if fails == "open":
            raise RuntimeError(f"{what} broke while opening")
        done.append(f"{what} opened")
        yield
        done.append(f"{what} closed")
        if fails == "close":
            raise RuntimeError(f"{what} broke while closing")

    return life


def part(done: list[str], name: str, *, fails: str = "") -> Part:
    return Part(
        name,
        open=recording(done, name, fails=fails),
        run=recording(done, f"{name} run"),
        reconfigure=lambda change: done.append(f"{name} reconfigured"),
    )


async def test_parts_open_in_order_run_in_order_and_close_in_reverse() -> None:
    done: list[str] = []
    parts = Parts()
    await parts.open_all([part(done, "store"), Part("idle"), part(done, "bots")])
    await parts.activate()
    await parts.close()
    assert done == [
        "store opened",
        "bots opened",
        "store run opened",
        "bots run opened",
        "bots run closed",
        "bots closed",
        "store run closed",
        "store closed",
    ]


async def test_a_part_that_fails_to_open_is_named_and_those_before_it_close_in_reverse() -> None:
    done: list[str] = []
    parts = Parts()
    taken: list[str] = []

    def listed() -> list[Part]:
        ordered = [part(done, "a"), part(done, "b"), part(done, "c", fails="open")]
        ordered.append(part(done, "d"))
        return ordered

    def lazily() -> Iterator[Part]:
        for each in listed():
            taken.append(each.name)
            yield each

    with pytest.raises(RuntimeError, match="c broke while opening") as failed:
        await parts.open_all(lazily())
    assert taken == ["a", "b", "c"], "no part is taken after the one that failed"
    assert failed.value.__notes__ == ["while the part 'c' opened"]
    await parts.close()
    assert done == ["a opened", "b opened", "b closed", "a closed"]


async def test_a_part_that_fails_to_stop_is_named_and_every_other_part_stops() -> None:
    done: list[str] = []
    parts = Parts()
    await parts.open_all([part(done, "a"), part(done, "b", fails="close"), part(done, "c")])
    with pytest.raises(StopFailed, match=r"^b \(RuntimeError\) failed to stop") as stopped:
        await parts.close()
    assert [name for name, _ in stopped.value.failed] == ["b"]
    assert done[-3:] == ["c closed", "b closed", "a closed"]


async def test_a_reload_walks_the_opened_parts_in_order_and_a_refusal_stops_it(
    tmp_path: Path,
) -> None:
    done: list[str] = []
    local = workspace("local", [{"id": "you", "primary": True}], console="you")
    config = load(
        write_config(tmp_path / "switchboard.toml", db=tmp_path / "sb.db", workspaces=[local])
    )
    change = Change(config, config, ReloadReport(ok=True))

    async def refuses(change: Change) -> None:
        raise Refused("a tool's input schema is not JSON Schema")

    parts = Parts()
    await parts.open_all([part(done, "runtime"), part(done, "bridge"), part(done, "bots")])
    await parts.reconfigure(change)
    assert [d for d in done if "reconfigured" in d] == [
        "runtime reconfigured",
        "bridge reconfigured",
        "bots reconfigured",
    ]

    done.clear()
    walked = Parts()
    await walked.open_all([Part("runtime", reconfigure=refuses), part(done, "bots")])
    with pytest.raises(Refused):
        await walked.reconfigure(change)
    assert "bots reconfigured" not in done, "nothing after the refusal is changed"
