"""What a session's worker and the child-agent tools need of the runtime.

`engine.Runtime` is the one implementation; `worker.py` and `children.py` depend on this
protocol instead of on the engine, so the engine imports them and nothing imports it back.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from runtime.agents import AgentSpec
from runtime.clock import Clock
from runtime.messages import InboundMessage
from runtime.models import Models
from runtime.providers.base import Provider
from runtime.results import RuntimeSettings, SubmitResult
from runtime.session import Session, WarmSessions
from runtime.store.store import Store
from runtime.store.writer import Writer
from runtime.turn_types import TurnDeps


class Host(Protocol):
    store: Store
    provider: Provider
    models: Models
    clock: Clock
    settings: RuntimeSettings
    agents: dict[str, AgentSpec]
    sessions: dict[str, Session]
    warm: WarmSessions  # whose history is kept between turns
    turn_deps: TurnDeps
    closing: bool  # the process is stopping: no turn starts

    async def submit(
        self,
        session_id: str,
        message: InboundMessage,
        also: Callable[[Writer, str], None] | None = None,
    ) -> SubmitResult: ...

    def children(self, session: Session) -> list[Session]: ...

    async def create_child_session(self, parent: Session, run_id: str) -> Session:
        """A private child agent of `parent`'s agent, in a session of its own."""
        ...
