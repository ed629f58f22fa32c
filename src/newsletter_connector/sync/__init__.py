"""The sync runner: durable, at-least-once delivery of every queued event to the platform.

- :mod:`.transport` — the contract a transport plugin implements (``deliver(events)``).
- :mod:`.schedule` — the retry ladder (1 min, 10 min, 1 h, 6 h, then every 24 h; 20 attempts).
- :mod:`.http` — the HTTP client: trusted CAs, no redirects, a 15-second total deadline.
- :mod:`.runner` — :class:`~.runner.SyncRunner`: claim a batch, deliver it, settle it.
- :mod:`.background` — the in-process mode (a thread beside a WSGI app).
- :mod:`.metrics` — ``outbox status`` figures in Prometheus text format.
"""
