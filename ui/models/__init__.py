"""Choosing a persona's models and downloading one (used by the settings and the dashboard)."""
