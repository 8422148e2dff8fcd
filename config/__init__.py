"""The admin's configuration file: schema, loading and validation. Imports no other layer."""

from config.errors import ConfigError, SwitchboardError
from config.learning import learn
from config.loading import DEFAULT_PATH, ENV_PATH, load, resolve_path
from config.platform_sections import PlatformSection
from config.platforms import ConsoleConfig
from config.providers import ProviderConfig
from config.schema import (
    AgentConfig,
    OperatorConfig,
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
    "PlatformSection",
    "ProviderConfig",
    "SwitchboardConfig",
    "SwitchboardError",
    "ToolConfig",
    "WorkspaceConfig",
    "learn",
    "load",
    "resolve_path",
]
