"""The one way in: every request from outside (a platform's webhook, a Socket Mode envelope, a
polled Telegram update) is checked at its door, stored as an `Arrival` in the intake table,
answered, and later handed to its platform's decoder by the one `Replayer`.

Imported by the door process too, which runs none of the bridge or the runtime: it writes the
inbox file through the intake table's store module (`bridge/store/intake.py`) and its records
(`bridge/store/records.py`), which import none of the bridge's models
(`tests/adapters/doors/test_door_imports.py`)."""
