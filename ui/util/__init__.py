"""What every window uses: translation, workers, the theme, core events, avatars, the settings form.

The bottom layer of ui/: it imports nothing else from ui (pyproject.toml, [tool.importlinter])."""
