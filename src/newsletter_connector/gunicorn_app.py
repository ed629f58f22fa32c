"""Running the app under gunicorn from Python (``newsletter-connector serve``)."""

from __future__ import annotations

import gc
from typing import Any

from gunicorn.app.base import BaseApplication
from gunicorn.config import KNOWN_SETTINGS

# The name an operator's gunicorn.conf.py gives as its logger_class; the class lives with its JSON
# twin (docs/contributing/decisions/operations.md, "gunicorn's redacting loggers").
from .observability.gunicorn_logging import RedactingLogger as RedactingLogger
from .settings import Settings


def freeze_loaded_app(worker: Any) -> None:
    """gunicorn ``post_worker_init`` hook: once the worker has built its app, freeze every object
    alive so far (they live as long as the worker) out of the collector's full collections
    (bench: status_overhead)."""
    gc.freeze()
    worker.log.info("%d long-lived objects frozen out of garbage collection", gc.get_freeze_count())


def start_worker_runner(worker: Any) -> None:
    """gunicorn ``post_worker_init`` hook of ``run(..., sync_runner=True)``: freeze the loaded
    app as :func:`freeze_loaded_app` does, then start a sync runner on a background thread of
    the worker, on the service of the worker's app (``quickstart``: one process does all)."""
    from .sync.background import start_background_sync

    freeze_loaded_app(worker)
    worker.newsletter_sync = start_background_sync(worker.wsgi.service)
    worker.log.info("sync runner started beside the app, in worker %s", worker.pid)


def stop_worker_runner(server: Any, worker: Any) -> None:
    """gunicorn ``worker_exit`` hook: the worker's runner finishes the batch in flight."""
    sync = getattr(worker, "newsletter_sync", None)
    if sync is not None:
        sync.stop()


class _Server(BaseApplication):  # type: ignore[misc]
    """A gunicorn application whose workers each build their own app (and engine) after fork."""

    def __init__(self, settings: Settings, options: dict[str, Any]) -> None:
        self.settings = settings
        self.options = options
        super().__init__()

    def load_config(self) -> None:
        for key, value in self.options.items():
            self.cfg.set(key, value)

    def load(self) -> Any:
        from .web.app import create_app

        return create_app(self.settings)


def observability_options(settings: Settings) -> dict[str, Any]:
    """The gunicorn options of the ``log_format`` and ``metrics_token`` settings; with a
    token, a fresh multiprocess metrics directory is prepared now, before any worker starts."""
    from .observability import multiprocess

    logger = "JsonRedactingLogger" if settings.log_format == "json" else "RedactingLogger"
    options: dict[str, Any] = {
        "logger_class": f"newsletter_connector.observability.gunicorn_logging.{logger}"
    }
    if settings.metrics_token is not None:
        multiprocess.prepare_directory()
        options.update(child_exit=multiprocess.child_exit, on_exit=multiprocess.on_exit)
    return options


def run(
    settings: Settings,
    *,
    bind: str,
    workers: int,
    timeout: int,
    sync_runner: bool = False,
    **options: Any,
) -> None:
    """Serve ``settings``' app on ``bind`` with ``workers`` processes until stopped; a worker
    busy with one request for ``timeout`` seconds is restarted. With ``sync_runner`` each
    worker also runs a sync runner on a background thread (leases keep two from sending one
    batch).

    gunicorn's control socket (``gunicornc``, gunicorn 25.1 and later) is off: its default path is
    one per user, so a second instance on the host would take it over from the first and either one
    stopping would remove it (docs/contributing/decisions/packaging-and-tests.md, "serve turns
    gunicorn's control socket off"). ``options`` may turn it back on with a path of the instance's
    own.
    """
    defaults: dict[str, Any] = {
        "bind": bind,
        "workers": workers,
        "timeout": timeout,
        "accesslog": "-",
        "preload_app": False,
        "post_worker_init": freeze_loaded_app,
    }
    if sync_runner:
        defaults.update(post_worker_init=start_worker_runner, worker_exit=stop_worker_runner)
    if any(setting.name == "control_socket_disable" for setting in KNOWN_SETTINGS):
        defaults["control_socket_disable"] = True
    _Server(settings, {**defaults, **observability_options(settings), **options}).run()
