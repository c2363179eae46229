"""Helpers for the tests (no tests here): factories, app fixtures, processes, paths, generators, fake servers."""
