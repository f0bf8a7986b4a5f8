"""Task files: one YAML file declares a task (or a benchmark of several), for every nlue command.

* :mod:`~nlue.registry.task_file.read` - the file read safely: bounded, ``yaml.safe_load``'s types,
  no anchors, no repeated keys, the line of every key;
* :mod:`~nlue.registry.task_file.schema` - the published JSON Schema (``task_file.schema.json``);
* :mod:`~nlue.registry.task_file.checks` - what a schema cannot say (labels, prompts, files, kinds);
* :mod:`~nlue.registry.task_file.convert` - a checked declaration as a :class:`~nlue.registry.spec.TaskSpec`;
* :mod:`~nlue.registry.task_file.load` - :func:`load_task_file`, the one path the shipped tasks and a
  user's take; :mod:`~nlue.registry.task_file.register` - a user's files registered for one process;
* :mod:`~nlue.registry.task_file.template` - the commented starting file of `nlue tasks new`.

This package's ``__init__`` imports nothing, so that the registry can load its own tasks through it.
"""
