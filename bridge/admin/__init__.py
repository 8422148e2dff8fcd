"""The admin console's view of the bridge: typed reads of a workspace, its live feed, and the
actions an admin steers it with. No HTTP here: `adapters/admin/` serves the pages."""

from runtime.messages import QueueMode  # what `Steering.set_queue_mode` takes

__all__ = ["QueueMode"]
