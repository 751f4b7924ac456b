"""Screens of the TUI: the main screen and its modal dialogs."""
