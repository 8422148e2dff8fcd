"""Signed event triggers: `POST /hooks/{workspace_id}/{trigger_id}` (`door.py`), a request signed
with the trigger's secret (`verify.py`: GitHub's `X-Hub-Signature-256`, or `X-Signature` for any
other sender), stored through the one intake before it is answered."""
