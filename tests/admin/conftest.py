"""The admin console's tests use the platform fakes of the adapter tests, and run on each
topology that serves the console (`console_topology`, tests/topology.py)."""

from tests.adapters.conftest import slack_api, telegram_api

__all__ = ["slack_api", "telegram_api"]
