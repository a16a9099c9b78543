"""What the dead-code check cannot see being used: names reached by getattr, a library or a file format.

vulture (run by .ci/run; pyproject's [tool.vulture] names this file among its paths) reads this file with the
code, so a name that appears here counts as used. Each entry says who uses it. Never imported; names that
Python, Qt, pydantic or pytest call by convention are in [tool.vulture] instead (ignore_names, decorators).
"""

from nexus_ark.agent.memory_tools import MemoryTools
from nexus_ark.config.app_settings import AppSettings
from nexus_ark.memory.messages import StoredMessage
from nexus_ark.personas.cards.schema import CardData, LoreEntry
from nexus_ark.personas.model import DriveSettings
from nexus_ark.providers.base import Capabilities
from nexus_ark.providers.llama_cpp_contexts import EvalStats
from nexus_ark.soul.records import SoulProposal

_ = (
    # The model's memory tools: MemoryTools.toolbox() takes each method by its name in SPECS (getattr).
    MemoryTools.search_memory,
    MemoryTools.edit_core_memory,
    MemoryTools.edit_notepad,
    MemoryTools.read_entity,
    MemoryTools.write_entity,
    MemoryTools.set_goal,
    MemoryTools.update_goal,
    MemoryTools.emit_event,
    MemoryTools.archive_memory,
    # Character Card V2/V3 fields: declared so pydantic checks each one's type and size when a card is
    # imported (a card that breaks a limit is refused in words); the persona is built from the others.
    LoreEntry.secondary_keys,
    CardData.mes_example,
    CardData.system_prompt,
    CardData.post_history_instructions,
    CardData.group_only_greetings,
    CardData.tags,
    CardData.creator,
    CardData.character_version,
    # Written to config.toml by model_dump; config/versions.py reads it raw, before the model is built.
    AppSettings.schema_version,
    # A drive's threshold, read by the drive's name (DRIVES in mind/drive_report.py) and shown in the editor.
    DriveSettings.goal_achievement,
    # Columns filled from their rows, kept on the record for what reads the row back (versions, proposals).
    StoredMessage.branch_of,
    SoulProposal.decided_at,
    # Part of the capability record every backend declares (copied whole with model_dump); nothing branches
    # on it yet.
    Capabilities.structured,
    # llama.cpp's own count for the last request, set with the others in last_eval (bench/turn_latency.py
    # prints last_eval).
    EvalStats.context_tokens,
)
