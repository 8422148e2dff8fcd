"""The admin console's tests use the platform fakes of the adapter tests, and run on each
topology that serves the console (`tests/topology.py`)."""

from tests.adapters.conftest import slack_api, telegram_api
from tests.topology import console_topology

__all__ = ["console_topology", "slack_api", "telegram_api"]
