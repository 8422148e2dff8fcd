"""The admin's config turned into a runtime: agents, tools, provider, settings."""

from __future__ import annotations

from pathlib import Path

from adapters.private_files import create_private
from adapters.server.providers import build_chains, build_provider, tell_disabled
from bridge.sessions import agent_key
from bridge.store.schema import MIGRATIONS
from config.mcp import McpServerConfig
from config.prices import PriceTable
from config.schema import SwitchboardConfig
from config.secrets import Secrets
from runtime.agents import AgentSpec, WakeupLimits
from runtime.clock import Clock, SystemClock
from runtime.engine import Runtime
from runtime.memory_values import MemoryLimits
from runtime.messages import DropPolicy, QueueMode
from runtime.providers.base import Provider
from runtime.providers.cooldowns import DisabledNotice
from runtime.results import RuntimeSettings
from runtime.tools.base import Approval
from runtime.tools.command import CommandToolSpec
from runtime.tools.mcp import McpServerSpec, McpTools


def runtime_roster(
    config: SwitchboardConfig,
) -> tuple[list[AgentSpec], list[CommandToolSpec]]:
    """Every workspace's agents and command tools, as the runtime names them."""
    agents = [
        AgentSpec(
            agent_key(w.id, a.id),
            a.system_prompt,
            tuple(a.tools),
            wakeups=WakeupLimits(w.wakeups.min_delay_s, w.wakeups.per_day),
            memory=agent_key(w.id, a.id) if w.memory.enabled else None,
            memory_limits=MemoryLimits(w.memory.agent_limit, w.memory.operator_limit),
            chain=agent_key(w.id, a.id),
        )
        for w in config.workspaces
        for a in w.agents
    ]
    tools = [
        CommandToolSpec(
            t.name,
            t.description,
            tuple(t.command),
            t.timeout_s,
            t.input_schema,
            Approval(t.approval_timeout_s) if t.requires_approval else None,
            {k: v.get_secret_value() for k, v in t.env.items()},
        )
        for w in config.workspaces
        for t in w.tools
    ]
    return agents, tools


def mcp_servers(config: SwitchboardConfig) -> list[McpServerSpec]:
    """Every workspace's MCP servers (their names are unique in the file)."""
    return [
        McpServerSpec(
            name=m.name,
            command=m.command,
            args=tuple(m.args),
            env={k: v.get_secret_value() for k, v in m.env.items()},
            url=m.url,
            headers={k: v.get_secret_value() for k, v in m.headers.items()},
            timeout_s=m.timeout_s,
            approval=_mcp_approval(m),
        )
        for w in config.workspaces
        for m in w.mcp_servers
    ]


def _mcp_approval(server: McpServerConfig) -> Approval | None:
    """`requires_approval = true`: every tool of the server; a list: those tools."""
    if server.requires_approval is False or server.requires_approval == []:
        return None
    tools = None if server.requires_approval is True else frozenset(server.requires_approval)
    return Approval(server.approval_timeout_s, tools)


async def open_runtime(
    config: SwitchboardConfig,
    *,
    provider: Provider | None = None,
    clock: Clock | None = None,
    resume: bool = True,
    secrets: Secrets | None = None,
    on_disabled: DisabledNotice = tell_disabled,
) -> Runtime:
    """The runtime of `config`; `secrets` (else the config's own) are masked in its ledger."""
    storage = config.storage
    if not storage.shared and storage.path != ":memory:":
        create_private(Path(storage.path))  # its -wal and -shm files take its mode
    agents, tools = runtime_roster(config)
    settings = RuntimeSettings(
        default_queue_mode=QueueMode(config.workspaces[0].queue_mode),
        queue_cap=config.queue.cap,
        drop_policy=DropPolicy(config.queue.drop_policy),
        collect_window_s=config.queue.collect_window_s,
        max_tokens=config.provider.max_tokens,
        context_window=config.provider.context_window,
        compact_at=config.provider.compact_at,
        keep_recent=config.provider.keep_recent,
        prices=PriceTable.with_overrides(config.provider.prices),
        max_rounds=config.provider.max_rounds,
        max_turn_tokens=config.provider.max_turn_tokens,
        max_repeated_calls=config.provider.max_repeated_calls,
    )
    clock = clock or SystemClock()
    return await Runtime.open(
        config.storage.location,
        provider=provider or build_provider(config.provider, clock),
        agents=agents,
        chains=build_chains(config, clock, on_disabled),
        command_tools=tools,
        mcp_tools=McpTools(mcp_servers(config)),
        settings=settings,
        clock=clock,
        extra_migrations={"bridge": MIGRATIONS},
        resume=resume,
        secrets=secrets if secrets is not None else Secrets(config.secret_values()),
    )
