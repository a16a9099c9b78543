"""The append-only schema history of memory.db. Never edit or reorder a step that has shipped: add one.

STEPS below is the one list: the order the steps apply in, one line each. A new step is a function in the
module of its job (steps_conversation: messages and what is made of them; steps_archive: what recall
searches; steps_life: the timeline, the mind, the runtime, dreams, retention, the soul), named
m<number>_<what it does>, and one line appended to STEPS. runner.py applies the list.
"""

from nexus_ark.memory.migrations import steps_archive as archive
from nexus_ark.memory.migrations import steps_conversation as conversation
from nexus_ark.memory.migrations import steps_life as life
from nexus_ark.memory.migrations.runner import (
    MIGRATION_SET,
    UPDATE_TO_OPEN,
    Step,
    check_current,
    migrate,
    migrations,
)

STEPS: tuple[Step, ...] = (
    conversation.m001_messages,
    archive.m002_memory_components,
    archive.m003_vector_index_state,
    archive.m004_vector_log,
    conversation.m005_messages_source_unique,
    life.m006_activity,
    conversation.m007_message_versions,
    conversation.m008_conversation_summaries,
    life.m009_mind,
    conversation.m010_summary_forgetting,
    life.m011_runtime,
    archive.m012_document_error_notice,
    life.m013_dream_passes,
    life.m014_retention,
    archive.m015_embeddings_in_leaf_pages,
    life.m016_soul_history,
    conversation.m017_chatgpt_answers_are_chatgpts,
    life.m018_indexes_of_the_rows_looked_up,
    archive.m019_vectors_in_float16,
    archive.m020_trigram_index_without_neighbours_of_cjk_text,
    archive.m021_entity_readings,
)

for step in STEPS:
    migrations()(step)

__all__ = ["MIGRATION_SET", "STEPS", "UPDATE_TO_OPEN", "check_current", "migrate", "migrations"]
