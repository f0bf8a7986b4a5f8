"""Leaf helpers on strings, used by every room: what is safe to show where, and the language profiles
that decide how a task's text is normalised (:mod:`nlue.text.profiles`)."""
