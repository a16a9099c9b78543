"""Conversations: the prompt builder and the turn engine."""
