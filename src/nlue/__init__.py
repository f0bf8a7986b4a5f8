"""nlue: the Hugging Face-native benchmark suite for Nepali language understanding."""

from nlue.registry.tasks import TASK_NAMES, TASKS, TaskSpec, get_task

__version__ = "0.1.0"

__all__ = ["TASKS", "TASK_NAMES", "TaskSpec", "__version__", "get_task"]
