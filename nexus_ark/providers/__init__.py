"""Chat backends behind one small interface, and the registry that builds them from a model spec."""
