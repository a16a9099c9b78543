"""Rooms: the person and two to six personas talking together (issue 24)."""
