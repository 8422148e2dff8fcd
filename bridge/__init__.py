"""Between chat platforms and the runtime: trust, commands, sessions, routing, delivery.

Each part is imported from its own module; the package itself hands the platform adapters
the one runtime helper they use (`cancel_and_wait`), since they may not import the runtime."""

from runtime.tasks import cancel_and_wait

__all__ = ["cancel_and_wait"]
