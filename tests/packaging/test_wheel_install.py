"""The install from a built wheel that docs/getting-started.md describes works: ``pip wheel``
builds the package from a copy of the checkout, ``pip install`` puts it into a fresh virtual
environment, and the installed command line and package data (migrations, reader-page
templates) work from there. The wheel's metadata carries the licence (an SPDX expression and
the licence file) and only classifiers PyPI knows.

Offline and quick: the wheel is built without build isolation (``setuptools`` and ``wheel`` come
with the ``test`` extra) and installed with ``--no-index --no-deps``; the fresh environment
finds the dependencies through a ``.pth`` line naming this environment's site-packages, which
comes after its own, so the package itself is always the wheel's copy.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from email.message import Message
from email.parser import Parser
from pathlib import Path

import pytest
from trove_classifiers import classifiers as known_classifiers

from tests.support.paths import ROOT

pytestmark = [pytest.mark.system, pytest.mark.database_independent]

SIGNUP_PAGE = """
import falcon.testing
from newsletter_connector import Settings, create_app

app = create_app(Settings.load(base_url="https://example.org/newsletter"))
page = falcon.testing.TestClient(app).simulate_get("/signup")
assert page.status_code == 200, page.status_code
assert "<form" in page.text
app.service.close()
print(__import__("newsletter_connector").__file__)
"""


def run(*args: str | Path, cwd: Path, env: dict[str, str] | None = None) -> str:
    result = subprocess.run(
        [str(arg) for arg in args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, f"{args}:\n{result.stdout}\n{result.stderr}"
    return result.stdout


def copy_checkout(target: Path) -> None:
    """What a wheel is built from: the project metadata, the README and licence it names, and
    src/."""
    target.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, target / name)
    shutil.copytree(
        ROOT / "src",
        target / "src",
        ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"),
    )


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel ``pip wheel`` builds from a copy of this checkout."""
    base = tmp_path_factory.mktemp("wheel")
    checkout = base / "checkout"
    copy_checkout(checkout)
    pip = (sys.executable, "-m", "pip", "--disable-pip-version-check")
    run(*pip, "wheel", ".", "--no-deps", "--no-build-isolation", "-w", base / "dist", cwd=checkout)
    (built,) = (base / "dist").glob("newsletter_connector-*.whl")
    return built


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory, wheel: Path) -> Path:
    """A fresh virtual environment with the wheel built from this checkout installed."""
    base = tmp_path_factory.mktemp("venv")
    venv = base / "venv"
    run(sys.executable, "-m", "venv", venv, cwd=base)
    python = venv / "bin" / "python"
    run(python, "-m", "pip", "install", "-q", "--no-index", "--no-deps", wheel, cwd=base)
    site_packages = run(
        python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])", cwd=base
    ).strip()
    (Path(site_packages) / "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return venv


def test_installed_command_line_runs(installed: Path, tmp_path: Path) -> None:
    help_text = run(installed / "bin" / "newsletter-connector", "--help", cwd=tmp_path)
    assert "Usage: newsletter-connector" in help_text
    assert "quickstart" in help_text


def test_installed_package_migrates_and_serves_reader_pages(
    installed: Path, tmp_path: Path
) -> None:
    env = {
        "PATH": f"{installed / 'bin'}:/usr/bin:/bin",
        "NEWSLETTER_DATABASE_URL": f"sqlite:///{tmp_path / 'newsletter.db'}",
        "NEWSLETTER_SITE_SECRET": "wheel-test-secret",
    }
    out = run(installed / "bin" / "newsletter-connector", "db", "upgrade", cwd=tmp_path, env=env)
    assert "schema revision" in out
    location = run(installed / "bin" / "python", "-c", SIGNUP_PAGE, cwd=tmp_path, env=env)
    # The package came from the wheel, not from the checkout's editable install.
    assert location.strip().startswith(str(installed))


def wheel_metadata(wheel: Path) -> tuple[Message, dict[str, bytes]]:
    """The wheel's ``METADATA`` and its ``.dist-info`` files by path within that folder."""
    with zipfile.ZipFile(wheel) as archive:
        (dist_info,) = {name.split("/")[0] for name in archive.namelist() if ".dist-info/" in name}
        files = {
            name.removeprefix(dist_info + "/"): archive.read(name)
            for name in archive.namelist()
            if name.startswith(dist_info + "/")
        }
    return Parser().parsestr(files["METADATA"].decode()), files


def test_wheel_metadata_carries_the_licence(wheel: Path) -> None:
    metadata, files = wheel_metadata(wheel)
    assert metadata["Metadata-Version"] >= "2.4"  # the version with License-Expression
    assert metadata["License-Expression"] == "Apache-2.0"
    assert metadata.get_all("License-File") == ["LICENSE"]
    assert files["licenses/LICENSE"] == (ROOT / "LICENSE").read_bytes()
    text = files["licenses/LICENSE"].decode()
    assert "Apache License" in text and "Version 2.0, January 2004" in text
    assert "END OF TERMS AND CONDITIONS" in text  # the full text, not a notice


def test_wheel_classifiers_are_known_and_name_each_supported_python(wheel: Path) -> None:
    metadata, _ = wheel_metadata(wheel)
    classifiers = metadata.get_all("Classifier") or []
    assert classifiers and not set(classifiers) - known_classifiers
    assert not [c for c in classifiers if c.startswith("License ::")]  # PEP 639: the expression
    versions = [
        c.removeprefix("Programming Language :: Python :: ")
        for c in classifiers
        if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c)
    ]
    assert versions == ["3.10", "3.11", "3.12", "3.13"]
    assert metadata["Requires-Python"] == f">={versions[0]}"
