"""The terminal chat: a platform whose one conversation is the terminal Switchboard runs in."""
