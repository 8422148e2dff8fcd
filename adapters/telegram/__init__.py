"""Telegram through python-telegram-bot: its door (`door.py`: webhooks checked, stored; long
polling, `polling.py`), each workspace's bot (`bots.py`, `adapter.py`: what was stored fed to
its handlers, which make the bridge's messages with `inbound.py`), and replies and progress out
(`transport.py`). Importing the package loads nothing: the door process imports only the door."""
