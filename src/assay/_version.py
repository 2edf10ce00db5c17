"""The package version, kept in one place (importlib.metadata costs start-up time)."""

__version__ = "0.1.0"
