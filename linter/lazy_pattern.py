"""A regular expression compiled on first use.

Every run imports every module, so a pattern compiled at import costs each run its compile time
(0.05-0.3 ms apiece, ~3 ms for the project's patterns together) whether or not the run needs it:
the edit renderer's patterns, say, serve only `--fix`. Hot patterns that every file needs stay
plain `re.compile` objects: the attribute lookup here costs a Python call per use.
"""

from __future__ import annotations


class LazyPattern:
    __slots__ = ("_pattern", "_flags", "_compiled")

    def __init__(self, pattern, flags: int = 0):
        self._pattern, self._flags, self._compiled = pattern, flags, None

    def __getattr__(self, name: str):
        compiled = self._compiled
        if compiled is None:
            import re

            compiled = self._compiled = re.compile(self._pattern, self._flags)
        return getattr(compiled, name)
