"""Slack through slack-bolt: its door (`door.py`: requests checked, stored; Socket Mode,
`socket.py`), each workspace's bot (`bots.py`, `adapter.py`: what was stored handed to its
bolt app, whose listeners make the bridge's messages with `inbound.py`), and replies and
progress out (`transport.py`). Importing the package loads nothing: the door process imports
only the door."""
