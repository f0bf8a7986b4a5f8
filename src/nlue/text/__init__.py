"""Leaf helpers on strings, used by every room: what is safe to show where, and (later) language profiles."""
