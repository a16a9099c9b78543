"""The conversation: the chat view, its pages and search, the session worker that runs turns, the prompt
view."""
