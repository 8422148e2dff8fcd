"""What each session is doing, in people's words: where (the conversation by name), who wrote
there, which agent, what it does now ("running tool `shell`"), since when, its queue and its
last error.

Read from the store only, so `switchboard status` (another process) reads what `/status` and
the admin console read; every word comes from `texts`."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, tzinfo
from enum import StrEnum

from bridge import texts
from bridge.durations import duration as duration  # said the one way: bridge/durations.py
from bridge.places import Place, place
from bridge.session_names import name_sessions, read_tasks
from bridge.spend import words as spend_words
from bridge.store.records import ConversationName
from bridge.store.spend import Held, SpendStore
from bridge.store.store import BridgeStore
from runtime.messages import QueueStatus
from runtime.records import ApprovalRecord, RunRecord, RunStatus, SessionRecord, ToolCallRecord
from runtime.store.store import Store

ERROR_CHARS = 240  # of an error shown: it fits a phone's screen


class Doing(StrEnum):
    """What a session does now (the words are `texts.DOING_*`)."""

    THINKING = "thinking"
    RUNNING_TOOL = "running_tool"
    AWAITING_APPROVAL = "awaiting_approval"
    AWAITING_CHILD = "awaiting_child"
    HELD_BY_BUDGET = "held_by_budget"  # before its next model call (bridge/spend)
    QUEUED = "queued"
    INTERRUPTED = "interrupted"  # a turn left running by a process that is gone
    IDLE = "idle"


@dataclass(frozen=True, slots=True)
class Activity:
    session_id: str
    workspace_id: str
    agent: str  # as the config names it: "assistant", a child "assistant/child-1"
    parent_session_id: str | None
    where: str
    who: str | None  # who wrote there last (their name, else their operator id)
    doing: Doing
    tool: str | None  # the tool it runs, or waits to run
    child: str | None  # the child agent it waits for
    since: float | None  # wall time: when what it does now began
    turn_since: float | None  # wall time: when its running turn began
    queued: int  # messages waiting for a turn
    last_error: str | None  # of its latest turn, in plain words
    run_id: str | None
    running: bool  # Switchboard runs (else a running turn is one it left)
    budget: str | None = None  # the budget that holds its turn (`workspace/day`)
    # The session as people know it (`bridge/session_names.py`): "console (you), since 3 Dec
    # 14:02", "schedule `pulse`", "child of ...: <its task>"
    name: str = ""

    @property
    def active(self) -> bool:
        return self.doing is not Doing.IDLE

    def what(self, *, you: bool = False) -> str:
        """What it does now, in words; `you`: said to the operator it waits for."""
        match self.doing:
            case Doing.THINKING:
                return texts.DOING_THINKING
            case Doing.RUNNING_TOOL:
                return texts.DOING_TOOL.format(tool=self.tool)
            case Doing.AWAITING_APPROVAL:
                whom = (
                    texts.APPROVER_YOU
                    if you
                    else texts.APPROVER_NAMED.format(who=self.who)
                    if self.who
                    else texts.APPROVER_ANY
                )
                return texts.DOING_APPROVAL.format(whom=whom, tool=self.tool)
            case Doing.AWAITING_CHILD:
                return texts.DOING_CHILD.format(child=self.child)
            case Doing.HELD_BY_BUDGET:
                return spend_words.DOING_HELD.format(budget=self.budget)
            case Doing.QUEUED:
                return texts.DOING_QUEUED if self.running else texts.DOING_QUEUED_STOPPED
            case Doing.INTERRUPTED:
                return texts.DOING_INTERRUPTED
            case Doing.IDLE:
                return texts.DOING_IDLE
        raise AssertionError(f"no words for {self.doing!r}")

    def for_s(self, now: float) -> float | None:
        return None if self.since is None else max(0.0, now - self.since)

    def what_for(self, now: float, *, you: bool = False) -> str:
        """What it does and for how long: "running tool `sleep` for 3 s"."""
        elapsed = self.for_s(now)
        what = self.what(you=you)
        if elapsed is None or self.doing is Doing.INTERRUPTED:
            return what
        return texts.FOR.format(what=what, duration=duration(elapsed))

    def line(self, now: float) -> str:
        """One line of a list: the session's name, agent, what for how long, queue."""
        parts = [self.name or self.where, self.agent, self.what_for(now)]
        if self.queued:
            parts.append(texts.QUEUED_COUNT.format(count=self.queued))
        return " \u00b7 ".join(parts)


_MODEL_STATUS = re.compile(r"\bAPI (\d{3})\b")


def plain_error(error: str | None) -> str | None:
    """An error as an operator reads it: what went wrong, and what to do where we know."""
    if not error:
        return None
    if error.startswith("internal error: "):
        what = error.removeprefix("internal error: ").split("(", 1)[0]
        return texts.ERROR_INTERNAL.format(what=what)
    if error.startswith("could not reach the "):
        return texts.ERROR_MODEL_UNREACHABLE.format(detail=_short(error.split(": ", 1)[-1]))
    if found := _MODEL_STATUS.search(error):
        status = int(found.group(1))
        if status in (401, 403):
            return texts.ERROR_MODEL_KEY.format(status=status)
        if status in (429, 529):
            return texts.ERROR_MODEL_BUSY.format(status=status)
        detail = error[found.end() :].lstrip(" :")
        return texts.ERROR_MODEL_FAILED.format(status=status, detail=_short(detail))
    return _short(error)


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= ERROR_CHARS else text[: ERROR_CHARS - 1] + "\u2026"


def agent_name(agent_id: str) -> str:
    """The runtime's `<workspace>/<agent>[/child-n]` as the config names the agent."""
    return agent_id.split("/", 1)[-1]


def workspace_of(agent_id: str) -> str:
    return agent_id.split("/", 1)[0]


def conversation_key(record: SessionRecord) -> str | None:
    """The conversation a session was started for (`Sessions` records it at creation)."""
    key = record.metadata.get("conversation_key")
    return key if isinstance(key, str) else None


@dataclass(frozen=True, slots=True)
class _Facts:
    """What the store says of the sessions read, grouped by session id."""

    runs: Mapping[str, RunRecord]  # the running turn
    tools: Mapping[str, list[ToolCallRecord]]  # the running turn's calls
    approvals: Mapping[str, list[ApprovalRecord]]
    queued: Mapping[str, list[float]]  # when each waiting message came
    errors: Mapping[str, str]  # the latest turn's error, where it failed
    names: Mapping[str, ConversationName]
    held: Mapping[str, Held]  # run -> the budget that holds it
    tasks: Mapping[str, str]  # each child agent's task


class ActivityReader:
    """Reads what sessions do now; `running`: whether Switchboard runs them (when it does
    not, a turn still marked running is one the process left); `tz`: where the times in
    sessions' names are told."""

    def __init__(
        self,
        store: Store,
        bridge_store: BridgeStore,
        *,
        running: bool = True,
        tz: tzinfo = UTC,
    ) -> None:
        self._store = store
        self._bridge_store = bridge_store
        self._running = running
        self._tz = tz

    async def read(self, records: Sequence[SessionRecord]) -> list[Activity]:
        """The activity of each session, in the order given."""
        facts = await self._facts(records)
        places = {r.id: place(conversation_key(r), facts.names) for r in records}
        by_id = {r.id: r for r in records}
        names = name_sessions(records, facts.names, facts.tasks, self._tz)
        own = {
            r.id: replace(self._own(r, facts, _home(r, by_id, places)), name=names[r.id].full)
            for r in records
        }
        return [self._with_children(own[r.id], records, own) for r in records]

    async def _facts(self, records: Sequence[SessionRecord]) -> _Facts:
        ids = {r.id for r in records}
        store = self._store
        runs = {r.session_id: r for r in await store.runs(status=RunStatus.RUNNING)}
        runs = {sid: run for sid, run in runs.items() if sid in ids}
        tools = {sid: await store.tool_calls(run_id=run.id) for sid, run in runs.items()}
        approvals: dict[str, list[ApprovalRecord]] = defaultdict(list)
        for a in await store.approvals.pending(sorted(ids)):
            approvals[a.session_id].append(a)
        queued: dict[str, list[float]] = defaultdict(list)
        for m in await store.messages(statuses=[QueueStatus.QUEUED]):
            if m.session_id in ids:
                queued[m.session_id].append(m.created_at)
        return _Facts(
            runs,
            tools,
            approvals,
            queued,
            await self._errors(ids),
            await self._bridge_store.conversation_names(),
            await SpendStore(store).holds(run.id for run in runs.values()),
            await read_tasks(store, records),
        )

    async def _errors(self, ids: set[str]) -> dict[str, str]:
        """The error of each session whose latest turn failed (failures are rare: only the
        sessions with one are read further)."""
        failed = {r.session_id for r in await self._store.runs(status=RunStatus.FAILED)}
        errors = {}
        for sid in sorted(failed & ids):
            latest = await self._store.latest_run(sid)
            if latest is not None and latest.status is RunStatus.FAILED:
                errors[sid] = plain_error(latest.error) or texts.RUN_STATUS_WORDS[latest.status]
        return errors

    def _own(self, record: SessionRecord, facts: _Facts, home: Place) -> Activity:
        sid = record.id
        run = facts.runs.get(sid)
        waiting = facts.approvals.get(sid, [])
        queued = sorted(facts.queued.get(sid, []))
        doing, tool, since = self._doing(run, facts.tools.get(sid, []), waiting, queued)
        held = facts.held.get(run.id) if run is not None and self._running else None
        if held is not None and doing in (Doing.THINKING, Doing.RUNNING_TOOL):
            doing, tool, since = Doing.HELD_BY_BUDGET, None, held.since
        return Activity(
            session_id=sid,
            workspace_id=workspace_of(record.agent_id),
            agent=agent_name(record.agent_id),
            parent_session_id=record.parent_session_id,
            where=home.where,
            who=home.who,
            doing=doing,
            tool=tool,
            child=None,
            since=since,
            turn_since=run.started_at if run is not None else None,
            queued=len(queued),
            last_error=facts.errors.get(sid),
            run_id=run.id if run is not None else None,
            running=self._running,
            budget=held.budget if held is not None else None,
        )

    def _doing(
        self,
        run: RunRecord | None,
        calls: list[ToolCallRecord],
        waiting: list[ApprovalRecord],
        queued: list[float],
    ) -> tuple[Doing, str | None, float | None]:
        """What a session does (the tool, if one), and since when."""
        if waiting:
            return Doing.AWAITING_APPROVAL, waiting[0].tool, waiting[0].created_at
        if run is not None and not self._running:
            return Doing.INTERRUPTED, None, run.started_at
        if run is not None:
            if running := [c for c in calls if c.status is None]:
                return Doing.RUNNING_TOOL, running[0].name, running[0].started_at
            ends = [c.finished_at for c in calls if c.finished_at is not None]
            return Doing.THINKING, None, max([run.started_at, *ends])
        if queued:
            return Doing.QUEUED, None, queued[0]
        return Doing.IDLE, None, None

    def _with_children(
        self, own: Activity, records: Iterable[SessionRecord], every: Mapping[str, Activity]
    ) -> Activity:
        """An idle parent whose child agent works waits for it."""
        if own.active:
            return own
        for r in records:
            child = every[r.id]
            if r.parent_session_id == own.session_id and child.active:
                return replace(
                    own, doing=Doing.AWAITING_CHILD, child=child.agent, since=child.turn_since
                )
        return own


def _home(
    record: SessionRecord, by_id: Mapping[str, SessionRecord], places: Mapping[str, Place]
) -> Place:
    """A session's conversation; a child agent's is its parent's (where its output goes)."""
    while (parent := by_id.get(record.parent_session_id or "")) is not None:
        record = parent
    return places[record.id]
