"""The append-only schema history of memory.db. Never edit a migration that has shipped: add one.

Steps apply in the order they register, that is the order their modules are imported below: steps_001_005,
steps_006_010, steps_011_015, steps_016_020 (five steps a module). A new step goes after the last one, in
steps_016_020.py up to m020; m021 starts steps_021_025.py. runner.py holds the list and applies it.
"""

# The step modules register their steps on import, in this order.
from nexus_ark.memory.migrations import (  # noqa: F401
    steps_001_005,
    steps_006_010,
    steps_011_015,
    steps_016_020,
)
from nexus_ark.memory.migrations.runner import (
    MIGRATION_SET,
    UPDATE_TO_OPEN,
    check_current,
    migrate,
    migrations,
)

__all__ = ["MIGRATION_SET", "UPDATE_TO_OPEN", "check_current", "migrate", "migrations"]
