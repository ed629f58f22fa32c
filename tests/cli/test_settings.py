from __future__ import annotations

from pathlib import Path

import pytest

from newsletter_connector.settings import DEFAULT_DATABASE_URL, Settings, SettingsError


def test_defaults_and_environment() -> None:
    settings = Settings.load({"NEWSLETTER_BASE_URL": "https://example.org/news/"})
    assert settings.base_url == "https://example.org/news"
    assert settings.database_url == DEFAULT_DATABASE_URL
    assert settings.effective_site_url == "https://example.org"
    assert settings.storage_backend == "sql"
    assert settings.issue_renderer == "html"


def test_every_field_is_readable_from_its_env_var() -> None:
    env = {
        "NEWSLETTER_DATABASE_URL": "postgresql://u@db/news",
        "NEWSLETTER_BASE_URL": "https://example.org",
        "NEWSLETTER_SITE_NAME": "Silver News",
        "NEWSLETTER_SITE_URL": "https://silver.example",
        "NEWSLETTER_POSTAL_ADDRESS": "1 Main St",
        "NEWSLETTER_LIST_NAME": "Daily",
        "NEWSLETTER_FROM_ADDRESS": "Silver <news@silver.example>",
        "NEWSLETTER_SITE_SECRET": "s3cret-value",
        "NEWSLETTER_STORAGE_BACKEND": "custom",
        "NEWSLETTER_ISSUE_RENDERER": "plain",
        "NEWSLETTER_DELIVERY_MODE": "site",
        "NEWSLETTER_PLATFORM_SEND_NOW": "false",
        "NEWSLETTER_ALLOW_INSECURE_HTTP_DELIVERY": "true",
    }
    settings = Settings.load(env)
    assert settings.site_name == "Silver News"
    assert settings.delivery_mode == "site"
    assert settings.platform_send_now is False
    assert settings.allow_insecure_http_delivery is True
    assert settings.site_secret is not None
    assert settings.site_secret.get_secret_value() == "s3cret-value"


def test_secret_never_in_repr() -> None:
    settings = Settings.load(
        {"NEWSLETTER_BASE_URL": "https://e.org", "NEWSLETTER_SITE_SECRET": "hunter2-hunter2"}
    )
    assert "hunter2" not in repr(settings)
    assert "hunter2" not in str(settings)


def test_toml_file_then_env_wins(tmp_path: Path) -> None:
    config = tmp_path / "newsletter.toml"
    config.write_text(
        '[newsletter_connector]\nbase_url = "https://from-file.example"\nsite_name = "File"\n'
    )
    settings = Settings.load({"NEWSLETTER_CONFIG": str(config), "NEWSLETTER_SITE_NAME": "Env"})
    assert settings.base_url == "https://from-file.example"
    assert settings.site_name == "Env"


@pytest.mark.parametrize(
    ("env", "named"),
    [
        ({"NEWSLETTER_BASE_URL": "ftp://x"}, "NEWSLETTER_BASE_URL"),
        ({"NEWSLETTER_BASE_URL": "https://x/?q=1"}, "NEWSLETTER_BASE_URL"),
        ({"NEWSLETTER_DATABASE_URL": "mssql://x/y"}, "NEWSLETTER_DATABASE_URL"),
        ({"NEWSLETTER_DATABASE_URL": "not a url"}, "NEWSLETTER_DATABASE_URL"),
        ({"NEWSLETTER_DELIVERY_MODE": "carrier-pigeon"}, "NEWSLETTER_DELIVERY_MODE"),
        ({"NEWSLETTER_SITE_NAME": "   "}, "NEWSLETTER_SITE_NAME"),
        ({"NEWSLETTER_PLATFORM_SEND_NOW": "perhaps"}, "NEWSLETTER_PLATFORM_SEND_NOW"),
    ],
)
def test_invalid_setting_names_its_variable(env: dict[str, str], named: str) -> None:
    with pytest.raises(SettingsError, match=named):
        Settings.load(env)


def test_missing_base_url_is_named_where_needed() -> None:
    settings = Settings.load({})
    with pytest.raises(SettingsError, match="NEWSLETTER_BASE_URL"):
        _ = settings.public_base_url


def test_unknown_toml_key_and_missing_file(tmp_path: Path) -> None:
    config = tmp_path / "c.toml"
    config.write_text('base_url = "https://e.org"\nbase_ulr = "typo"\n')
    with pytest.raises(SettingsError, match="base_ulr"):
        Settings.load({}, config_file=config)
    with pytest.raises(SettingsError, match="does not exist"):
        Settings.load({}, config_file=tmp_path / "missing.toml")
    config.write_text("not = [toml")
    with pytest.raises(SettingsError, match="not TOML"):
        Settings.load({}, config_file=config)
