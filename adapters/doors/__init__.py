"""The door process: the platforms' HTTP doors (Slack events, Telegram webhooks) in a process
of their own, so that acknowledging a request never waits on the turns, replies and progress
the main process runs (issue 18). It checks each request, stores it in the inbox and answers
the platform; everything else on the port goes through to the main process."""
