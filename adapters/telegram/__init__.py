"""Telegram through python-telegram-bot: its door (`door.py`: webhooks checked, stored; long
polling, `polling.py`), the decoder that hands what was stored to a workspace's bot
(`decoder.py`, `adapter.py`, `inbound.py`), and replies and progress out (`transport.py`).
Importing the package loads nothing: the door process imports only the door."""
