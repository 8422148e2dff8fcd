"""Operators' answers to tool calls that wait for approval (issue 15): the request as people
read it (the agent, the tool, its input with secret-named values masked; the secrets the
process knows are masked on the way out, like all text), and /approve and /deny, typed
or pressed (the buttons send them, about the request they sit on). The same commands answer
a pairing request (issue 17): its buttons, or `/approve CODE`."""

from __future__ import annotations

import json
import re
from typing import Any

from bridge import texts
from bridge.durations import duration as duration  # said the one way: bridge/durations.py
from bridge.pairing import Pairing, is_code
from bridge.sessions import Sessions
from bridge.types import Route
from config.schema import WorkspaceConfig
from config.secrets import MASK
from runtime.engine import Runtime
from runtime.payloads import ApprovalRequested
from runtime.records import ApprovalRecord, ApprovalStatus

# Keys whose values are secrets by their name, whatever the value.
SECRET_KEY = re.compile(
    r"pass(word|wd|phrase)?$|secret|token|api[_-]?key|authorization|credential|"
    r"private[_-]?key|cookie",
    re.IGNORECASE,
)
INPUT_CHARS = 1_500  # of the input shown; the rest is cut


def masked(value: Any) -> Any:
    """`value` with the values of secret-named keys (a password, a token) masked, whatever
    they are: secrets the process never knew."""
    if isinstance(value, dict):
        return {
            k: MASK if SECRET_KEY.search(str(k)) and v not in (None, "") else masked(v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [masked(v) for v in value]
    return value


def request_text(asked: ApprovalRequested, now: float) -> str:
    shown = json.dumps(masked(asked.input), indent=2, ensure_ascii=False)
    if len(shown) > INPUT_CHARS:
        shown = shown[:INPUT_CHARS] + "\n\u2026 (cut)"
    agent = asked.agent_id.split("/", 1)[-1]
    text = texts.APPROVAL_REQUEST.format(
        agent=agent,
        tool=asked.tool,
        input=shown.replace("```", "`\u200b``"),
        within=duration(asked.deadline - now if asked.reshown else asked.timeout_s),
        id=asked.approval_id,
    )
    return texts.APPROVAL_RESHOWN + text if asked.reshown else text


class Approving:
    """/approve and /deny: about the request a button sits on (or a reply points at), the one
    named by its id, or the only one waiting in the conversation."""

    def __init__(self, runtime: Runtime, sessions: Sessions, pairing: Pairing | None) -> None:
        self._runtime = runtime
        self._sessions = sessions
        self._pairing = pairing

    async def answer(
        self,
        approve: bool,
        *,
        argument: str,
        pointed: tuple[str, str] | None,
        route: Route,
        workspace: WorkspaceConfig,
        operator_id: str,
    ) -> str:
        kind, ref = pointed or ("", "")
        if self._pairing is not None and (kind == "pairing" or (not kind and is_code(argument))):
            return await self._pairing.answer(ref or argument, approve, workspace, operator_id)
        approval_id = ref or argument.strip() or None
        if approval_id is None:
            waiting = await self._waiting_here(route)
            if not waiting:
                return texts.NO_APPROVAL_PENDING
            if len(waiting) > 1:
                lines = "\n".join(
                    texts.APPROVAL_LINE.format(
                        id=a.id, tool=a.tool, agent=a.agent_id.split("/", 1)[-1]
                    )
                    for a in waiting
                )
                return texts.APPROVALS_PENDING.format(count=len(waiting), lines=lines)
            approval_id = waiting[0].id
        record = await self._runtime.approvals.get(approval_id)
        if record is None or record.agent_id.split("/", 1)[0] != workspace.id:
            return texts.NO_SUCH_APPROVAL.format(id=approval_id)
        status = ApprovalStatus.APPROVED if approve else ApprovalStatus.DENIED
        decision = await self._runtime.approvals.decide(approval_id, status, operator_id)
        if decision is None:
            return texts.NO_SUCH_APPROVAL.format(id=approval_id)
        if not decision.changed:
            return already(decision.record)
        return (texts.APPROVAL_APPROVED if approve else texts.APPROVAL_DENIED).format(
            tool=record.tool
        )

    async def _waiting_here(self, route: Route) -> list[ApprovalRecord]:
        """The requests of this conversation's session and of its private children (theirs
        come to their parent's conversation)."""
        session_id = self._sessions.session_of(route)
        session = self._runtime.sessions.get(session_id) if session_id else None
        if session is None:
            return []
        ids = [session.id, *(c.id for c in self._runtime.children(session))]
        return await self._runtime.approvals.pending(ids)


def already(record: ApprovalRecord) -> str:
    by = f" by {record.decided_by}" if record.decided_by else ""
    return texts.APPROVAL_ALREADY.format(status=texts.APPROVAL_STATUS_WORDS[record.status], by=by)
