"""Platform I/O (console, Slack, Telegram) and, in server/, the process that wires them up."""
