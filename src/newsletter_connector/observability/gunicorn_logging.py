"""gunicorn's logs as JSON lines (``log_format = json``): the error log, the access log (its
atoms redacted as in text, then written as fields) and the app's own records."""

from __future__ import annotations

import traceback
from typing import Any

from ..gunicorn_app import RedactingLogger
from .json_logs import ACCESS_ATTRIBUTE, JsonFormatter, access_fields, configure_logging


class JsonRedactingLogger(RedactingLogger):
    """:class:`~newsletter_connector.gunicorn_app.RedactingLogger` writing one JSON object per
    line, and sending the app's records (the root logger) to stderr the same way."""

    def setup(self, cfg: Any) -> None:
        super().setup(cfg)
        for log in (self.error_log, self.access_log):
            for handler in log.handlers:
                handler.setFormatter(JsonFormatter())
        configure_logging("json", self.loglevel)

    def access(self, resp: Any, req: Any, environ: dict[str, Any], request_time: Any) -> None:
        if not getattr(self, "access_log_enabled", bool(self.cfg.accesslog)):
            return
        try:
            atoms = self.atoms(resp, req, environ, request_time)
            fields = access_fields(atoms)
            self.access_log.info(
                "%s %s %s",
                atoms.get("m"),
                atoms.get("U"),
                atoms.get("s"),
                extra={ACCESS_ATTRIBUTE: fields},
            )
        except Exception:
            self.error(traceback.format_exc())
