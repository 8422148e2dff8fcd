"""Files in: which of an operator's files reach the model (`policy.py`), the platform's side
of downloading them (`source.py`), and the durable path from a stored message to a prompt
with its files (`downloads.py`)."""
