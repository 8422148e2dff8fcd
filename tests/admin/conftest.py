"""The admin console's tests use the platform fakes of the adapter tests."""

from tests.adapters.conftest import slack_api, telegram_api

__all__ = ["slack_api", "telegram_api"]
