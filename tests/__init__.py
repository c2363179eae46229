"""The test suite (tests/README.md): a package, so that `tests.support` is this checkout's."""
