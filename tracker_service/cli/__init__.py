"""meshnet-tracker and its subcommands (serve, relay, recipes, tokens, keys,
submitters, jobs, backup, restore, check-db).

``main`` stays importable here so the ``tracker_service.cli:main`` entry point of
existing installs keeps working.
"""

from tracker_service.cli.commands import build_parser, main

__all__ = ["build_parser", "main"]
