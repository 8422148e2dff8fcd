"""The admin's configuration file: schema, loading and validation."""

from config.errors import ConfigError, SwitchboardError

__all__ = ["ConfigError", "SwitchboardError"]
