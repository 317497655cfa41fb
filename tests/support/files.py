"""Reading a folder's files, to compare what a command left there before and after."""

from __future__ import annotations

from pathlib import Path


def read_tree(root: Path) -> dict[str, bytes]:
    """Every file below ``root`` by its relative POSIX path, with its bytes; folders alone count for nothing."""
    return {path.relative_to(root).as_posix(): path.read_bytes() for path in sorted(root.rglob("*")) if path.is_file()}
