"""Helpers shared by the tests (fixtures live in the conftest.py files, not here).

- :mod:`tests.helpers.cli`: run the CLI in-process (the default) or as a real process.
- :mod:`tests.helpers.goldens`: write goldens and outputs files; the two-golden sample project.
- :mod:`tests.helpers.runs`: fixed gate runs and agent documents for the report views.
- :mod:`tests.helpers.telemetry`: telemetry that passes the packaged smoke tier.
- :mod:`tests.helpers.fake_openai`: an OpenAI-compatible server on loopback.
"""
