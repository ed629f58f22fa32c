"""Running the app under gunicorn from Python (``newsletter-connector serve``)."""

from __future__ import annotations

from typing import Any

from gunicorn.app.base import BaseApplication

from .settings import Settings


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


def run(settings: Settings, *, bind: str, workers: int, **options: Any) -> None:
    """Serve ``settings``' app on ``bind`` with ``workers`` processes until stopped."""
    _Server(
        settings,
        {
            "bind": bind,
            "workers": workers,
            "accesslog": "-",
            "logger_class": "newsletter_connector.log_redaction.RedactingLogger",
            "preload_app": False,
            **options,
        },
    ).run()
