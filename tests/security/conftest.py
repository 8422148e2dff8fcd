"""The security tests knock on the product from outside: its public port in every topology
(`tests/topology.py`), the platform fakes, the CLI and a browser."""

from tests.adapters.conftest import slack_api, telegram_api
from tests.topology import console_topology, topology

__all__ = ["console_topology", "slack_api", "telegram_api", "topology"]
