"""Every code block in the docs is executed by a test or explicitly marked as not runnable."""

from __future__ import annotations

from .support.docblocks import ROOT, all_blocks


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
