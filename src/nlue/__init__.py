"""nlue: the Hugging Face-native benchmark suite for Nepali language understanding."""

from nlue.registry.tasks import TASK_NAMES, TASKS, TaskSpec, get_task
from nlue.version import __version__

__all__ = ["TASKS", "TASK_NAMES", "TaskSpec", "__version__", "get_task"]
