"""The settings window: ``settings_dialog.py`` (every setting, checked before it is
saved) and ``hub_download.py`` (the model download it opens from Hugging Face)."""
