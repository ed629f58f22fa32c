"""An example issue content plugin (docs/issues.md, "A worked example")."""
