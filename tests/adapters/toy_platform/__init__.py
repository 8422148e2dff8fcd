"""A whole third platform in one folder, as a platform's package is: its config section
(`settings.py`), its door, its bots and profile (`bots.py`), its probe, its `init` questions
(`setup.py`), one `Platform` with what the console's settings page shows of it (`plugin.py`).
Registered with one line, `register(TOY_PLATFORM)`; nothing outside this folder names it
(`tests/adapters/test_third_platform.py`)."""
