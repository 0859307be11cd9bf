"""Graph registry and built-in graphs."""
