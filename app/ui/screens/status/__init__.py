"""The Status window: ``window.py`` (the main view in plain words, its banner,
sections and clocks) and ``details.py`` (the Details view: every step with its
reason code, the usage chart, the node's log)."""
