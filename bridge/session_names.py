"""Sessions as people know them, never by id: the conversation's name and who wrote there
("console (you)", "Telegram, DM with Alice"), the schedule or trigger that started it
("schedule `pulse`"), or "child of <its parent's name>: <the task it was given>".

Several sessions of one conversation (`/new` starts another) are told apart by when: the
current one "since 3 Dec 14:02", an earlier one "1 Dec 09:10 to 3 Dec 14:02, ended by /new"
(its end's date left out when it is its start's); a schedule's fresh sessions by when each
started. `ordered` puts them as a list
reads best: each conversation's current session first, then its earlier ones, each session's
child agents after it. The console shows an id only as a tooltip, `--json` as a field.

Pure over what the store holds (`read_tasks` reads the one thing a record lacks: the task a
child agent was given), so `switchboard status` and `switchboard usage` (other processes)
name sessions as the console does; every word is in `texts`."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, tzinfo

from bridge import texts
from bridge.places import place
from bridge.spend.periods import period_bounds
from bridge.spend.report import TOP_SESSIONS, UsageReport
from bridge.store.records import ConversationName
from bridge.store.store import BridgeStore
from config.timing import zone
from runtime.messages import MessageKind
from runtime.records import SessionRecord
from runtime.spend import Spend
from runtime.store.store import Store
from runtime.store.usage import UsageFilter, UsageLedger

TASK_CHARS = 60  # of a child agent's task, in its name: a phone's line
STARTERS = ("schedule", "trigger")  # the session metadata keys a run's source leaves


@dataclass(frozen=True, slots=True)
class SessionName:
    """`base`: what started it or where it lives; `when`: what tells it from the others of
    its conversation (None: it is the only one)."""

    session_id: str
    base: str
    when: str | None = None

    @property
    def full(self) -> str:
        return self.base if self.when is None else f"{self.base}, {self.when}"


def moment(wall: float, tz: tzinfo = UTC) -> str:
    """ "3 Dec 14:02" in `tz`."""
    at = datetime.fromtimestamp(wall, tz)
    return f"{at.day} {at:%b %H:%M}"


def conversation_key(record: SessionRecord) -> str | None:
    key = record.metadata.get("conversation_key")
    return key if isinstance(key, str) else None


def starter(record: SessionRecord) -> str | None:
    """ "schedule `pulse`" / "trigger `deploy`" for a session a schedule or trigger started."""
    for kind in STARTERS:
        if isinstance(name := record.metadata.get(kind), str):
            return texts.SESSION_STARTED_BY.format(kind=kind, name=name)
    return None


def _group(record: SessionRecord) -> str | None:
    """What sessions told apart by when share: a conversation, a schedule or trigger."""
    if (key := conversation_key(record)) is not None:
        return f"conversation {key}"
    for kind in STARTERS:
        if isinstance(name := record.metadata.get(kind), str):
            return f"{kind} {name}"
    return None


def shorten(text: str, chars: int = TASK_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= chars else text[: chars - 1].rstrip() + "\u2026"


def name_sessions(
    records: Sequence[SessionRecord],
    names: Mapping[str, ConversationName],
    tasks: Mapping[str, str] | None = None,
    tz: tzinfo = UTC,
) -> dict[str, SessionName]:
    """Each session's name, by id; `records` should hold every session of a conversation
    (to tell them apart) and each child's parent; `tasks`: each child agent's task, by id."""
    tasks = tasks or {}
    by_id = {r.id: r for r in records}
    siblings: dict[str, list[SessionRecord]] = defaultdict(list)
    for r in records:
        if r.parent_session_id is None and (group := _group(r)) is not None:
            siblings[group].append(r)
    found: dict[str, SessionName] = {}

    def named(record: SessionRecord, depth: int = 0) -> SessionName:
        if (known := found.get(record.id)) is not None:
            return known
        parent = by_id.get(record.parent_session_id or "")
        if record.parent_session_id is not None:
            of = named(parent, depth + 1).base if parent and depth < 8 else texts.SESSION_PARENT
            task = tasks.get(record.id)
            base = texts.SESSION_CHILD.format(parent=of)
            if task:
                base = texts.SESSION_CHILD_TASK.format(parent=of, task=shorten(task))
            result = SessionName(record.id, base)
        else:
            result = SessionName(record.id, _base(record, names), _when(record, siblings, tz))
        found[record.id] = result
        return result

    for r in records:
        named(r)
    return found


def _base(record: SessionRecord, names: Mapping[str, ConversationName]) -> str:
    if (started := starter(record)) is not None:
        return started
    home = place(conversation_key(record), names)
    if home.who and home.who not in home.where:
        return f"{home.where} ({home.who})"
    return home.where


def _when(
    record: SessionRecord, siblings: Mapping[str, Sequence[SessionRecord]], tz: tzinfo
) -> str | None:
    group = _group(record)
    others = sorted(siblings.get(group, ()) if group else (), key=lambda r: (r.created_at, r.id))
    if len(others) < 2:
        return None if group else texts.SESSION_STARTED.format(at=moment(record.created_at, tz))
    if group is not None and not group.startswith("conversation "):
        return texts.SESSION_STARTED.format(at=moment(record.created_at, tz))
    at = others.index(record)
    if at == len(others) - 1:
        return texts.SESSION_CURRENT.format(since=moment(record.created_at, tz))
    start, end = record.created_at, others[at + 1].created_at
    until = moment(end, tz)
    if datetime.fromtimestamp(start, tz).date() == datetime.fromtimestamp(end, tz).date():
        until = f"{datetime.fromtimestamp(end, tz):%H:%M}"
    return texts.SESSION_EARLIER.format(since=moment(start, tz), until=until)


def ordered(records: Iterable[SessionRecord]) -> list[SessionRecord]:
    """As a list reads best: conversations (and schedules) in the order they began, each's
    current session first, then its earlier ones, newest first; a session's child agents
    right after it, in the order they were spawned."""
    every = list(records)
    by_id = {r.id: r for r in every}
    children: dict[str, list[SessionRecord]] = defaultdict(list)
    roots = []
    for r in sorted(every, key=lambda r: (r.created_at, r.id)):
        if r.parent_session_id in by_id:
            children[r.parent_session_id or ""].append(r)
        else:
            roots.append(r)
    begun: dict[str, float] = {}
    for r in roots:
        begun.setdefault(_group(r) or r.id, r.created_at)
    roots.sort(key=lambda r: (begun[_group(r) or r.id], -r.created_at, r.id))
    out: list[SessionRecord] = []

    def add(record: SessionRecord) -> None:
        out.append(record)
        for child in children.get(record.id, ()):
            add(child)

    for r in roots:
        add(r)
    return out


_TASKS: dict[str, str] = {}  # a child's task never changes: read once (ids are unique)
TASKS_KEPT = 4096


async def read_tasks(store: Store, records: Iterable[SessionRecord]) -> dict[str, str]:
    """The task each child agent among `records` was given (its first task request)."""
    tasks = {}
    for r in records:
        if r.parent_session_id is None:
            continue
        if (known := _TASKS.get(r.id)) is not None:
            tasks[r.id] = known
            continue
        for entry in await store.messages(session_id=r.id):
            if entry.message.kind is MessageKind.TASK_REQUEST:
                tasks[r.id] = entry.message.text
                if len(_TASKS) >= TASKS_KEPT:
                    _TASKS.clear()
                _TASKS[r.id] = entry.message.text
                break
    return tasks


async def costliest_sessions(
    ledger: UsageLedger, report: UsageReport, now: float, top: int = TOP_SESSIONS
) -> list[tuple[str, Spend]]:
    """This month's sessions of the report's workspace that used the most, largest first:
    by dollars, then by tokens (a model without a price costs $0.00, and its sessions rank by
    what they used), then by id; the `top` of them."""
    start, end = period_bounds("month", zone(report.timezone), now)
    month = UsageFilter(start, end, agent_prefix=f"{report.workspace_id}/")
    found = [(s or "", spend) for s, spend in await ledger.grouped(month, "session_id")]
    return sorted(found, key=lambda kv: (-kv[1].cost_usd, -kv[1].tokens, kv[0]))[:top]


async def session_labels(
    store: Store, bridge_store: BridgeStore, workspace_id: str, tz: tzinfo = UTC
) -> dict[str, str]:
    """Each session of the workspace as a ranking names it, "<name> · <agent>", by id: read
    from the store alone (`switchboard usage`, another process)."""
    records = [r for r in await store.sessions() if r.agent_id.split("/", 1)[0] == workspace_id]
    names = name_sessions(
        records, await bridge_store.conversation_names(), await read_tasks(store, records), tz
    )
    return {r.id: f"{names[r.id].full} \u00b7 {r.agent_id.split('/', 1)[-1]}" for r in records}
