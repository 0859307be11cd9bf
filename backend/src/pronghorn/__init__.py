"""Pronghorn: an open-source agent gateway."""

__version__ = "0.1.0"
