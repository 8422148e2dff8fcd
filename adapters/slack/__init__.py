"""Slack through slack-bolt: its door (`door.py`: requests checked, stored; Socket Mode,
`socket.py`), the decoder that hands what was stored to a workspace's bolt app (`decoder.py`,
`adapter.py`, `inbound.py`), and replies and progress out (`transport.py`). Importing the
package loads nothing: the door process imports only the door."""
