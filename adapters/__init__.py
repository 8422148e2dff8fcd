"""Platform I/O (console now; Slack and Telegram next), the CLI and the HTTP server."""
