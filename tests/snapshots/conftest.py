"""The app tests' fixtures (tests/support/app_fixtures.py): store, make_app, tournament_app."""

from tests.support.app_fixtures import make_app, store, tournament_app  # noqa: F401
