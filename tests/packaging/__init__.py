"""Tests of the package as shipped: wheel, installs, extras, examples, the test tiers,
the import graph."""
