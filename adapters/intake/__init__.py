"""The one way in: every request from outside (a platform's webhook, a Socket Mode envelope, a
polled Telegram update) is checked at its door, stored as an `Arrival` in the intake table,
answered, and later handed to its platform's decoder by the one `Replayer`.

Imported by the door process too: nothing here loads the bridge or the runtime at import."""
