"""The admin's file as pydantic models (DESIGN §4). Unknown keys are errors: a typo must
never be silently ignored."""

from __future__ import annotations

from typing import Annotated, Any, Literal
from urllib.parse import parse_qs, urlsplit

from pydantic import (
    BaseModel,
    Field,
    SecretStr,
    ValidationInfo,
    field_validator,
    model_validator,
)

from config.admin import AdminConfig, WorkspaceAdminConfig, strong
from config.automation import (
    MIN_EVERY,
    ScheduleConfig,
    TriggerConfig,
    check_automation,
    check_every_floor,
    check_floor,
)
from config.bindings import BindingConfig, RespondTo, check_bindings, no_all_with_others
from config.budgets import BudgetConfig, check_budgets
from config.consistency import (
    check_admin_tokens,
    check_agent_tools,
    check_console,
    check_default_agent,
    check_defined_once,
    check_not_shared,
    check_one_primary,
    check_some_place,
    check_tool_names,
)
from config.mcp import (
    APPROVAL_TIMEOUT_S,
    MAX_APPROVAL_TIMEOUT_S,
    McpServerConfig,
    url_secrets,
)
from config.memory import MEMORY_TOOLS, MemoryConfig
from config.platform_sections import PlatformSection, sections
from config.platforms import ConsoleConfig
from config.problems import gather, settle
from config.providers import (
    Link,
    ModelChoice,
    ProviderConfig,
    ProviderEntry,
    chain_of,
    check_provider_names,
)
from config.strict import Strict
from config.timing import TimezoneName
from config.wakeups import WakeupsConfig

Identifier = Annotated[str, Field(pattern=r"^[A-Za-z0-9_.-]{1,64}$")]
QueueModeName = Literal["steer", "followup", "collect", "interrupt"]


class ServerConfig(Strict):
    host: str = "127.0.0.1"
    port: int = Field(8780, ge=0, le=65535)
    public_url: str | None = None
    # "process": the platforms' HTTP doors run in a process of their own, which stores each
    # request and answers the platform without waiting on turns (SQLite; replicas on
    # PostgreSQL keep them inline). "inline": everything in one process.
    intake: Literal["process", "inline"] = "process"
    # `/metrics` names the workspaces: it answers a client on this machine, or one that sends
    # `Authorization: Bearer <metrics_token>` (set it to scrape from another host).
    metrics_token: SecretStr | None = None
    # The shortest `every` of any workspace's schedule (a workspace's admin cannot go under).
    schedule_min_every: str = MIN_EVERY
    # At a stop (SIGTERM, Ctrl-C), how long running turns get to reach their next safe point
    # (a model call is cut at once; tools run to their end), so a restart or another replica
    # resumes them with nothing cut. Past it, what still runs is cut as a crash would cut it.
    stop_grace_s: float = Field(default=20.0, ge=0.0, le=600.0)

    _strong = field_validator("metrics_token")(strong)
    _floor = field_validator("schedule_min_every")(check_floor)


class StorageConfig(Strict):
    """Where Switchboard keeps its state: a SQLite file (`path`, the default: one process),
    or a PostgreSQL database (`url`: several replicas may share it). One or the other."""

    path: str = "var/switchboard.db"
    url: SecretStr | None = None  # postgresql://user:${PGPASSWORD}@host:5432/database
    # PostgreSQL: how long the active replica's lease lasts without a renewal; a standby takes
    # over within this (plus a second) of the active replica's death.
    lease_ttl_s: float = Field(default=10.0, ge=2.0, le=300.0)
    # PostgreSQL: the most sessions one replica runs at once; each takes its share of the
    # fleet's sessions with work, up to this.
    max_sessions: int = Field(default=1000, ge=1)

    @field_validator("url")
    @classmethod
    def _postgresql(cls, url: SecretStr | None) -> SecretStr | None:
        if url is not None and not url.get_secret_value().startswith(
            ("postgresql://", "postgres://")
        ):
            raise ValueError(
                "must be a PostgreSQL URL: postgresql://user:${PGPASSWORD}@host:5432/database"
            )
        return url

    @model_validator(mode="after")
    def _one_place(self) -> StorageConfig:
        if self.url is not None and "path" in self.model_fields_set:
            raise ValueError("set either path (a SQLite file) or url (PostgreSQL), not both")
        return self

    @property
    def location(self) -> str:
        """What the store opens: the URL, or the file's path."""
        return self.url.get_secret_value() if self.url is not None else self.path

    @property
    def shared(self) -> bool:
        """Several processes may run on it (PostgreSQL)."""
        return self.url is not None

    @property
    def described(self) -> str:
        """For people: the file, or the server and database (never the password)."""
        if self.url is None:
            return f"SQLite file {self.path}"
        parts = urlsplit(self.url.get_secret_value())
        host = parts.hostname or parse_qs(parts.query).get("host", ["localhost"])[0]
        port = parts.port or 5432
        database = parts.path.lstrip("/") or parts.username or "postgres"
        where = host if host.startswith("/") else f"{host}:{port}"
        return f"PostgreSQL {where}/{database}"


class LoggingConfig(Strict):
    level: Literal["debug", "info", "warning", "error"] = "info"
    # "text": a line per event for people; "json": one JSON object per line for a log
    # collector. `switchboard run --log-format` overrides it.
    format: Literal["text", "json"] = "text"
    # Also write log lines here, rotated. With a console chat in the terminal, log lines go
    # only to a file (this one, else switchboard.log beside the database).
    file: str | None = None
    max_bytes: int = Field(10_000_000, ge=1024)
    backups: int = Field(5, ge=0)


class QueueConfig(Strict):
    cap: int = Field(100, ge=1)
    drop_policy: Literal["oldest", "newest"] = "oldest"
    collect_window_s: float = Field(2.0, gt=0)


# Telegram redelivers a webhook update for up to 24 hours, Slack retries an event for about an
# hour: a platform id forgotten sooner would let a retry through as a new message.
DEDUPE_FLOOR_DAYS = 1.0


class RetentionConfig(Strict):
    """How long the store keeps what nothing needs any more; 0 keeps that kind forever."""

    events_days: float = Field(30.0, ge=0)  # ledger events the bridge has handled
    delivered_days: float = Field(7.0, ge=0)  # deliveries accepted by the platform, or failed
    dedupe_days: float = Field(2.0, ge=0)  # platform ids seen, so a retry is dropped
    interval_s: float = Field(3600.0, ge=0)  # how often pruning runs; 0: never

    @field_validator("dedupe_days")
    @classmethod
    def _outlasts_platform_retries(cls, days: float) -> float:
        if 0 < days < DEDUPE_FLOOR_DAYS:
            raise ValueError(
                f"dedupe_days must be at least {DEDUPE_FLOOR_DAYS:g} (Telegram redelivers an "
                "update for up to 24 hours, Slack retries for about an hour), or 0 to keep "
                f"every platform id forever; got {days:g}"
            )
        return days


FileKindName = Literal["image", "pdf", "text"]
MB = 1024 * 1024


class AttachmentsConfig(Strict):
    """Files operators send the agent: which kinds pass, how many, how large. The caps are the
    Anthropic API's (images 5 MB, PDFs 32 MB and 100 pages); Telegram lets a bot download at
    most 20 MB whatever is set here."""

    kinds: list[FileKindName] = ["image", "pdf", "text"]
    max_files: int = Field(5, ge=0, le=20)  # per message; the rest are not passed on
    max_image_bytes: int = Field(5 * MB, ge=1, le=5 * MB)
    max_pdf_bytes: int = Field(20 * MB, ge=1, le=32 * MB)
    max_pdf_pages: int = Field(100, ge=1, le=100)
    max_text_bytes: int = Field(256 * 1024, ge=1, le=4 * MB)


class OperatorConfig(Strict):
    id: Identifier
    primary: bool = False
    # Then each platform's `<name>_user_id`, and `notify_via` one of their names or "console"
    # (config/learning.py).
    notify_via: str | None = None


class PairingConfig(Strict):
    """DM pairing: a direct message from someone who is not an operator gets a code the
    workspace's operators can approve (`switchboard pairing approve CODE`, a button, the
    console), making them an operator. Off unless enabled."""

    enabled: bool = False
    code_ttl_s: float = Field(3600.0, ge=1, le=7 * 86_400)
    max_pending: int = Field(3, ge=1, le=100)  # codes waiting at once; past that, none new


class AgentConfig(ModelChoice):
    id: Identifier
    system_prompt: str = ""
    tools: list[str] = ["notify_operator", "sleep", "spawn_agent", "schedule_wakeup"]


class ToolConfig(Strict):
    name: Annotated[str, Field(pattern=r"^[a-zA-Z0-9_-]{1,64}$")]
    description: str
    command: list[str] = Field(min_length=1)
    timeout_s: float = Field(600, gt=0)
    input_schema: dict[str, Any] = {"type": "object", "properties": {}}
    # The tool's environment is PATH, HOME, LANG and TZ, plus these (values may be ${VAR});
    # nothing else of Switchboard's own environment (its tokens, the model key) is passed.
    # The values count as secrets: masked wherever they could be shown.
    env: dict[Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")], SecretStr] = {}
    # Each call waits for an operator's Approve (or /approve) before it runs; no answer
    # within approval_timeout_s is a no.
    requires_approval: bool = False
    approval_timeout_s: float = Field(APPROVAL_TIMEOUT_S, gt=0, le=MAX_APPROVAL_TIMEOUT_S)


BUILTIN_TOOLS = ("notify_operator", "sleep", "spawn_agent", "schedule_wakeup")


class WorkspaceConfig(ModelChoice):
    id: Identifier
    queue_mode: QueueModeName = "steer"
    default_agent: str
    # Each platform's section goes here, `[workspaces.<name>]` (config/learning.py).
    console: ConsoleConfig | None = None
    operators: list[OperatorConfig] = Field(min_length=1)
    agents: list[AgentConfig] = Field(min_length=1)
    tools: list[ToolConfig] = []
    mcp_servers: list[McpServerConfig] = []
    bindings: list[BindingConfig] = []
    admins: list[WorkspaceAdminConfig] = []
    pairing: PairingConfig = PairingConfig()
    schedules: list[ScheduleConfig] = []  # work on a clock (config/automation.py)
    triggers: list[TriggerConfig] = []  # work on a signed event: POST /hooks/{workspace}/{id}
    budgets: list[BudgetConfig] = []  # spend limits, checked before each model call
    timezone: TimezoneName = "UTC"  # where a budget's day and month begin and end
    wakeups: WakeupsConfig = WakeupsConfig()  # limits on schedule_wakeup (config/wakeups.py)
    memory: MemoryConfig = MemoryConfig()  # memories kept across sessions (config/memory.py)
    # In groups and channels, which operator messages the agent takes (DMs: all). Unset: all
    # of them in an allowed chat or channel. Others' chatter there is ignored without a reply.
    respond_to: list[RespondTo] | None = None

    @field_validator("respond_to", mode="before")
    @classmethod
    def _one_or_many(cls, value: object) -> object:
        return [value] if isinstance(value, str) else value

    @model_validator(mode="after")
    def _consistent(self, info: ValidationInfo) -> WorkspaceConfig:
        agent_ids = [a.id for a in self.agents]
        operator_ids = [o.id for o in self.operators]
        tool_names = [t.name for t in self.tools]
        servers = {m.name: m for m in self.mcp_servers}
        present = {s.name: on for s in sections() if (on := s.of(self)) is not None}
        found = gather(
            lambda: check_defined_once(
                (
                    ("agent", agent_ids),
                    ("operator", operator_ids),
                    ("tool", tool_names),
                    ("admin", [a.id for a in self.admins]),
                    ("MCP server", [m.name for m in self.mcp_servers]),
                )
            ),
            lambda: check_default_agent(self.default_agent, agent_ids),
            lambda: check_one_primary([o.id for o in self.operators if o.primary]),
            lambda: check_tool_names(tool_names, servers, BUILTIN_TOOLS + MEMORY_TOOLS),
            lambda: check_agent_tools(
                {a.id: a.tools for a in self.agents}, set(tool_names) | set(BUILTIN_TOOLS), servers
            ),
            lambda: check_console(self.console.operator if self.console else None, operator_ids),
            lambda: check_some_place(present, self.console is not None),
            lambda: no_all_with_others(self.respond_to),
            lambda: check_automation(self.schedules, self.triggers, agent_ids, operator_ids),
            lambda: check_budgets(
                self.budgets, set(agent_ids), set(operator_ids), {s.id for s in self.schedules}
            ),
            lambda: check_bindings(
                self.bindings, agent_ids, present, console=self.console is not None
            ),
        )
        settle(found, info, ("workspaces", self.id))
        return self

    def primary_operator(self) -> OperatorConfig:
        return next(o for o in self.operators if o.primary)


class SwitchboardConfig(Strict):
    server: ServerConfig = ServerConfig()
    storage: StorageConfig = StorageConfig()
    provider: ProviderConfig = ProviderConfig()
    providers: dict[Identifier, ProviderEntry] = {}  # more connections, by name
    queue: QueueConfig = QueueConfig()
    logging: LoggingConfig = LoggingConfig()
    retention: RetentionConfig = RetentionConfig()
    attachments: AttachmentsConfig = AttachmentsConfig()
    admin: AdminConfig = AdminConfig()
    workspaces: list[WorkspaceConfig] = Field(min_length=1)

    def console_enabled(self) -> bool:
        """The admin console is served only when someone can log in to it."""
        return self.admin.token is not None or any(w.admins for w in self.workspaces)

    def secret_values(self) -> list[str]:
        """Every secret the file holds (tokens, signing secrets, keys), for log redaction."""
        found: list[str] = []

        def walk(value: object) -> None:
            if isinstance(value, SecretStr):
                if value.get_secret_value():
                    found.append(value.get_secret_value())
            elif isinstance(value, BaseModel):
                for name in type(value).model_fields:
                    walk(getattr(value, name))
            elif isinstance(value, list | tuple):
                for item in value:
                    walk(item)
            elif isinstance(value, dict):  # an MCP server's env and headers
                for item in value.values():
                    walk(item)

        walk(self)
        servers = [m for w in self.workspaces for m in w.mcp_servers]
        found += [secret for m in servers for secret in url_secrets(m.url or "")]
        if self.storage.url is not None:  # its password, wherever the URL is quoted in part
            password = urlsplit(self.storage.url.get_secret_value()).password
            found += [password] if password else []
        return found

    @model_validator(mode="after")
    def _unique_workspaces(self, info: ValidationInfo) -> SwitchboardConfig:
        tokens = [a.token.get_secret_value() for w in self.workspaces for a in w.admins]
        if self.admin.token is not None:
            tokens.append(self.admin.token.get_secret_value())
        choices: dict[str, ModelChoice] = {}
        for w in self.workspaces:
            choices[f"workspace {w.id}"] = w
            choices.update({f"agent {w.id}/{a.id}": a for a in w.agents})
        found = gather(
            lambda: check_defined_once((("workspace", [w.id for w in self.workspaces]),)),
            lambda: check_not_shared(
                tools=[t.name for w in self.workspaces for t in w.tools],
                servers=[m.name for w in self.workspaces for m in w.mcp_servers],
            ),
            *(lambda s=s: self._distinct(s) for s in sections() if s.distinct is not None),
            lambda: check_admin_tokens(tokens),
            lambda: check_every_floor(
                {w.id: w.schedules for w in self.workspaces}, self.server.schedule_min_every
            ),
            lambda: check_provider_names(self.providers, self.provider.fallback, choices),
        )
        settle(found, info)
        return self

    def _distinct(self, s: PlatformSection[Any]) -> None:
        used = [getattr(found, s.distinct or "") for w in self.workspaces if (found := s.of(w))]
        if len(used) != len(set(used)):
            raise ValueError(f"two workspaces use the same {s.title} {s.distinct}")

    def chain_of(self, workspace: WorkspaceConfig, agent: AgentConfig) -> list[Link]:
        """The connections `agent`'s turns try, in order (config/providers.py)."""
        return chain_of(self.provider, self.provider.fallback, self.providers, agent, workspace)
