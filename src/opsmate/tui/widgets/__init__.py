"""Widgets of the TUI (display only: the app's message handlers drive them)."""
