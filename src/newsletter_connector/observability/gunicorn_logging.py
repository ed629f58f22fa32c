"""gunicorn's logs, redacted (docs/security.md, "Logs"): as text (:class:`RedactingLogger`), or
as JSON lines (``log_format = json``, :class:`JsonRedactingLogger`): the error log, the access
log (its atoms redacted as in text, then written as fields) and the app's own records."""

from __future__ import annotations

import traceback
from typing import Any

from gunicorn.glogging import Logger

from ..log_redaction import format_atoms, redact_access_atoms, redact_message
from .json_logs import ACCESS_ATTRIBUTE, JsonFormatter, access_fields, configure_logging


class RedactingLogger(Logger):  # type: ignore[misc]
    """gunicorn logger whose access-log atoms pass through ``redact_access_atoms`` (only those
    ``access_log_format`` uses), and whose error-log messages pass through ``redact_message``
    (a bad request line holding a link token is logged without it)."""

    def atoms(self, resp: Any, req: Any, environ: dict[str, Any], request_time: Any) -> Any:
        used = format_atoms(str(self.cfg.access_log_format))
        return redact_access_atoms(super().atoms(resp, req, environ, request_time), used)

    def log(self, lvl: Any, msg: Any, *args: Any, **kwargs: Any) -> None:
        super().log(lvl, _redacted(msg, args), **kwargs)

    def critical(self, msg: Any, *args: Any, **kwargs: Any) -> None:
        super().critical(_redacted(msg, args), **kwargs)

    def error(self, msg: Any, *args: Any, **kwargs: Any) -> None:
        super().error(_redacted(msg, args), **kwargs)

    def warning(self, msg: Any, *args: Any, **kwargs: Any) -> None:
        super().warning(_redacted(msg, args), **kwargs)

    def info(self, msg: Any, *args: Any, **kwargs: Any) -> None:
        super().info(_redacted(msg, args), **kwargs)

    def debug(self, msg: Any, *args: Any, **kwargs: Any) -> None:
        super().debug(_redacted(msg, args), **kwargs)

    def exception(self, msg: Any, *args: Any, **kwargs: Any) -> None:
        super().exception(_redacted(msg, args), **kwargs)


def _redacted(msg: Any, args: tuple[Any, ...]) -> str:
    """An error-log message with its arguments put in, then redacted (``logging`` puts no
    arguments in a message given none)."""
    try:
        text = str(msg) % args if args else str(msg)
    except (TypeError, ValueError):
        text = " ".join([str(msg), *map(str, args)])
    return redact_message(text)


class JsonRedactingLogger(RedactingLogger):
    """:class:`RedactingLogger` writing one JSON object per
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
