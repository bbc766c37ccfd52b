"""The app's screens, one per file: the tray, the status window (a package: the
main view and Details), the recipes view, the settings dialog and the doctor
wizard (a package, one file per page).

Screens build on the plumbing in ``app.ui`` and the widgets in ``app.ui.widgets``;
they never import each other (the doctor wizard's pages import only their own
package). ``app.ui.main`` and ``app.ui.screenshots`` put them together.
"""
