"""The output folder besides its atomic write (fluxplane.synth.writer): where it may lie, how it differs from
what synth would write (``synth --check``), the files other tools keep in it, and the copy handed to cdk8s-cli.
None of these touches the spare tree the writer keeps.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from stat import S_ISDIR, S_ISLNK, S_ISREG

import yaml

from fluxplane.config.secrets import check_plaintext
from fluxplane.core.codec import load_documents
from fluxplane.errors import OutputError


def check_outdir(outdir: Path, root: Path) -> None:
    """Refuse an output folder that holds the project: the project folder, one above it, or a folder
    of environments/ (synth replaces the whole output folder)."""
    target, project = Path(os.path.abspath(outdir)), Path(os.path.abspath(root))
    if target == project or target in project.parents:
        raise OutputError(
            f"{outdir}: holds the project folder {root}, and synth replaces the whole output folder; "
            "pass an --outdir of its own, such as dist"
        )
    definition = project / "environments"
    if target == definition or definition in target.parents:
        raise OutputError(
            f"{outdir}: lies in the fleet definition ({definition}), and synth replaces the whole output folder; "
            "pass an --outdir of its own, such as dist"
        )


@dataclass
class Staleness:
    """Files of dist/ that synth would add, change or remove, and project files it keeps that are stale."""

    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    #: Files synth keeps beside the definition (relative to the project root), such as the allocations.
    recorded: list[str] = field(default_factory=list)

    @property
    def stale(self) -> bool:
        return bool(self.added or self.changed or self.removed or self.recorded)


def compare_tree(files: Mapping[str, str], outdir: Path) -> Staleness:
    """What writing ``files`` would change in ``outdir``."""
    result = Staleness()
    if os.path.islink(outdir):
        raise OutputError(
            f"{outdir}: a symbolic link (to {os.readlink(outdir)}); synth writes its output as a folder of its "
            "own and does not follow links out of it: remove the link, or pass --outdir"
        )
    existing: dict[str, bool] = {}  # path below outdir: whether it is a regular file (not a symlink)
    for folder, _, names in os.walk(outdir):  # symlinked folders are listed, never entered
        prefix = os.path.relpath(folder, outdir) + "/" if folder != str(outdir) else ""
        for name in names:
            existing[prefix + name] = S_ISREG(os.lstat(os.path.join(folder, name)).st_mode)
    for relative, text in files.items():
        regular = existing.get(relative)
        if regular is None:
            result.added.append(relative)
        elif not regular or (outdir / relative).read_bytes() != text.encode("utf-8"):
            result.changed.append(relative)
    result.removed = sorted(existing.keys() - files.keys())
    return result


#: The largest file another tool may keep in dist/ (``flux bootstrap``'s gotk-components.yaml is about 1 MiB).
_KEPT_LIMIT = 64 << 20
#: The kept files that are manifests by their name: one that does not parse is refused, since it cannot be checked.
_MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")


def read_kept(outdir: Path, folders: tuple[str, ...], owner: str = "kept for another tool") -> dict[str, str]:
    """The files another tool owns under ``folders`` of ``outdir`` (relative, each ending in "/"), as they are,
    for synth to write back unchanged; ``owner`` says whose they are in messages ("kept from flux bootstrap").

    Synth publishes them with its own files, so they pass the same checks, every problem refused at once
    (OutputError): only regular UTF-8 files below real folders (a symbolic link, a special file or a file over
    64 MiB is refused, since synth would otherwise copy what it points to), and no Secret in clear in any
    document (the plaintext guard, fluxplane.config.secrets); a .yaml, .yml or .json file that does not parse
    is refused too, since it cannot be checked."""
    kept: dict[str, str] = {}
    problems: list[str] = []
    for folder in folders:
        base = outdir / folder
        for depth in range(len(Path(folder).parts)):
            step = outdir.joinpath(*Path(folder).parts[: depth + 1])
            if os.path.islink(step):
                raise OutputError(f"{step}: a symbolic link where synth keeps another tool's files; remove it")
        if not base.is_dir():
            continue
        for current, folders_below, names in os.walk(base):
            folders_below.sort()
            for name in sorted([*folders_below, *names]):
                path = Path(current) / name
                mode = os.lstat(path).st_mode
                if S_ISDIR(mode):
                    continue
                if S_ISLNK(mode):
                    problems.append(f"{path} ({owner}): a symbolic link, which synth does not follow; remove it")
                    continue
                if not S_ISREG(mode) or os.lstat(path).st_size > _KEPT_LIMIT:
                    problems.append(f"{path} ({owner}): not a regular file of at most 64 MiB; remove it")
                    continue
                try:
                    text = path.read_bytes().decode("utf-8")
                except UnicodeDecodeError:
                    problems.append(f"{path} ({owner}): not UTF-8 text; remove it")
                    continue
                problems.extend(_kept_problems(path, text, owner))
                kept[path.relative_to(outdir).as_posix()] = text
    if problems:
        raise OutputError(problems)
    return kept


def _kept_problems(path: Path, text: str, owner: str) -> list[str]:
    """What the plaintext guard finds in the documents of a kept file, each named by its number in the file."""
    try:
        documents = load_documents(text)
    except (yaml.YAMLError, ValueError) as exc:  # ValueError: a value its tag does not allow (2024-02-30)
        if path.suffix not in _MANIFEST_SUFFIXES:
            return []  # not YAML, so nothing kustomize would apply
        mark = (exc.problem_mark or exc.context_mark) if isinstance(exc, yaml.MarkedYAMLError) else None
        where = f":{mark.line + 1}:{mark.column + 1}" if mark is not None else ""
        problem = f": {exc.problem}" if isinstance(exc, yaml.MarkedYAMLError) and exc.problem else ""
        return [
            f"{path}{where} ({owner}): invalid YAML{problem}, so synth cannot check it for Secrets in clear; "
            "fix it or remove it"
        ]
    return [
        problem
        for number, document in enumerate(documents, start=1)
        if isinstance(document, dict)
        for problem in check_plaintext(document, f"{path}:{number} ({owner})")
    ]


def regular_files(outdir: Path, folder: str) -> list[str]:
    """The regular files below ``folder`` of ``outdir`` (relative to ``outdir``, sorted); links are not followed."""
    base = outdir / folder
    if (
        os.path.islink(outdir)
        or not base.is_dir()
        or any(
            os.path.islink(outdir.joinpath(*Path(folder).parts[: depth + 1]))
            for depth in range(len(Path(folder).parts))
        )
    ):
        return []
    found = []
    for current, _, names in os.walk(base):
        for name in names:
            path = Path(current) / name
            if S_ISREG(os.lstat(path).st_mode):
                found.append(path.relative_to(outdir).as_posix())
    return sorted(found)


def copy_tree(files: Mapping[str, str], folder: Path) -> None:
    """Write ``files`` into ``folder``: cdk8s-cli's folder, which it empties before every run (its scratch
    folder, or ``--stdout``'s temporary one). ``folder`` must be missing or an empty folder of its own, not a
    link; every folder below is made here and every file created anew, so nothing is written through a link."""
    if os.path.islink(folder) or (folder.exists() and (not folder.is_dir() or any(folder.iterdir()))):
        raise OutputError(
            f"{folder}: not an empty folder; cdk8s-cli empties its output folder before it runs the app, so "
            "this is not its folder: run `cdk8s synth` (or pass --outdir)"
        )
    try:
        folder.mkdir(parents=True, exist_ok=True)
        made = {""}
        for relative, text in sorted(files.items()):
            parent = posixpath.dirname(relative)
            parts = parent.split("/") if parent else []
            for depth in range(1, len(parts) + 1):
                below = "/".join(parts[:depth])
                if below not in made:
                    os.mkdir(folder / below)
                    made.add(below)
            descriptor = os.open(folder / relative, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
            with os.fdopen(descriptor, "wb") as out:
                out.write(text.encode("utf-8"))
    except OSError as exc:
        raise OutputError(f"{folder}: cannot write the manifests for cdk8s-cli: {exc.strerror or exc}") from None
