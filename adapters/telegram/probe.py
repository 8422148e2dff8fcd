"""Is this a working bot token? `getMe` says, and who the bot is (`check-config --probe`,
`switchboard init`)."""

from __future__ import annotations

from telegram import Bot
from telegram.error import InvalidToken, TelegramError

from config.errors import CredentialRefused


async def whose_bot(token: str, api_base_url: str = "https://api.telegram.org/bot") -> str:
    """What the token belongs to (`@username, id N`); raises CredentialRefused with
    Telegram's own reason."""
    bot = Bot(token, base_url=api_base_url)
    try:
        me = await bot.get_me()
    except InvalidToken:
        raise CredentialRefused("Telegram refused the token: Unauthorized") from None
    except TelegramError as exc:
        raise CredentialRefused(f"Telegram at {api_base_url} said: {exc.message}") from None
    finally:
        await bot.shutdown()
    return f"bot @{me.username} (id {me.id})"
