"""Every setting of the service, typed; :meth:`Settings.load` reads them from defaults, a TOML
file, then ``NEWSLETTER_<FIELD>`` environment variables (later ones winning)."""

from __future__ import annotations

import difflib
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    SecretStr,
    ValidationError,
    ValidationInfo,
    field_validator,
)

from .https_rule import carries_credentials, scheme_allowed, with_lowercase_scheme

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised only on 3.10
    import tomli as tomllib

ENV_PREFIX = "NEWSLETTER_"
CONFIG_ENV = "NEWSLETTER_CONFIG"
#: The settings file every command reads from the working directory when present and no other
#: is named (``--config``, ``NEWSLETTER_CONFIG``); ``quickstart`` writes it.
DEFAULT_CONFIG_FILE = "newsletter.toml"
#: ``NEWSLETTER_*`` variables that are not settings but have a use of their own: any other
#: variable with the prefix that names no setting is refused as a misspelling.
OTHER_VARIABLES = frozenset(
    {
        CONFIG_ENV,  # the TOML file, read by Settings.load and the CLI's --config
        "NEWSLETTER_TEST_DATABASE_URL",  # the database the test suite runs on
        "NEWSLETTER_WRITE_SCREENSHOTS",  # tests/web/admin/test_admin_browser.py: the docs images
        "NEWSLETTER_BIND",  # examples/standalone/gunicorn.conf.py
        "NEWSLETTER_WORKERS",  # examples/standalone/gunicorn.conf.py
    }
)
DEFAULT_DATABASE_URL = "sqlite:///newsletter.db"


class SettingsError(ValueError):
    """A setting is missing or invalid; the message names it (env var and TOML key)."""


def _env_name(field: str) -> str:
    return ENV_PREFIX + field.upper()


#: The ``storage_backend`` that keeps subscribers in the built-in store's own table.
BUILTIN_STORAGE_BACKEND = "sql"


class Settings(BaseModel):
    """The service's configuration. ``site_secret`` is a :class:`~pydantic.SecretStr`, never in
    ``repr`` or logs."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    #: Where :meth:`load` read each value from, for :meth:`source_of`.
    _sources: dict[str, str] = PrivateAttr(default_factory=dict)

    database_url: str = Field(
        DEFAULT_DATABASE_URL,
        description="SQLAlchemy URL of the database; a SQLite file in the working directory "
        "by default, `postgresql://…` for PostgreSQL, `mysql://…` or `mariadb://…` for MySQL "
        "and MariaDB.",
    )
    base_url: str | None = Field(
        None,
        description="Public address the app is served at, including any mount prefix, e.g. "
        "`https://example.org/newsletter`. Links in contact records are built from it; "
        "required, and https, to serve, sync or record a digest.",
    )
    site_name: str = Field("Newsletter", description="The site's name, shown on reader pages.")
    site_url: str | None = Field(
        None, description="The site's home page; defaults to the origin of `base_url`."
    )
    postal_address: str | None = Field(
        None, description="Postal address printed in every issue's footer."
    )
    list_name: str = Field("Newsletter", description="Name of the single mailing list.")
    from_address: str = Field(
        "Newsletter <newsletter@localhost>",
        description="Sender shown to list-source clients: display name plus address.",
    )
    site_secret: SecretStr | None = Field(
        None,
        description="Key for keyed hashes (erasure evidence, CSRF). Generated and stored in the "
        "database on first init when not given.",
    )
    admin_login_url: str | None = Field(
        None,
        description="Where the admin area sends a signed-out visitor when a host plugin "
        "implements `newsletter_admin_user`: the host's sign-in page, absolute or relative to "
        "the site (e.g. `/login?next=/newsletter/admin`). Unset: a 403 page asking to sign in "
        "to the site first.",
    )
    storage_backend: str = Field(
        BUILTIN_STORAGE_BACKEND,
        description="Name of the storage backend plugin: where the subscribers are kept (`sql`: "
        "the built-in store's own table; a host's backend: the host's table, in the same "
        "database and transaction). Everything else is always the built-in store's tables.",
    )
    issue_renderer: str = Field("html", description="Name of the issue renderer plugin.")
    template_dir: str | None = Field(
        None, description="Folder of templates that override the built-in reader pages."
    )
    language: str = Field(
        "en",
        min_length=2,
        max_length=16,
        pattern=r"^[a-z]{2,3}(_[A-Z]{2})?$",
        description="Language of the reader pages and the edition's fixed words: `en`, `es`, "
        'or one a catalog in `catalog_dir` adds (docs/reader-pages.md, "Languages").',
    )
    language_from_browser: bool = Field(
        False,
        description="Show each reader the pages in the first of their browser's languages "
        "(`Accept-Language`) that is installed, else in `language`.",
    )
    catalog_dir: str | None = Field(
        None,
        description="Folder of the site's own gettext catalogs "
        "(`<language>/LC_MESSAGES/messages.mo`): a language to add, or messages to reword.",
    )
    delivery_mode: Literal["connector", "site"] = Field(
        "connector",
        description="`connector`: each digest run queues a `newsletter.issue` event for the "
        "platform; `site`: the site sends its own email and no issue event is queued.",
    )
    scheduled_digests: Literal["auto", "on", "off"] = Field(
        "auto",
        description="Whether the sync runner records the daily and weekly digests when they "
        "fall due. `auto`: when an issue content plugin is installed, else off (the runner "
        "says so once as it starts); `on`: always, and the runner refuses to start without a "
        "content plugin; `off`: never (record them with `newsletter-connector digest`, e.g. "
        "from cron).",
    )
    platform_send_now: bool = Field(
        True,
        description="With the `platform` transport, ask the platform to send each issue at once "
        "(`sendNow`); false queues it for the platform's own schedule.",
    )
    ca_bundle: str | None = Field(
        None, description="Extra CA bundle (PEM) the sync runner trusts for the platform."
    )
    db_connect_timeout: int = Field(
        5,
        ge=2,
        description="Seconds to wait for a database connection: for a free one from the pool "
        "and, on PostgreSQL, for a new one to be established (`connect_timeout`; libpq's "
        "minimum is 2).",
    )
    db_statement_timeout: float = Field(
        15.0,
        gt=0,
        description="PostgreSQL: seconds a statement may run before the server cancels it "
        "(`statement_timeout`; migrations are exempt). The request answers 503 "
        "`db_unavailable`.",
    )
    db_lock_timeout: float = Field(
        5.0,
        gt=0,
        description="Seconds to wait for a lock another transaction holds before giving up "
        "with 503 `db_unavailable`: PostgreSQL's `lock_timeout`, SQLite's busy timeout.",
    )
    db_reply_timeout: float = Field(
        20.0,
        gt=0,
        description="PostgreSQL: seconds to wait for any reply from the server (a hung or "
        "stopped server cancels nothing itself); past it the connection is dropped and the "
        "request answers 503 `db_unavailable`. Must exceed `db_statement_timeout` and stay "
        "below gunicorn's worker `timeout` (30 s).",
    )
    db_short_reply_timeout: float = Field(
        3.0,
        gt=0,
        description="Seconds a short read may wait for the database: the API key check, a "
        "record read by its link token, the admin area's session, the readiness check. "
        "PostgreSQL: the reply bound of their round trips (a hung server answers 503 within "
        "it, not after `db_reply_timeout`); SQLite: their busy timeout. At most "
        "`db_reply_timeout`.",
    )
    db_pgbouncer: bool = Field(
        False,
        description="PostgreSQL is reached through PgBouncer (or another pooler) in "
        "transaction pooling mode: no server-side prepared statements and no start-up "
        "`options`; set `statement_timeout` and `lock_timeout` on the database role instead "
        "(see Operations, PgBouncer).",
    )
    confirmation_resend_interval: int = Field(
        86400,
        ge=0,
        description="Seconds before a re-submitted pending address is announced again "
        "(`newsletter.signup`, which makes the platform resend the confirmation mail); "
        "re-submits within it queue nothing. 0 announces every re-submit.",
    )
    import_max_bytes: int = Field(
        268_435_456,
        ge=1,
        description="Largest subscriber file an import reads, in bytes (256 MiB: about a "
        "million Mailchimp export lines); a larger file is refused before anything is stored.",
    )
    rate_limit_signup: int = Field(
        20,
        ge=0,
        description="POSTs per minute one client address may send to the signup form; "
        "more are answered 429. 0 turns the limit off.",
    )
    rate_limit_contact: int = Field(
        20,
        ge=0,
        description="POSTs per minute one client address may send to the contact form; "
        "0 turns the limit off.",
    )
    rate_limit_profile: int = Field(
        20,
        ge=0,
        description="POSTs per minute one client address may send to profile pages; "
        "0 turns the limit off.",
    )
    rate_limit_analytics: int = Field(
        600,
        ge=0,
        description="Analytics events per minute one client address may send to "
        "`/analytics/collect`; 0 turns the limit off.",
    )
    analytics_visitor_id: Literal["persistent", "session"] = Field(
        "persistent",
        description="Where the analytics script keeps its random visitor id on the reader's "
        "device. `persistent`: in `localStorage`, the same id on every visit until the reader "
        "clears it; `session`: in `sessionStorage`, a new id for each tab session, and a "
        "persistent id left from before is removed. Either way an identifier is stored on the "
        "device: see docs/analytics.md on consent.",
    )
    trusted_proxies: int = Field(
        0,
        ge=0,
        le=16,
        description="How many reverse proxies in front of the app append to "
        "`X-Forwarded-For`. 0: the client address is the connection's (`REMOTE_ADDR`) and "
        "`X-Forwarded-For` is ignored (a request carrying it logs a warning, once per "
        "process: a proxy the setting does not know of makes every client share its "
        "address); N: the N-th address from the right of it.",
    )
    allow_insecure_http_delivery: bool = Field(
        False,
        description="DEVELOPMENT ONLY: allow pushing events over plain http. Contact records "
        "otherwise leave only over HTTPS.",
    )
    allow_insecure_http_links: bool = Field(
        False,
        description="DEVELOPMENT ONLY: allow an `http://` base_url, so the confirm, unsubscribe "
        "and profile links mailed to readers travel unencrypted. `serve`, `sync`, `digest` and "
        "`create_app` otherwise refuse to start without an https base_url.",
    )

    tracing: Literal["off", "on"] = Field(
        "off",
        description="`on`: record OpenTelemetry spans (each request by its route, each database "
        "statement, each push to the platform, each sync runner step) through the tracer "
        "provider the host configured; needs the `otel` extra "
        "(`pip install 'newsletter-connector[otel]'`). Spans carry no path, query, address, "
        "token or key (see Operations, Tracing).",
    )

    # -- plugins: blocking and tracing them (docs/plugins.md) --
    blocked_plugins: tuple[str, ...] = Field(
        (),
        description="Plugins never registered, by the names `newsletter-connector plugins` "
        "lists (a TOML list; comma-separated in the environment): a built-in such as "
        "`newsletter_connector.plugins.platform_transport`, or an installed plugin's "
        "entry-point name, which is then not even imported. A name no plugin has stops "
        "start-up, naming the known ones.",
    )
    trace_hooks: bool = Field(
        False,
        description="Log each plugin hook call at DEBUG on the `newsletter_connector.hooks` "
        "logger: the hook, the plugins implementing it, how many results came back and how "
        "long it took; never the call's arguments.",
    )

    # -- observability: health checks, metrics and logs (docs/operations.md) --
    metrics_token: SecretStr | None = Field(
        None,
        description="Bearer token Prometheus sends to scrape `{base_url}/metrics` (and "
        "`sync --metrics-bind`); at least 16 characters. Unset: no metrics endpoint, the "
        "path answers as an unknown one.",
    )
    log_format: Literal["text", "json"] = Field(
        "text",
        description="`text`: one readable line per record; `json`: one JSON object per line "
        "(timestamp, level, logger, message, and the access-log fields) for the logs of "
        "`serve` (app, gunicorn and access log) and `sync`.",
    )

    @field_validator("base_url", "site_url")
    @classmethod
    def _absolute_http_url(cls, value: str | None) -> str | None:
        if value is None:
            return None
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError("must be an absolute http(s) URL")
        if parts.query or parts.fragment:
            raise ValueError("must not carry a query or fragment")
        if carries_credentials(value):
            raise ValueError("must not carry a user name or password")
        return with_lowercase_scheme(value).rstrip("/")

    @field_validator("metrics_token")
    @classmethod
    def _strong_token(cls, value: SecretStr | None) -> SecretStr | None:
        if value is None or value.get_secret_value() == "":
            return None
        token = value.get_secret_value()
        if len(token) < 16:
            raise ValueError("must be at least 16 characters (e.g. `openssl rand -hex 24`)")
        if not token.isascii() or not token.isprintable() or " " in token:
            raise ValueError("must be printable ASCII without spaces (it travels in a header)")
        return value

    @field_validator("database_url")
    @classmethod
    def _database_url(cls, value: str) -> str:
        from sqlalchemy.engine import make_url
        from sqlalchemy.exc import ArgumentError

        try:
            url = make_url(value)
        except ArgumentError as exc:
            raise ValueError(f"not a database URL ({exc})") from None
        if url.get_backend_name() not in ("sqlite", "postgresql", "mysql", "mariadb"):
            raise ValueError(
                "only sqlite://, postgresql://, mysql:// and mariadb:// URLs are supported"
            )
        return value

    @field_validator("db_reply_timeout")
    @classmethod
    def _reply_outlasts_statements(cls, value: float, info: ValidationInfo) -> float:
        statement_timeout = info.data.get("db_statement_timeout")
        if statement_timeout is not None and value <= statement_timeout:
            raise ValueError(
                f"must be longer than db_statement_timeout ({statement_timeout:g} s), or the "
                "client drops connections the server would still answer"
            )
        return value

    @field_validator("db_short_reply_timeout")
    @classmethod
    def _short_within_reply(cls, value: float, info: ValidationInfo) -> float:
        reply_timeout = info.data.get("db_reply_timeout")
        if reply_timeout is not None and value > reply_timeout:
            raise ValueError(f"must not exceed db_reply_timeout ({reply_timeout:g} s)")
        return value

    @field_validator(
        "site_name",
        "list_name",
        "from_address",
        "storage_backend",
        "issue_renderer",
    )
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be blank")
        return value.strip()

    @field_validator("blocked_plugins", mode="before")
    @classmethod
    def _comma_separated(cls, value: Any) -> Any:
        if isinstance(value, str):  # from the environment
            return tuple(name for name in value.split(","))
        return value

    @field_validator("blocked_plugins")
    @classmethod
    def _plugin_names(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        names = tuple(dict.fromkeys(name.strip() for name in value))
        if "" in names:
            raise ValueError("must not name a blank plugin")
        return names

    def __eq__(self, other: object) -> bool:
        # The same values are the same settings, wherever they were read from.
        if not isinstance(other, Settings):
            return NotImplemented
        return type(other) is type(self) and self.__dict__ == other.__dict__

    __hash__ = BaseModel.__hash__

    def model_copy(
        self, *, update: Mapping[str, Any] | None = None, deep: bool = False
    ) -> Settings:
        """A copy with ``update`` applied; the updated values' sources are forgotten."""
        copy = super().model_copy(update=update, deep=deep)
        copy._sources = {k: v for k, v in self._sources.items() if k not in (update or {})}
        return copy

    def source_of(self, field: str) -> str:
        """Where ``field``'s value came from, for messages: ``env NEWSLETTER_X``,
        ``file PATH key x``, a command-line flag such as ``--base-url``; else (a default, or
        settings built in code) the environment variable that would set it."""
        return self._sources.get(field, _env_name(field))

    @property
    def public_base_url(self) -> str:
        """``base_url``; :class:`SettingsError` naming ``NEWSLETTER_BASE_URL`` when it is unset."""
        if self.base_url is None:
            raise SettingsError(
                f"setting base_url ({_env_name('base_url')}) is required but not set"
            )
        return self.base_url

    def require_https_links(self) -> str:
        """``base_url``, which must be set and ``https`` (``http`` only with
        ``allow_insecure_http_links``) for anything building or sending readers' links.

        :raises SettingsError: naming ``NEWSLETTER_BASE_URL`` and the development setting.
        """
        base = self.public_base_url
        if not scheme_allowed(base, allow_http=self.allow_insecure_http_links):
            raise SettingsError(
                f"setting base_url ({_env_name('base_url')}) must be an https:// URL: the "
                "confirm, unsubscribe and profile links mailed to readers are built from it "
                "(plain http only with the development setting allow_insecure_http_links, "
                f"{_env_name('allow_insecure_http_links')})"
            )
        return base

    @property
    def effective_site_url(self) -> str:
        """``site_url``, or the origin of ``base_url`` when unset."""
        if self.site_url:
            return self.site_url
        parts = urlsplit(self.public_base_url)
        return f"{parts.scheme}://{parts.netloc}"

    @classmethod
    def load(
        cls,
        environ: Mapping[str, str] | None = None,
        *,
        config_file: str | Path | None = None,
        sources: Mapping[str, str] | None = None,
        **overrides: Any,
    ) -> Settings:
        """Settings from the TOML ``config_file`` (default ``$NEWSLETTER_CONFIG``), then
        ``environ`` (default ``os.environ``), then ``overrides``, later ones winning.

        :param sources: where overrides came from, for messages (``{"base_url":
            "--base-url"}``); an override without one is named ``argument NAME``.
        :raises SettingsError: naming the first unknown, missing or invalid setting and where
            its value came from; an unknown TOML key or ``NEWSLETTER_*`` variable (other than
            :data:`OTHER_VARIABLES`) is refused with the closest setting's name.
        """
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        origin: dict[str, str] = {}
        path = config_file or env.get(CONFIG_ENV)
        if path:
            for key, value in _read_toml(Path(path)).items():
                values[key] = value
                origin[key] = f"file {path} key {key}"
            _refuse_unknown_keys(values, str(path))
        _refuse_unknown_variables(env)
        for name in cls.model_fields:
            raw = env.get(_env_name(name))
            if raw is not None and raw != "":
                values[name] = raw
                origin[name] = f"env {_env_name(name)}"
        for name, value in overrides.items():
            if value is not None:
                values[name] = value
                origin[name] = (sources or {}).get(name, f"argument {name}")
        _refuse_unknown_keys(values, "overrides")
        try:
            settings = cls(**values)
        except ValidationError as exc:
            raise SettingsError(_describe(exc, origin)) from None
        settings._sources = origin
        return settings


def command_config_file(named: str | None, environ: Mapping[str, str] | None = None) -> str | None:
    """The settings file a command reads: ``named`` (``--config`` or ``NEWSLETTER_CONFIG``);
    none when ``NEWSLETTER_CONFIG`` is set but empty (the way to read no file at all); else
    :data:`DEFAULT_CONFIG_FILE` when the working directory holds one."""
    env = os.environ if environ is None else environ
    if named:
        return named
    if env.get(CONFIG_ENV) == "":
        return None
    return DEFAULT_CONFIG_FILE if Path(DEFAULT_CONFIG_FILE).is_file() else None


def _refuse_unknown_keys(values: Mapping[str, Any], where: str) -> None:
    unknown = sorted(set(values) - set(Settings.model_fields))
    if unknown:
        hint = _closest_setting(unknown[0])
        did_you_mean = f"; did you mean {hint!r}?" if hint else ""
        raise SettingsError(f"unknown setting {unknown[0]!r} (in {where}){did_you_mean}")


def _refuse_unknown_variables(env: Mapping[str, str]) -> None:
    """Refuse a set ``NEWSLETTER_*`` variable that names no setting, as an unknown TOML key
    is refused: a misspelt variable would otherwise be ignored without a word."""
    known = {_env_name(name) for name in Settings.model_fields} | OTHER_VARIABLES
    unknown = sorted(
        name
        for name, value in env.items()
        if name.startswith(ENV_PREFIX) and value and name not in known
    )
    if unknown:
        hint = _closest_setting(unknown[0][len(ENV_PREFIX) :].lower())
        did_you_mean = f"; did you mean {_env_name(hint)!r}?" if hint else ""
        raise SettingsError(f"unknown setting {unknown[0]!r} (in the environment){did_you_mean}")


def _closest_setting(name: str) -> str | None:
    close = difflib.get_close_matches(name, list(Settings.model_fields), n=1, cutoff=0.75)
    return close[0] if close else None


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as handle:
            data = tomllib.load(handle)
    except FileNotFoundError:
        raise SettingsError(f"{CONFIG_ENV}: config file {str(path)!r} does not exist") from None
    except tomllib.TOMLDecodeError as exc:
        raise SettingsError(f"{CONFIG_ENV}: config file {str(path)!r} is not TOML: {exc}") from None
    section = data.get("newsletter_connector", data)
    if not isinstance(section, dict):
        raise SettingsError(f"{path}: [newsletter_connector] must be a table")
    return dict(section)


def _describe(exc: ValidationError, origin: Mapping[str, str]) -> str:
    error = exc.errors()[0]
    field = str(error["loc"][0]) if error["loc"] else "settings"
    if error["type"] == "missing":
        problem = "is required but not set"
    else:
        problem = f"is invalid: {error['msg']}"
    return f"setting {field} ({origin.get(field, _env_name(field))}) {problem}"
