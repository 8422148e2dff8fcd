"""The terminal chat: a platform whose one conversation is the terminal Switchboard runs in."""

from adapters.console.adapter import ConsoleAdapter, Ending
from adapters.console.profile import CONSOLE, NAME, ConsoleProfile
from adapters.console.transport import ConsoleTransport

__all__ = ["CONSOLE", "NAME", "ConsoleAdapter", "ConsoleProfile", "ConsoleTransport", "Ending"]
