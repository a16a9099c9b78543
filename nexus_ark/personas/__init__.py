"""Persona folders: persona.md (the soul), persona.toml (settings), memory.db (memory)."""
