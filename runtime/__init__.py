"""The embeddable agent runtime: sessions, queues, turns with safe points, tools, store.

It knows nothing of Slack or Telegram; the bridge drives it through `Runtime`.
"""
