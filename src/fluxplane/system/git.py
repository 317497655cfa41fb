"""Running Git for the commands that compare with a ref (``diff --base``, ``validate --changed``), and for
``init``, which makes a new fleet repository a Git repository.

Git runs in the user's repository with its own configuration; fluxplane passes refs after
``--end-of-options`` and reads paths NUL-separated, so no ref or file name is read as an option or split.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType

from fluxplane.errors import FluxplaneError
from fluxplane.system.processes import GRACE


class GitError(FluxplaneError):
    """Git is not installed, the folder is not in a repository, or a ref names no commit."""


def _git(purpose: str) -> str:
    found = shutil.which("git")
    if found is None:
        raise GitError(f"git is not installed: {purpose}")
    return found


def run(args: list[str], cwd: Path, *, purpose: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """``git ARGS`` in ``cwd``, output captured; GitError naming ``purpose`` when Git is not installed."""
    return subprocess.run([_git(purpose), *args], cwd=cwd, input=stdin, capture_output=True, text=True, check=False)


class Running:
    """``git ARGS`` in ``cwd``, started and left running while the caller goes on; :meth:`result` waits for it.

    Its output goes to unnamed temporary files, so a long output never stalls it. Leaving the ``with`` block
    ends Git when it is still running (an error or a signal stopped the caller): nothing outlives the command."""

    def __init__(self, args: list[str], cwd: Path, *, purpose: str) -> None:
        # closed by result() or end(): they live as long as Git runs, beyond this call
        self._out = tempfile.TemporaryFile()  # noqa: SIM115
        self._err = tempfile.TemporaryFile()  # noqa: SIM115
        try:
            self._process = subprocess.Popen(
                [_git(purpose), *args], cwd=cwd, stdin=subprocess.DEVNULL, stdout=self._out, stderr=self._err
            )
        except BaseException:
            self._close()
            raise

    def __enter__(self) -> Running:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.end()

    def result(self) -> subprocess.CompletedProcess[str]:
        """Wait for Git; its exit code and output, as :func:`run` gives them."""
        code = self._process.wait()
        self._out.seek(0)
        self._err.seek(0)
        out = self._out.read().decode("utf-8", errors="surrogateescape")
        err = self._err.read().decode("utf-8", errors="replace")
        self._close()
        return subprocess.CompletedProcess(self._process.args, code, out, err)

    def end(self) -> None:
        """End Git if it still runs, and wait for it; a no-op once :meth:`result` was taken. Git is asked to stop
        (SIGTERM) before it is made to (SIGKILL, after fluxplane.system.processes.GRACE, as every process
        fluxplane ends): on SIGTERM it removes the lock files it holds, where a killed Git would leave
        ``.git/index.lock`` behind and every later Git command of the user's refused."""
        if self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(timeout=GRACE)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        self._close()

    def _close(self) -> None:
        self._out.close()
        self._err.close()


def commit_of(cwd: Path, ref: str, *, purpose: str) -> str | None:
    """The commit ``ref`` names in the repository holding ``cwd``; None when it names none (or looks like an option)."""
    if ref.startswith("-"):
        return None
    found = run(["rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}"], cwd, purpose=purpose)
    return found.stdout.strip() if found.returncode == 0 else None


def _batch(cwd: Path, requests: list[bytes], purpose: str) -> list[bytes | None]:
    """``git cat-file --batch`` of ``requests`` (one object name each), in order; None where there is no blob."""
    if not requests:
        return []
    result = subprocess.run(
        [_git(purpose), "cat-file", "--batch"],
        cwd=cwd,
        input=b"".join(request + b"\n" for request in requests),
        capture_output=True,
        check=False,
    )
    found: list[bytes | None] = []
    output = result.stdout
    position = 0
    # An offset into the output, not slices of what is left: a tree's worth of blobs is read in one pass.
    while position < len(output) and len(found) < len(requests):
        end = output.find(b"\n", position)
        if end < 0:
            break
        parts = output[position:end].split(b" ")
        position = end + 1
        if len(parts) == 3 and parts[1] == b"blob" and parts[2].isdigit():
            size = int(parts[2])
            found.append(output[position : position + size])
            position += size + 1
        else:
            found.append(None)
    return found + [None] * (len(requests) - len(found))


def blobs(cwd: Path, commit: str, paths: list[str], *, purpose: str) -> list[bytes | None]:
    """The content at ``commit`` of each of ``paths`` (relative to ``cwd``), in order; None where there is none."""
    return _batch(cwd, [f"{commit}:./{path}".encode() for path in paths], purpose)


def blob_name(data: bytes, like: str) -> str:
    """The name Git gives a blob holding ``data``, in the object format of the name ``like`` (SHA-1 or SHA-256)."""
    digest = hashlib.sha256() if len(like) == 64 else hashlib.sha1()
    digest.update(b"blob %d\0" % len(data))
    digest.update(data)
    return digest.hexdigest()


def blobs_at(cwd: Path, commit: str, folder: str, *, purpose: str) -> list[tuple[str, str]] | None:
    """The regular files below ``folder`` (relative to the top folder of the repository holding ``cwd``) at
    ``commit``: each one's path below it and its blob's name, in Git's order; None when the commit has no such
    folder. Symlinks and submodules are left out."""
    listed = run(["ls-tree", "-r", "-z", "--full-tree", "--end-of-options", commit, "--", folder], cwd, purpose=purpose)
    if listed.returncode != 0:
        return None
    prefix = folder.rstrip("/") + "/"
    found: list[tuple[str, str]] = []
    for entry in listed.stdout.split("\0"):
        meta, _, path = entry.partition("\t")
        mode, _, rest = meta.partition(" ")
        kind, _, name = rest.partition(" ")
        if kind == "blob" and mode in ("100644", "100755") and path.startswith(prefix):
            found.append((path[len(prefix) :], name))
    return found or None


def read_blobs(
    cwd: Path, blobs: list[tuple[str, str]], *, purpose: str, known: Mapping[str, bytes] | None = None
) -> dict[str, bytes]:
    """The content of ``blobs`` (:func:`blobs_at`) by path, read in one batch; a file ``known`` holds by the
    same path, with the blob's content (its name says so), is not read from Git."""
    reused: dict[str, bytes] = {}
    wanted: list[tuple[str, str]] = []
    for path, name in blobs:
        mine = known.get(path) if known else None
        if mine is not None and blob_name(mine, name) == name:
            reused[path] = mine
        else:
            wanted.append((path, name))
    read = _batch(cwd, [name.encode() for _, name in wanted], purpose)
    contents = dict(zip([path for path, _ in wanted], read, strict=True))
    found: dict[str, bytes] = {}
    for path, _ in blobs:
        data = reused[path] if path in reused else contents[path]
        if data is not None:
            found[path] = data
    return found


def files_at(cwd: Path, commit: str, folder: str, *, purpose: str) -> dict[str, bytes] | None:
    """The regular files below ``folder`` (relative to the top folder of the repository holding ``cwd``) at
    ``commit``, by their path below it, byte for byte; None when the commit has no such folder. Symlinks and
    submodules are left out."""
    blobs = blobs_at(cwd, commit, folder, purpose=purpose)
    return None if blobs is None else read_blobs(cwd, blobs, purpose=purpose)


def work_tree(folder: Path, *, purpose: str) -> Path | None:
    """The top folder of the Git work tree holding ``folder``; None when no repository holds it. GitError when
    Git is not installed or cannot tell (a repository it refuses to read, say), with Git's own line."""
    found = run(["rev-parse", "--show-toplevel"], folder, purpose=purpose)
    if found.returncode == 0:
        return Path(found.stdout.strip())
    if "not a git repository" in found.stderr:
        return None
    raise GitError(f"{folder}: {_first_line(found.stderr)}")


def init(folder: Path, branch: str, *, purpose: str) -> None:
    """Make ``folder`` an empty Git repository whose first branch is ``branch``; GitError with Git's line when
    it cannot."""
    done = run(["init", "--quiet", f"--initial-branch={branch}", "."], folder, purpose=purpose)
    if done.returncode != 0:
        raise GitError(f"{folder}: git init: {_first_line(done.stderr)}")


def _first_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[0] if lines else "failed"
