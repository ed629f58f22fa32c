"""What every command shares: the state the group hands down, error reporting, secret input."""

from __future__ import annotations

import functools
import getpass
import logging
import os
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import click

from ..errors import DbUnavailable, DbUnreachable, NewsletterError
from ..observability.json_logs import configure_logging, json_active
from ..service import NewsletterService
from ..settings import Settings, SettingsError, command_config_file

F = TypeVar("F", bound=Callable[..., Any])


def fail(message: str) -> NoReturn:
    """Exit 1 with one line on stderr (a JSON log record once a command has turned
    ``log_format = json`` on)."""
    if json_active():
        logging.getLogger("newsletter_connector.cli").error(message)
    else:
        click.echo(f"error: {message}", err=True)
    sys.exit(1)


def notice(message: str, settings: Settings, *, level: int = logging.INFO) -> None:
    """One line on stderr that is not the command's output: a log record when the settings
    ask for ``log_format = json`` (every stderr line stays JSON), else plain text."""
    if settings.log_format == "json":
        if not json_active():
            configure_logging("json")
        logging.getLogger("newsletter_connector.cli").log(level, message)
    else:
        prefix = "" if level < logging.WARNING else f"{logging.getLevelName(level)}: "
        click.echo(f"{prefix}{message}", err=True)


def reports_errors(func: F) -> F:
    """Turn domain and settings errors into one clear line and exit status 1; a database that
    cannot be used is reported with the driver's reason (the URL's password masked), not as
    a transient "retry shortly"."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except DbUnavailable as exc:
            fail(database_failure(exc))
        except (NewsletterError, SettingsError) as exc:
            fail(str(exc))

    return wrapper  # type: ignore[return-value]


def database_failure(error: DbUnavailable) -> str:
    """What a command says when the database failed it: the operator's reason when known."""
    if isinstance(error, DbUnreachable) or error.reason is None:
        return str(error)
    return f"cannot use the database: {error.reason}"


class CliState:
    """The command's settings (``--config``, ``NEWSLETTER_CONFIG``, else ``newsletter.toml`` in
    the working directory when present; then ``NEWSLETTER_*``) and its service, built once."""

    def __init__(self, config_file: str | None) -> None:
        #: The settings file read (:func:`~newsletter_connector.settings.command_config_file`),
        #: or ``None`` when there is none.
        self.config_file = command_config_file(config_file)
        self._service: NewsletterService | None = None
        self._file_named = False

    def settings(self, *, sources: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
        """Settings with ``overrides`` from the command line; ``sources`` names the flag each
        came from, for messages. The first load names the settings file it read on stderr
        (:func:`notice`): a file picked up from the working directory is never silent."""
        settings = Settings.load(config_file=self.config_file, sources=sources, **overrides)
        if self.config_file is not None and not self._file_named:
            self._file_named = True
            notice(f"settings read from {Path(self.config_file).resolve()}", settings)
        return settings

    def service(
        self, *, ready: bool = True, sources: Mapping[str, str] | None = None, **overrides: Any
    ) -> NewsletterService:
        if self._service is None:
            self._service = NewsletterService.build(self.settings(sources=sources, **overrides))
            if ready:
                self._service.check_ready(tolerate_outage=False)
        return self._service

    def audit(self, action: str, target: str | None) -> None:
        """Record this command's admin act in the admin audit log, as the admin area records
        the same act (``target`` names what it touched, never a secret); the actor is
        :func:`command_line_actor`."""
        self.service().admin_audit.record(command_line_actor(), action, target)


def command_line_actor() -> str:
    """Who the audit log says did a command's act: the operating-system user running it,
    followed by ``(command line)``."""
    try:
        user = getpass.getuser()
    except (OSError, KeyError):  # no login name in the environment and no passwd entry
        user = "unknown user"
    return f"{user} (command line)"


pass_state = click.make_pass_decorator(CliState)


def read_one_line() -> str:
    """One line of a piped stdin, and not a byte more: a buffered read would take the lines
    meant for the commands a script runs after this one (two ``admin create-user`` fed from one
    pipe, say). A stdin without a file descriptor (a test runner's) is read as a stream."""
    try:
        descriptor = sys.stdin.fileno()
    except (AttributeError, OSError, ValueError):
        return sys.stdin.readline()
    line = bytearray()
    while (byte := os.read(descriptor, 1)) and byte != b"\n":
        line += byte
    return line.decode(sys.stdin.encoding or "utf-8", errors="replace")


def read_secret(prompt: str) -> str:
    """A secret from stdin when piped, else from a hidden prompt."""
    if not sys.stdin.isatty():
        value = read_one_line().rstrip("\r\n")
    else:
        value = click.prompt(prompt, hide_input=True, confirmation_prompt=True)
    if not value:
        fail(f"{prompt.lower()} is empty")
    return value
