"""gunicorn settings for the standalone service. Override any of them on the command line."""

import multiprocessing
import os

from newsletter_connector.observability import multiprocess as metrics_files
from newsletter_connector.settings import Settings

# The same settings the workers read (NEWSLETTER_* and the file NEWSLETTER_CONFIG names).
settings = Settings.load()


def on_starting(server):
    """/metrics sums the figures of every worker: a fresh PROMETHEUS_MULTIPROC_DIR before any
    worker starts. Here, not at the top of this file: gunicorn reads the file again on a
    SIGHUP reload, which would empty the directory and reset every counter."""
    metrics_files.prepare_directory()


# A dead worker's bookkeeping, and the directory removed at exit (docs/operations.md).
child_exit = metrics_files.child_exit
on_exit = metrics_files.on_exit

bind = os.environ.get("NEWSLETTER_BIND", "127.0.0.1:8000")
workers = int(os.environ.get("NEWSLETTER_WORKERS", min(4, multiprocessing.cpu_count() * 2)))
# Each worker builds its own app (and database engine) after fork.
preload_app = False
accesslog = "-"
# Access logs must never carry link tokens, credentials, email addresses or client addresses:
# this logger redacts every atom, whatever access_log_format asks for (docs/security.md). The
# JSON one writes the same redacted fields as one JSON object per line.
if settings.log_format == "json":
    logger_class = "newsletter_connector.observability.gunicorn_logging.JsonRedactingLogger"
else:
    logger_class = "newsletter_connector.observability.gunicorn_logging.RedactingLogger"
# A sync worker reads each request body itself: a worker busy with one request for longer
# than this is restarted, which cuts off a client sending its body slowly. Serve behind a
# buffering proxy all the same (docs/security.md, "Floods and slow clients").
timeout = 30
graceful_timeout = 20
# gunicorn 25.1+ opens a control socket for gunicornc at one path per user
# ($XDG_RUNTIME_DIR/gunicorn.ctl or ~/.gunicorn/gunicorn.ctl): a second instance on the host
# would take it over from the first. Off here; to use gunicornc, give each instance a path of
# its own instead: control_socket = "/run/newsletter/gunicorn.ctl".
control_socket_disable = True


def post_worker_init(worker):
    """Keep the long-lived app out of the garbage collector's full collections."""
    from newsletter_connector.gunicorn_app import freeze_loaded_app

    freeze_loaded_app(worker)
