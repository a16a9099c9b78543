"""The soul (persona.md) over time: its sections, every version of it, and the persona's proposals to change
it that the person reviews (issue 25)."""
