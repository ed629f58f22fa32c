"""The sync runner: durable, at-least-once delivery of every queued event to the platform
(:class:`~.runner.SyncRunner`; transport plugins implement :mod:`.transport`).
"""
