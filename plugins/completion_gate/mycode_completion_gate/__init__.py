"""Completion gate."""
