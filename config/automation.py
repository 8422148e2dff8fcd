"""Work with no operator message: `[[workspaces.schedules]]` (cron, every, at; heartbeats)
and `[[workspaces.triggers]]` (signed events at POST /hooks/{workspace}/{trigger})."""

from __future__ import annotations

from collections import Counter
from datetime import datetime
from typing import Annotated, Literal

from pydantic import (
    Field,
    SecretStr,
    ValidationError,
    ValidatorFunctionWrapHandler,
    field_validator,
    model_validator,
)

from config.admin import MIN_TOKEN_CHARS, TOKEN_HINT
from config.fields import bounded
from config.problems import Problem, did_you_mean, raise_all
from config.strict import Strict
from config.timing import (
    ActiveHours,
    TimezoneName,
    Timing,
    check_cron,
    jitter_for,
    parse_duration,
    zone,
)

Identifier = Annotated[str, Field(pattern=r"^[A-Za-z0-9_.-]{1,64}$")]

HEARTBEAT_OK = "HEARTBEAT_OK"
"""A heartbeat's answer that starts with this says nothing needs attention: not delivered."""

HEARTBEAT_PROMPT = (
    "Heartbeat: check on what you are looking after. If nothing needs an operator's attention, "
    f"answer with exactly {HEARTBEAT_OK} and nothing else; otherwise say what needs it."
)

MAX_EVERY_S = 366 * 86_400.0
TIMES = 'cron = "0 9 * * 1-5", every = "15m" or at = "2026-12-01T09:00:00+01:00"'

Deliver = Annotated[str, Field(min_length=1, max_length=64)]
""""primary", an operator id, or "silent" (only the agent's notifications reach anyone)."""


MAX_PROMPT_CHARS = 8_000
MAX_ID_CHARS = 64
MIN_EVERY = "60s"
"""The shortest `every` by default: each run is a model call on the server's key. Only the
server's own `[server] schedule_min_every` lowers it, never a workspace's admin."""

# A schedule's fields as typed (in the file or the console's form): each bounded, none with
# a raw control character (config/fields.py).
ShortText = Annotated[str, bounded(MAX_ID_CHARS)]
TimingText = Annotated[str, bounded(200)]


class ScheduleConfig(Strict):
    id: Annotated[Identifier, bounded(MAX_ID_CHARS)]
    agent: ShortText
    kind: Literal["prompt", "heartbeat"] = "prompt"
    cron: TimingText | None = None
    every: ShortText | None = None  # "15m", "5s", "1d"; not under [server] schedule_min_every
    at: datetime | None = None  # once, ISO 8601; without an offset it is in `timezone`
    timezone: Annotated[TimezoneName, bounded(MAX_ID_CHARS)] = "UTC"
    prompt: Annotated[str, bounded(MAX_PROMPT_CHARS, lines=True)] | None = None
    session: Literal["own", "fresh"] = "own"
    deliver: Annotated[Deliver, bounded(MAX_ID_CHARS)] = "primary"
    active_hours: ShortText | None = None  # "08:00-20:00", in `timezone`
    max_rounds: int = Field(20, ge=1, le=500)
    enabled: bool = True

    _cron = field_validator("cron")(lambda v: v if v is None else check_cron(v))

    @field_validator("every")
    @classmethod
    def _every(cls, text: str | None) -> str | None:
        if text is not None and parse_duration(text) < 1:
            raise ValueError(f"every = {text!r} is under a second; the shortest is 1s")
        if text is not None and parse_duration(text) > MAX_EVERY_S:
            raise ValueError(
                f'every = {text!r} is over a year; for rarer runs use cron (e.g. "0 9 1 1 *") or at'
            )
        return text

    @field_validator("at", mode="wrap")
    @classmethod
    def _at(cls, value: object, handler: ValidatorFunctionWrapHandler) -> datetime | None:
        try:
            moment: datetime | None = handler(value)
        except ValidationError:
            typed = f"{value!r}" if len(repr(value)) <= MAX_ID_CHARS else "that"
            raise ValueError(
                f"at = {typed} is not a date and time; write ISO 8601, e.g. "
                "2026-12-01T09:00:00+01:00 (without the offset it is in `timezone`)"
            ) from None
        return moment

    @field_validator("active_hours")
    @classmethod
    def _hours(cls, text: str | None) -> str | None:
        if text is not None:
            ActiveHours.parse(text)
        return text

    @model_validator(mode="after")
    def _one_timing(self) -> ScheduleConfig:
        given = [k for k in ("cron", "every", "at") if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError(
                f"schedule {self.id!r} needs exactly one of cron, every or at (it has "
                f"{' and '.join(given) or 'none'}): {TIMES}"
            )
        if self.kind == "prompt" and not (self.prompt or "").strip():
            raise ValueError(
                f"schedule {self.id!r} needs a prompt: what the agent should do at each run "
                '(or kind = "heartbeat", which asks the agent to check in)'
            )
        if self.at is None and self.timing.next_after(datetime.now(self.timing.tz)) is None:
            raise ValueError(self._never_fires())
        return self

    def _never_fires(self) -> str:
        when = (
            f"cron {self.cron!r}" if self.cron else f"every {self.every!r} (counted from 1970 UTC)"
        )
        if self.active_hours is None:
            return f"schedule {self.id!r} never fires: {when} names no time to come; change it"
        return (
            f"schedule {self.id!r} never fires: no time of {when} falls inside its "
            f"active_hours {self.active_hours!r} in {self.timezone}; widen active_hours or "
            f"change the {'cron' if self.cron else 'every'}"
        )

    @property
    def timing(self) -> Timing:
        tz = zone(self.timezone)
        every_s = parse_duration(self.every) if self.every is not None else None
        at = self.at.replace(tzinfo=tz) if self.at and self.at.tzinfo is None else self.at
        period = every_s if every_s is not None else (None if self.cron else 0.0)
        return Timing(
            tz=tz,
            cron=self.cron,
            every_s=every_s,
            at=at,
            active=ActiveHours.parse(self.active_hours) if self.active_hours else None,
            jitter_s=jitter_for(self.id, period),
        )

    @property
    def text(self) -> str:
        """What the agent is asked at each fire."""
        if self.kind == "heartbeat":
            extra = f"\n\n{self.prompt.strip()}" if self.prompt and self.prompt.strip() else ""
            return HEARTBEAT_PROMPT + extra
        return (self.prompt or "").strip()


class TriggerConfig(Strict):
    id: Identifier
    agent: str
    # "github": X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the body>, the delivery id in
    # X-GitHub-Delivery (a GUID), the event's name in X-GitHub-Event ([a-z_]+). "hmac":
    # X-Signature: sha256=<hex>, an optional delivery id in X-Delivery-Id.
    kind: Literal["github", "hmac"] = "hmac"
    secret: SecretStr
    prompt: str = Field(min_length=1)
    session: Literal["own", "fresh"] = "own"
    deliver: Deliver = "primary"
    max_rounds: int = Field(20, ge=1, le=500)
    max_body_bytes: int = Field(256 * 1024, ge=1, le=4 * 1024 * 1024)
    # "hmac" only: the sender signs `<X-Signature-Timestamp>.<body>` (Unix seconds), and a
    # request more than 5 minutes from now is refused.
    require_timestamp: bool = False
    enabled: bool = True

    @model_validator(mode="after")
    def _timestamp_signed_by_hmac(self) -> TriggerConfig:
        if self.require_timestamp and self.kind != "hmac":
            raise ValueError(
                f'trigger {self.id!r}: require_timestamp is for kind = "hmac" senders; GitHub '
                "signs no timestamp (remove require_timestamp)"
            )
        return self

    @field_validator("secret")
    @classmethod
    def _strong(cls, secret: SecretStr) -> SecretStr:
        """Anyone who can guess it can wake the agent over HTTP: refuse short ones."""
        if len(secret.get_secret_value()) < MIN_TOKEN_CHARS:
            raise ValueError(
                f"a trigger's secret must be at least {MIN_TOKEN_CHARS} characters; make one "
                f"with {TOKEN_HINT}, give it to the sender (GitHub: the webhook's Secret) and "
                "pass it here as ${VAR} from the environment"
            )
        return secret


def check_floor(text: str) -> str:
    """`[server] schedule_min_every`: a duration of at least a second."""
    if parse_duration(text) < 1:
        raise ValueError(f"schedule_min_every = {text!r} is under a second; the shortest is 1s")
    return text


def check_every_floor(schedules: dict[str, list[ScheduleConfig]], floor: str) -> None:
    """No workspace's schedule (by workspace id) runs more often than the server's floor;
    each one that does is said at its own `every` (its line in the file, its field in the
    console's form), not at the file's top level."""
    floor_s = parse_duration(floor)
    raise_all(
        [
            Problem(
                f"every = {schedule.every!r} is under this server's floor of {floor} (each "
                f"run is a model call); use {floor} or more, or cron. Whoever runs the "
                "server may lower the floor with schedule_min_every under [server] in the "
                "config file",
                ("workspaces", workspace_id, "schedules", index, "every"),
            )
            for workspace_id, listed in schedules.items()
            for index, schedule in enumerate(listed)
            if schedule.every is not None and parse_duration(schedule.every) < floor_s
        ]
    )


def check_automation(
    schedules: list[ScheduleConfig],
    triggers: list[TriggerConfig],
    agent_ids: list[str],
    operator_ids: list[str],
) -> None:
    """Ids unique in the workspace; each names a configured agent and a known recipient."""
    found: list[Problem | str] = []
    for kind, ids in (
        ("schedule", [s.id for s in schedules]),
        ("trigger", [t.id for t in triggers]),
    ):
        twice = sorted(i for i, n in Counter(ids).items() if n > 1)
        found += [
            f"{kind} id {t!r} is defined twice; give each {kind} an id of its own" for t in twice
        ]
    recipients = ["primary", "silent", *operator_ids]
    items: list[tuple[str, int, ScheduleConfig | TriggerConfig]]
    items = [("schedule", i, s) for i, s in enumerate(schedules)]
    items += [("trigger", i, t) for i, t in enumerate(triggers)]
    for kind, i, item in items:
        if item.agent not in agent_ids:
            found.append(
                Problem(
                    f"{kind} {item.id!r}: agent = {item.agent!r} is not an agent of this "
                    f"workspace{did_you_mean(item.agent, agent_ids)}; use one of {agent_ids}",
                    (f"{kind}s", i, "agent"),
                )
            )
        if item.deliver not in recipients:
            found.append(
                Problem(
                    f'{kind} {item.id!r}: deliver = {item.deliver!r} must be "primary", '
                    f'"silent" or an operator id: {operator_ids}'
                    f"{did_you_mean(item.deliver, recipients)}",
                    (f"{kind}s", i, "deliver"),
                )
            )
    raise_all(found)
