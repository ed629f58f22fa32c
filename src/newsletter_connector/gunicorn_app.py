"""Running the app under gunicorn from Python (``newsletter-connector serve``)."""

from __future__ import annotations

from typing import Any

from gunicorn.app.base import BaseApplication
from gunicorn.glogging import Logger

from .log_redaction import redact_path
from .settings import Settings


class RedactingLogger(Logger):  # type: ignore[misc]
    """gunicorn logger whose access-log atoms never contain tokens or query strings."""

    def atoms(self, resp: Any, req: Any, environ: dict[str, Any], request_time: Any) -> Any:
        atoms = super().atoms(resp, req, environ, request_time)
        path = redact_path(atoms.get("U", ""))
        atoms["U"] = path
        atoms["q"] = ""
        atoms["r"] = f"{atoms.get('m', '')} {path} {atoms.get('H', '')}".strip()
        atoms["f"] = redact_path(atoms.get("f", "-"))
        return atoms


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
            "logger_class": "newsletter_connector.gunicorn_app.RedactingLogger",
            "preload_app": False,
            **options,
        },
    ).run()
