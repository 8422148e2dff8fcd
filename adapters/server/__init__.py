"""The process: the `switchboard` command, config to runtime, bridge and adapters, the HTTP
server and the logs. The one part of adapters/ that may import the runtime."""
