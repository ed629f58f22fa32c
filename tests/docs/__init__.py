"""Tests of the documentation: its pages, code blocks, named paths and site build."""
