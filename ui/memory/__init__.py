"""The Memory window and importing past conversations into a persona's memory."""
