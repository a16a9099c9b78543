"""The soul over time (issue 25): its history (every version of persona.md, compared and restored) and the
persona's proposals to change it, reviewed by the person."""
