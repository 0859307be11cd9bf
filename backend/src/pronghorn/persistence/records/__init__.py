"""Typed frozen records the repository units return."""
