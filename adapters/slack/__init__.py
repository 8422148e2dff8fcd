"""Slack through slack-bolt, one `Platform` (`plugin.py`): its config section (`settings.py`),
its `init` questions (`setup.py`), its probe (`probe.py`), its door (`door.py`: requests
checked, stored; Socket Mode, `socket.py`), each workspace's bot (`bots.py`, `adapter.py`:
what was stored handed to its bolt app, whose listeners make the bridge's messages with
`inbound.py`), and replies and progress out (`transport.py`). Importing the package loads
nothing: the door process imports only `door.py`; `plugin.py` loads the bots when they run."""
