"""The chat platforms, one `Platform` each (`adapters/platform.py`), in the order their routes
are tried (an operator on both is notified on the first). A platform is one line here; nothing
else outside its package names it (`tests/adapters/test_third_platform.py`), but for the door
process's list of the built-in platforms' doors (`adapters/doors/registry.py`)."""

from __future__ import annotations

from adapters.doors import registry as doors
from adapters.platform import Platform
from adapters.slack.plugin import SLACK_PLATFORM
from adapters.telegram.plugin import TELEGRAM_PLATFORM
from config.learning import forget as unlearn
from config.learning import learn

_PLATFORMS: dict[str, Platform] = {}


def register(platform: Platform) -> None:
    """From now on the config validates its section, the doors serve its door, and every list
    of platforms has it."""
    _PLATFORMS[platform.name] = platform
    doors.register(platform.door)
    learn(platform.section)


def forget(name: str) -> None:
    """A platform registered for a while (a test's) taken out again, its section with it."""
    _PLATFORMS.pop(name, None)
    doors.forget(name)
    unlearn(name)


def platforms() -> list[Platform]:
    return list(_PLATFORMS.values())


register(TELEGRAM_PLATFORM)
register(SLACK_PLATFORM)
