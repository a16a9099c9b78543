"""The persona's inner life as pure computations on memory state: emotions now, drives later."""
