"""The app's settings and the About dialog."""
