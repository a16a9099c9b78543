"""The main window: the persona list, the conversation and the menus that open every other window."""
