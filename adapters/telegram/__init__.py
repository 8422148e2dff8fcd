"""Telegram through python-telegram-bot, one `Platform` (`plugin.py`): its config section
(`settings.py`), its `init` questions (`setup.py`), its probe (`probe.py`), its door
(`door.py`: webhooks checked, stored; long polling, `polling.py`), each workspace's bot
(`bots.py`, `adapter.py`: what was stored fed to its handlers, which make the bridge's
messages with `inbound.py`), and replies and progress out (`transport.py`). Importing the
package loads nothing: the door process imports only `door.py`; `plugin.py` loads
python-telegram-bot when a bot or a probe runs."""
