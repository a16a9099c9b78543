"""Creating, editing, importing and exporting personas."""
