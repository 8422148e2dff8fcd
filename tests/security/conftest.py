"""The security tests knock on the product from outside: its public port in every topology
(`tests/topology.py`, fixtures `topology` and `console_topology`), the platform fakes, the CLI
and a browser."""

from tests.adapters.conftest import slack_api, telegram_api

__all__ = ["slack_api", "telegram_api"]
