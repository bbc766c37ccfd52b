"""Reusable widgets and drawing the screens share: icons, the usage chart,
the settings editors and labels. Nothing here knows a screen or the node child."""
