"""gunicorn settings for the standalone service. Override any of them on the command line."""

import multiprocessing
import os

bind = os.environ.get("NEWSLETTER_BIND", "127.0.0.1:8000")
workers = int(os.environ.get("NEWSLETTER_WORKERS", min(4, multiprocessing.cpu_count() * 2)))
# Each worker builds its own app (and database engine) after fork.
preload_app = False
accesslog = "-"
# Access logs must never carry link tokens: log the path without the query string.
access_log_format = '%(h)s "%(m)s %(U)s" %(s)s %(B)s %(L)ss'
timeout = 30
graceful_timeout = 20
