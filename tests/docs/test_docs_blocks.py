"""Every code block in the docs is executed by a test or explicitly marked as not runnable."""

from __future__ import annotations

from tests.support.docblocks import ROOT, all_blocks, free_names


def test_every_block_is_named_or_marked_not_runnable() -> None:
    unmarked = [
        f"{block.path.relative_to(ROOT)}:{block.line}"
        for block in all_blocks()
        if block.name is None and block.not_run_reason is None
    ]
    assert not unmarked, f"code blocks without <!-- block: --> or <!-- not-run: -->: {unmarked}"


def test_every_named_block_is_run_by_a_test() -> None:
    sources = "".join(
        path.read_text() for path in (ROOT / "tests").rglob("*.py") if path.name != "docblocks.py"
    )
    names = [block.name for block in all_blocks() if block.name]
    assert len(names) == len(set(names)), "block names must be unique"
    # A numbered family ("family:N") is run by the test that names the family.
    missing = [name for name in names if f'"{name.split(":")[0]}"' not in sources]
    assert not missing, f"docs blocks no test runs: {missing}"


def test_every_python_block_runs() -> None:
    """Python is never left as an unrun snippet: every Python block is named, so a test runs it."""
    unrun = [
        f"{block.path.relative_to(ROOT)}:{block.line} ({block.not_run_reason})"
        for block in all_blocks()
        if block.language == "python" and block.name is None
    ]
    assert not unrun, f"Python blocks marked not-run: {unrun}"


def test_every_python_block_has_its_imports() -> None:
    """Each Python block runs standalone: every name it reads is imported or defined in it."""
    incomplete = {
        f"{block.path.relative_to(ROOT)}:{block.line}": free_names(block.code)
        for block in all_blocks()
        if block.language == "python" and free_names(block.code)
    }
    assert not incomplete, f"Python blocks using names they never import or define: {incomplete}"


def test_free_names_finds_what_a_block_lacks() -> None:
    code = "import os\nfrom a import b as c\n\ndef f(x):\n    return os, c, x, len, service\n"
    assert free_names(code) == ["service"]
