"""Building runtimes against the fake Anthropic API, and waiting on the event ledger."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from runtime.agents import AgentSpec, WakeupLimits
from runtime.clock import Clock
from runtime.engine import Runtime
from runtime.events import Event, EventType
from runtime.messages import InboundMessage, MessageKind, Origin, Priority, Provenance, Trust
from runtime.providers.anthropic import AnthropicProvider
from runtime.results import RuntimeSettings
from runtime.tools.command import CommandToolSpec
from tests.fakes.anthropic_api import FakeAnthropic

MODEL = "claude-test-model"


def provider_for(fake: FakeAnthropic, clock: Clock | None = None) -> AnthropicProvider:
    return AnthropicProvider(MODEL, api_key="test-key", base_url=fake.url, clock=clock)


def blocking_tool(name: str, gate: Path, marker: Path) -> CommandToolSpec:
    """A command tool that records that it ran, then waits until `gate` exists."""
    script = f'echo $$ >> "{marker}"; while [ ! -e "{gate}" ]; do sleep 0.02; done; echo released'
    return CommandToolSpec(
        name=name, description="waits for a gate file", command=("bash", "-c", script), timeout_s=30
    )


def counting_tool(name: str, counter: Path) -> CommandToolSpec:
    return CommandToolSpec(
        name=name,
        description="counts its runs",
        command=("bash", "-c", f'echo run >> "{counter}"; echo counted'),
    )


async def open_runtime(
    db_path: Path | str,
    fake: FakeAnthropic,
    *,
    tools: Iterable[str] = (),
    command_tools: Iterable[CommandToolSpec] = (),
    settings: RuntimeSettings | None = None,
    clock: Clock | None = None,
    wakeups: WakeupLimits | None = None,
) -> Runtime:
    command_tools = list(command_tools)
    agent = AgentSpec(
        "assistant",
        "You are a test agent.",
        ("notify_operator", "sleep", "spawn_agent", *tools, *(t.name for t in command_tools)),
        wakeups=wakeups or WakeupLimits(),
    )
    return await Runtime.open(
        db_path,
        provider=provider_for(fake, clock),
        agents=[agent],
        command_tools=command_tools,
        settings=settings,
        clock=clock,
    )


def operator(text: str, *, sender: str = "alice", **overrides: Any) -> InboundMessage:
    fields: dict[str, Any] = dict(
        text=text,
        kind=MessageKind.OPERATOR_PROMPT,
        origin=Origin.OPERATOR,
        trust=Trust.TRUSTED_OPERATOR,
        priority=Priority.INTERJECT,
        delivery_surface="test",
        provenance=Provenance(sender=sender, surface="test", platform_message_ref=f"m-{text}"),
    )
    fields.update(overrides)
    return InboundMessage(**fields)


async def wait_for(
    runtime: Runtime,
    etype: str,
    where: Callable[[Event], bool] = lambda e: True,
    wait_s: float = 10,
) -> Event:
    """The first ledger event of this type (the runtime's `EventType`, or a layer's own, such
    as the bridge's) from the start of the ledger matching `where`."""

    async def scan() -> Event:
        async for event in runtime.events(after_seq=0):
            if event.type == etype and where(event):
                return event
        raise AssertionError("event feed closed")

    return await asyncio.wait_for(scan(), wait_s)


async def all_events(runtime: Runtime, etype: EventType | None = None) -> list[Event]:
    events = await runtime.store.events_after(0)
    return [e for e in events if etype is None or e.type is etype]


def request_roles(body: dict[str, Any]) -> list[tuple[str, list[str]]]:
    """(role, [block types]) for each message of a request the fake received."""
    return [(m["role"], [b["type"] for b in m["content"]]) for m in body["messages"]]


def process_alive(pid: int) -> bool:
    """True while `pid` runs; a killed orphan that nobody reaped (a zombie) counts as gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


async def until(condition: Callable[[], bool], wait_s: float = 10) -> None:
    """Poll until `condition()` holds (for effects outside the ledger, like a fake's inbox):
    at once, then ever less often (2 ms to 25 ms apart), since each wake-up costs CPU."""
    deadline = asyncio.get_running_loop().time() + wait_s
    pause = 0.002
    while not condition():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(pause)
        pause = min(pause * 2, 0.025)
