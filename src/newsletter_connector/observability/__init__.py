"""Prometheus metrics and structured logs for the app, ``serve`` and the sync runner.

Nothing here imports ``prometheus_client`` at import time: under gunicorn its multiprocess
mode is chosen when it is first imported, which must happen after ``serve`` has set
``PROMETHEUS_MULTIPROC_DIR`` (see :mod:`.multiprocess`).
"""
