"""Symbolic links in the definition: followed only when they lead to a file or folder of ``environments/``.

Every command that reads or edits the definition checks them first, before any file is read.
"""

from __future__ import annotations

import os
from pathlib import Path

from fluxplane.errors import ConfigError
from fluxplane.system.files import Listed

#: The definition's folder in a project.
ENVIRONMENTS_DIR = "environments"


def check_links(root: Path) -> Listed:
    """Refuse a definition with a symbolic link that leads out of ``<root>/environments``.

    The definition arrives in pull requests, links included. A link to a file elsewhere (the checkout's
    ``.git/config``, ``~/.aws/credentials``) would be read as part of the definition and a piece of it shown
    in an error message; a link to a folder elsewhere would let an edit command delete files there. So a
    link is followed only when it leads to a file or folder of the definition itself, and
    ``environments/`` is a folder, not a link to one. Every link is checked, hidden files and links to
    folders included, before any file is read.

    Returns what it listed, each folder by its path as the walk reached it (``<root>/environments/...``), so that a
    reader of the definition's folders does not list them again (fluxplane.system.files.entries_below); a folder
    reached again through a link is listed once, by the first path.
    """
    env_dir = root / ENVIRONMENTS_DIR
    if env_dir.is_symlink():
        raise ConfigError(
            f"{ENVIRONMENTS_DIR}: a symbolic link (to {os.readlink(env_dir)}); fluxplane reads the definition "
            "only from a folder of the project: replace the link with the folder"
        )
    if not env_dir.is_dir():
        return {}
    inside = os.path.realpath(env_dir)
    problems: list[str] = []
    listed: dict[str, list[os.DirEntry[str]]] = {}
    # Folders by where they really are, so that a link back up the tree is entered once.
    entered = {inside}
    pending = [(os.fspath(env_dir), ENVIRONMENTS_DIR, inside)]
    while pending:
        folder, shown, real = pending.pop()
        try:
            with os.scandir(folder) as scan:
                entries = list(scan)
        except OSError as exc:
            problems.append(f"{shown}: cannot read: {exc.strerror or exc}")
            continue
        listed[folder] = entries
        for entry in entries:
            if entry.is_symlink():
                target = os.path.realpath(entry.path)
                if os.path.commonpath((target, inside)) != inside:
                    kind = "folder" if os.path.isdir(target) else "file"
                    problems.append(
                        f"{shown}/{entry.name}: a symbolic link to a {kind} outside {ENVIRONMENTS_DIR}/ "
                        f"({os.readlink(entry.path)}); fluxplane reads only the definition's own files: replace the "
                        f"link with the {kind}"
                    )
                    continue
                if not os.path.isdir(target):
                    continue
                real_entry = target
            elif entry.is_dir(follow_symlinks=False):
                real_entry = os.path.join(real, entry.name)
            else:
                continue
            if real_entry not in entered:
                entered.add(real_entry)
                pending.append((entry.path, f"{shown}/{entry.name}", real_entry))
    if problems:
        raise ConfigError(sorted(problems))
    return listed
