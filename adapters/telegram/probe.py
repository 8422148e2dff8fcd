"""Is this a working bot token? `getMe` says, and who the bot is (`check-config --probe`,
`switchboard init`)."""

from __future__ import annotations

from functools import partial

from telegram import Bot
from telegram.error import InvalidToken, NetworkError, TelegramError

from adapters.platform import Probe
from adapters.telegram.settings import TELEGRAM_SECTION
from config.errors import CredentialRefused, PlatformUnreachable
from config.schema import WorkspaceConfig

TELEGRAM_API = "https://api.telegram.org/bot"


def probes(workspace: WorkspaceConfig) -> list[Probe]:
    """`check-config --probe`: the workspace's bot token."""
    bot = TELEGRAM_SECTION.of(workspace)
    if bot is None:
        return []
    token = bot.bot_token.get_secret_value()
    return [("telegram.bot_token", partial(whose_bot, token, bot.api_base_url))]


async def whose_bot(token: str, api_base_url: str = TELEGRAM_API) -> str:
    """What the token belongs to (`@username, id N`). CredentialRefused with Telegram's own
    reason when it judged the token; PlatformUnreachable when it could not be asked (no
    connection, a timeout, a 5xx), so the token was not checked."""
    try:
        bot = Bot(token, base_url=api_base_url)  # refuses an empty token itself
    except InvalidToken:
        raise CredentialRefused("the token is empty") from None
    try:
        me = await bot.get_me()
    except InvalidToken:  # 401 (a token Telegram does not know) or 404 (a malformed one)
        raise CredentialRefused("Telegram refused the token: Unauthorized") from None
    except NetworkError as exc:  # includes TimedOut and the 5xx answers
        raise PlatformUnreachable("Telegram", api_base_url, exc.message) from None
    except TelegramError as exc:
        raise CredentialRefused(f"Telegram at {api_base_url} said: {exc.message}") from None
    finally:
        await bot.shutdown()
    return f"bot @{me.username} (id {me.id})"
