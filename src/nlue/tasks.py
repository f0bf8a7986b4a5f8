"""Compatibility: the task registry moved to :mod:`nlue.registry.tasks`; this name keeps working."""

from nlue.registry.tasks import *  # noqa: F403
from nlue.registry.tasks import __all__  # noqa: F401
