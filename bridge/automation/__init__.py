"""Work with no operator message: schedules (`schedules.py`), signed event triggers
(`triggers.py`), and how either starts a run and says where its answer came from (`runs.py`)."""
