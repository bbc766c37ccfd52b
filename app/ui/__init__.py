"""The tray app (``meshnet-app``): Qt screens over a supervised ``meshnet-node`` child.

Three layers, each importing only those below it (tests/app/ui/test_ui_layers.py
keeps it so):

- ``widgets/``: reusable widgets and drawing (icons, the usage chart, the
  settings editors, labels); they know no screen and no child process.
- plumbing, the modules at this level: the node child and its events
  (``controller``, ``node_process``, ``json_child``), background work
  (``tasks``), the one error path (``errors``), settings (``settings_store``),
  the commands shared by tray and windows (``actions``), the pause rules'
  timer (``pause_monitor``), batch jobs (``batch_jobs``), the credit
  (``credit_card``, ``credit_linker``) and the single-instance lock
  (``single_instance``).
- ``screens/``: one file per screen, the doctor wizard a package with one file
  per page; a screen never imports another screen.

``main`` (the entry point) and ``screenshots`` put the screens together.
"""
