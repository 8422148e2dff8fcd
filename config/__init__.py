"""The admin's configuration file: schema, loading and validation. Imports no other layer."""

from config.errors import ConfigError, SwitchboardError
from config.loading import DEFAULT_PATH, ENV_PATH, load, resolve_path
from config.platforms import ConsoleConfig, SlackConfig, TelegramConfig
from config.schema import (
    AgentConfig,
    OperatorConfig,
    ProviderConfig,
    SwitchboardConfig,
    ToolConfig,
    WorkspaceConfig,
)

__all__ = [
    "DEFAULT_PATH",
    "ENV_PATH",
    "AgentConfig",
    "ConfigError",
    "ConsoleConfig",
    "OperatorConfig",
    "ProviderConfig",
    "SlackConfig",
    "SwitchboardConfig",
    "SwitchboardError",
    "TelegramConfig",
    "ToolConfig",
    "WorkspaceConfig",
    "load",
    "resolve_path",
]
