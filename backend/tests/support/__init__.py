"""Test support: live servers and helpers shared by the suites."""
