"""Which owners GitHub asks to review a path, read from a CODEOWNERS file as GitHub reads it."""

from __future__ import annotations

import re


def owners_of(path: str, text: str) -> list[str]:
    """The owners GitHub asks to review ``path`` (relative to the repository root): the last matching line's."""
    found: list[str] = []
    for line in text.splitlines():
        if line and not line.startswith("#"):
            pattern, *owners = line.split()
            if matches(pattern, path):
                found = owners
    return found


def matches(pattern: str, path: str) -> bool:
    """gitignore's rules, for the shapes of pattern CODEOWNERS uses here: ``*`` alone matches every file; a
    pattern with a slash is anchored at the root; ``*`` matches within one path segment; a trailing slash
    matches everything below the folder."""
    if pattern == "*":
        return True
    regex = re.escape(pattern.strip("/")).replace(r"\*", "[^/]*")
    return re.fullmatch(regex + ("/.*" if pattern.endswith("/") else ""), path) is not None
