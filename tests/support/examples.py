"""How many examples a property test runs: all of them in CI and in any run that includes the
system tier (the ``ci`` hypothesis profile), a quarter in the quick tier (``quick``).

``tests/conftest.py`` registers both profiles and loads one before any test module is imported;
``HYPOTHESIS_PROFILE=ci`` (as ``.ci/run`` sets) or ``--hypothesis-profile`` chooses it.
"""

from __future__ import annotations

from hypothesis import settings

#: The quick tier runs this share of each count, and never fewer than :data:`FEWEST`.
QUICK_SHARE = 4
FEWEST = 10


def examples(full: int) -> int:
    """``full`` under the ``ci`` profile, else a quarter of it (at least :data:`FEWEST`)."""
    if settings.get_current_profile_name() == "ci":
        return full
    return max(full // QUICK_SHARE, min(full, FEWEST))
