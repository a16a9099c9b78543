"""Rooms in the window (issue 24): the person with two to six personas at once. The room list and the New
room dialog beside the personas, the room's panel in place of a persona's conversation (its lines, a reply
streamed per member, the next speaker, auto mode), and the room's lane that drives its conversation."""
