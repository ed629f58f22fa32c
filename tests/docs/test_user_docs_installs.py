"""The user docs' install commands, run as written in one fresh virtual environment: the
package is not published yet, so ``pip`` finds it as a wheel built from this checkout (through
``PIP_FIND_LINKS``, as a package index would offer it), and the dependencies are this
environment's, seen through a ``.pth`` line (so each install resolves them as satisfied instead
of installing them again: one environment, a few seconds, offline). Then getting started's
clone, editable install and wheel build, from a clone of this repository, and the operations
page's tracing set-up against a local OTLP collector."""

from __future__ import annotations

import sys
import sysconfig
import time
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path

import pytest

from newsletter_connector import __version__
from tests.packaging.test_wheel_install import copy_checkout, run
from tests.support.doc_shell import Shell, replaced, without_comments
from tests.support.docblocks import docblock
from tests.support.otlp_receiver import OtlpReceiver
from tests.support.paths import ROOT

# Builds a wheel, makes a virtual environment and runs pip, git and the command line in it
pytestmark = [pytest.mark.system, pytest.mark.database_independent]


@pytest.fixture(scope="module")
def shell(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Shell]:
    """A fresh shell whose ``pip`` and ``python`` are a fresh virtual environment's, with the
    wheel of this checkout where pip looks for packages."""
    base = tmp_path_factory.mktemp("installs")
    checkout = base / "checkout"
    copy_checkout(checkout)
    pip = (sys.executable, "-m", "pip", "--disable-pip-version-check")
    run(*pip, "wheel", ".", "--no-deps", "--no-build-isolation", "-w", base / "dist", cwd=checkout)
    venv = base / "venv"
    run(sys.executable, "-m", "venv", venv, cwd=base)
    # The setuptools venv brings is older than the project's licence metadata needs; builds
    # use the dependencies' one.
    run(venv / "bin" / "python", "-m", "pip", "uninstall", "-q", "-y", "setuptools", cwd=base)
    purelib = run(
        venv / "bin" / "python",
        "-c",
        "import sysconfig; print(sysconfig.get_paths()['purelib'])",
        cwd=base,
    ).strip()
    # This environment's packages but its own (editable) install of this one.
    dependencies = base / "dependencies"
    dependencies.mkdir()
    for entry in Path(sysconfig.get_paths()["purelib"]).iterdir():
        if "newsletter_connector" not in entry.name:
            (dependencies / entry.name).symlink_to(entry)
    (Path(purelib) / "dependencies.pth").write_text(f"{dependencies}\n")
    # ... and the commands their installs would have made (opentelemetry-instrument, say).
    for distribution in metadata.distributions(path=[str(dependencies)]):
        for entry in distribution.entry_points.select(group="console_scripts"):
            script = venv / "bin" / entry.name
            if not script.exists():
                module, _, function = entry.value.partition(":")
                script.write_text(
                    f"#!{venv / 'bin' / 'python'}\nimport sys\nfrom {module} import {function}\n"
                    f"sys.exit({function}())\n"
                )
                script.chmod(0o755)
    folder = base / "home"
    folder.mkdir()
    yield Shell(
        folder,
        PATH=f"{venv / 'bin'}:/usr/bin:/bin",
        PIP_FIND_LINKS=str(base / "dist"),
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        # setuptools comes with the dependencies, not from an isolated build environment.
        PIP_NO_BUILD_ISOLATION="0",
        NEWSLETTER_CONFIG="",
        NEWSLETTER_DATABASE_URL=f"sqlite:///{folder / 'newsletter.db'}",
        NEWSLETTER_BASE_URL="https://news.example.org/newsletter",
        NEWSLETTER_SITE_SECRET="a-site-secret-for-the-install-commands-0123",
    )


def installed_from(shell: Shell) -> str:
    """Where the environment's ``newsletter_connector`` is imported from."""
    # Found, not imported: a few milliseconds instead of the package's import.
    return shell.run(
        "python -c 'from importlib.util import find_spec; "
        'print(find_spec("newsletter_connector").origin)\''
    ).stdout


def test_the_index_installs(shell: Shell) -> None:
    for name in ("start-pip-index", "asgi-pip"):
        shell.run(docblock(name))
        assert installed_from(shell).startswith(str(shell.env["PATH"].split("/bin:")[0]))
    shell.run("newsletter-connector --help && python -c 'import psycopg, a2wsgi'")


def test_tracing_installs_and_exports_to_a_collector(shell: Shell) -> None:
    install = docblock("ops-tracing-install")
    shell.run(install + "newsletter-connector db upgrade\n")
    collector = OtlpReceiver()
    try:
        block = replaced(
            docblock("ops-tracing-instrument"),
            {"http://127.0.0.1:4318/v1/traces": collector.endpoint},
        )
        shell.env["OTEL_BSP_SCHEDULE_DELAY"] = "100"  # export at once, not every 5 s
        try:
            with shell.running(block, says="sync runner started"):
                deadline = time.monotonic() + 60
                while not collector.spans and time.monotonic() < deadline:
                    time.sleep(0.2)
        finally:
            del shell.env["OTEL_BSP_SCHEDULE_DELAY"]
    finally:
        collector.close()
    assert collector.spans, "the runner exported no span"
    assert {span["service"] for span in collector.spans} == {"newsletter"}


def test_getting_started_s_clone_editable_install_and_wheel(shell: Shell) -> None:
    clone = replaced(docblock("start-clone"), {"<repository-url>": str(ROOT)})
    shell.run(clone)
    checkout = shell.folder / "newsletter-connector"
    assert installed_from(shell).startswith(str(checkout / "src"))

    # The wheel steps: the file name the page installs is the one pip builds.
    steps = docblock("start-wheel")
    assert f"newsletter_connector-{__version__}-py3-none-any.whl" in steps
    printed = shell.run(without_comments(steps)).stdout
    assert "Usage: newsletter-connector" in printed
    assert (checkout / "dist" / f"newsletter_connector-{__version__}-py3-none-any.whl").exists()
    assert "site-packages" in installed_from(shell)

    # "Install the package" repeats the clone's install line word for word (run above).
    (again,) = without_comments(docblock("start-pip-checkout")).split("#")[:1]
    assert again.strip() in clone.splitlines()[1], (again, clone)
