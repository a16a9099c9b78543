"""Nexus Ark core: personas, memory, models and the runtime. Plain Python, never Qt."""

__version__ = "0.1.0"
