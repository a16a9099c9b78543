"""The personas' lives between conversations: the inner-life dashboard, the activity timeline, the inbox
and the tray."""
