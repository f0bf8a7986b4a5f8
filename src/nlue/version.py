"""nlue's version, in a module of its own: the lower rooms (the dataset card, the build marker) name it
without importing the package's front door, which loads the task registry."""

__version__ = "0.1.0"
