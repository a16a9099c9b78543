"""Settings files: config.toml (the person's preferences, schema-versioned), state.toml (what the app
remembers for itself), and the one way every TOML settings file is read and written (persona.toml too)."""

from nexus_ark.config.app_settings import (
    SETTINGS_VERSION,
    STATE_KEYS,
    AppSettings,
    AppState,
    SettingsStore,
)
from nexus_ark.config.toml_files import (
    FIX_IN_EDITOR,
    SECRET_FIELDS,
    cannot_read,
    describe_validation_error,
    edit_toml_file,
    load_toml_model,
    one_line_name,
    problem_list,
    read_toml,
    replace_file,
    save_toml_model,
    toml_loads,
    unreadable_json,
    validation_problems,
    write_text_atomically,
)
from nexus_ark.config.versions import load_app_settings, load_app_state, open_app_files

__all__ = [
    "FIX_IN_EDITOR",
    "SECRET_FIELDS",
    "SETTINGS_VERSION",
    "STATE_KEYS",
    "AppSettings",
    "AppState",
    "SettingsStore",
    "cannot_read",
    "describe_validation_error",
    "edit_toml_file",
    "load_app_settings",
    "load_app_state",
    "load_toml_model",
    "one_line_name",
    "open_app_files",
    "problem_list",
    "read_toml",
    "replace_file",
    "save_toml_model",
    "toml_loads",
    "unreadable_json",
    "validation_problems",
    "write_text_atomically",
]
