"""The runtime: each open persona lives on its own (its queue of events, scheduled jobs, autonomy)."""
