"""Every ``[tool.setuptools.package-data]`` glob in pyproject.toml names at least one file of
the package, so an entry for a folder that was moved or removed cannot linger."""

from __future__ import annotations

from tests.support.paths import ROOT

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]


def package_data_globs() -> dict[str, list[str]]:
    """The package-data globs, by package."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    globs: dict[str, list[str]] = config["tool"]["setuptools"]["package-data"]
    return globs


def test_package_data_is_declared() -> None:
    assert "web/admin/templates/*.html" in package_data_globs()["newsletter_connector"]


def test_every_package_data_glob_matches_a_file() -> None:
    dead = [
        f"{package}: {pattern}"
        for package, patterns in package_data_globs().items()
        for pattern in patterns
        if not any(
            path.is_file() for path in (ROOT / "src" / package.replace(".", "/")).glob(pattern)
        )
    ]
    assert dead == [], "package-data globs that match no file"
