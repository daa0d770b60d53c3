"""Errors that the CLI reports as one line, with no traceback."""

import re

LINE_BREAKS = re.compile(r"\s*[\r\n]+\s*")


class MhgraphError(Exception):
    """A user-facing failure: its message is complete on one line (a line break in a value it quotes,
    such as a title, becomes a space)."""

    def __init__(self, message: object = "", *args: object) -> None:
        super().__init__(LINE_BREAKS.sub(" ", str(message)), *args)


class InputError(MhgraphError):
    """Bad input data; the message names the file and the line or record."""

    def __init__(self, path: object, where: str, message: str) -> None:
        self.path = str(path)
        self.where = where
        self.detail = message
        location = f"{self.path}:{where}" if where else self.path
        super().__init__(f"{location}: {message}")


class NotFoundError(MhgraphError):
    """Something named does not exist: a corpus, a method, a run, a document (HTTP 404)."""
