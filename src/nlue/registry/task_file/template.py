"""The commented starting file `nlue tasks new --kind K` prints: valid as it stands, for every kind.

The parts every task file has are here; each kind's own keys, a small working task of the kind, are
its :class:`~nlue.registry.kinds.base.StarterFile` (in the kind's module). The template says in comments what every key
is for, and shows the optional keys commented out (data sources, licence, citation), so
that a user edits rather than writes from nothing. ``tests/test_task_file.py`` loads each
one for every kind.
"""

from __future__ import annotations

import re
from string import Template

from nlue.errors import NlueError
from nlue.registry.kinds import KINDS
from nlue.registry.profiles import default_profile

_NAME = re.compile(r"^[a-z][a-z0-9_]{0,39}$")
_LANGUAGE = re.compile(r"^[a-z]{2,3}$")

_HEAD = """\
# An nlue task file: one task, declared for every nlue command.
# Check it with `nlue tasks validate $file_hint`; every key: docs/reference/task-file.md.
# name: the dataset config, lower-case letters, digits and _.
name: $name
version: 1.0.0
title: $title
description: $description
# languages: ISO 639 codes of the text, the first the main one. The profile (text rules: nepali, urdu or
# plain) follows the first language unless given: $profile for $language.
languages: [$language]
# profile: $profile
kind: $kind
"""

_TAIL = """\
# license: cc-by-4.0             # the data's licence (a Hub licence id)
# citation: |                    # BibTeX of the data's paper or release
#   @misc{my_task, title = {...}}
# sizes: {train: 1000, test: 200, total: 1200}   # the published sizes, for the card
# domains: [news]
# sources: [where the items come from]
"""

_DATA = """\
# data:                          # where each split comes from; paths are relative to this file
#   train: {path: train.csv, columns: {$column_example}$label_example}
#   test: {hub: owner/dataset, config: default, split: test, revision: main}
"""


def task_file_template(kind: str, name: str | None = None, language: str = "en") -> str:
    """The commented starting file for a task of ``kind`` (named ``name``, text in ``language``)."""
    if kind not in KINDS:
        raise NlueError(f"unknown task kind {kind!r}; expected one of: {', '.join(KINDS)}")
    name = name or f"my_{kind}"
    if not _NAME.match(name):
        raise NlueError(f"--name {name!r}: expected lower-case letters, digits and _, starting with a letter")
    if not _LANGUAGE.match(language):
        raise NlueError(f"--language {language!r}: expected an ISO 639-1 or 639-3 code such as ne, ur or si")
    starter = KINDS[kind].starter
    if starter is None:
        raise NlueError(f"the task kind {kind!r} offers no starting file; see docs/reference/task-file.md")
    values = {"name": name, "title": starter.title, "description": starter.description, "language": language,
              "kind": kind, "profile": default_profile([language]), "file_hint": f"{name}.yaml",
              "column_example": starter.data_columns, "label_example": starter.data_labels}  # fmt: skip
    text = _HEAD + starter.body + _DATA + _TAIL
    return Template(text).substitute(values)
