"""Sleep-time dreaming: the persona reflects on its days (level 1), weeks (2) and months (3)."""
