"""Spend: budgets checked before each model call, the notices they send, and the usage
reports of `/usage`, the console and `switchboard usage` (issue 32)."""
