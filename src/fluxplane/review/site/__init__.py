"""``fluxplane site``: a static site of the fleet, from the definition (environments/) and the dist/ it wrote.

The pages (fluxplane.review.site.pages) show the fleet (environments, accounts, regions, every cluster's Kubernetes
version, EKS support and readiness for the next version), the add-on matrix, every cluster (its Flux dependency
graph drawn by fluxplane.review.site.svg, its Kustomizations, add-ons and apps) and the apps; with a base ref, the
change as ``fluxplane plan`` and ``fluxplane diff`` report it. What they show is gathered once
(fluxplane.review.site.model).

Everything the pages need is written with them: HTML, one stylesheet, no script, nothing fetched from a network
when they are built or read. The same definition, dist/ and day give the same bytes: the day only sets where EKS
support stands.
"""

from __future__ import annotations

import dataclasses
from datetime import date
from importlib import resources
from pathlib import Path

from fluxplane.review import diff, plan
from fluxplane.review.diff.report import text as diff_text
from fluxplane.review.plan.report import summary
from fluxplane.review.plan.report import text as plan_text
from fluxplane.review.site import pages
from fluxplane.review.site.model import PullRequestChange, SiteContent, SiteError, load
from fluxplane.system.files import write_atomic
from fluxplane.system.progress import Progress

#: Where ``fluxplane site`` writes when no folder is given, below the project.
DEFAULT_FOLDER = "site/fleet"
#: The file that marks a folder as the site's own: its pages are rewritten and its old cluster pages removed
#: only where it lies.
MARKER = ".fluxplane-site"
MARKER_TEXT = "This folder holds fluxplane's fleet pages: `fluxplane site` rewrites them.\n"


def stylesheet() -> str:
    """The pages' stylesheet, shipped with the package."""
    return (resources.files("fluxplane.review.site") / "assets" / pages.STYLESHEET).read_text("utf-8")


def change(root: Path, ref: str, progress: Progress | None = None) -> PullRequestChange:
    """``fluxplane diff``'s and ``fluxplane plan``'s reports of the working tree against ``ref``, made once."""
    return _change(root, _resolve(root, ref), progress)


def _resolve(root: Path, ref: str) -> diff.DiffBase:
    """The base ``ref`` names; DiffError, one line, when there is no repository or no such ref."""
    return diff.resolve(root, ref, "fluxplane site --base")


def _change(root: Path, base: diff.DiffBase, progress: Progress | None) -> PullRequestChange:
    report = diff.run(root, base, progress or Progress("site", show="off"))
    made = plan.from_diff(report)
    return PullRequestChange(
        ref=report.ref, commit=report.commit, summary=summary(made), diff=diff_text(report), plan=plan_text(made)
    )


def files(fleet: SiteContent) -> dict[str, str]:
    """Every file of the site by its path below the site's folder."""
    return {**pages.pages(fleet), pages.STYLESHEET: stylesheet()}


def write(fleet: SiteContent, folder: Path) -> list[str]:
    """Write the site into ``folder``, replacing the pages a previous run wrote there; the paths written, sorted.

    Only files the site writes are replaced, and ``clusters/`` is emptied of its pages first, so a cluster removed
    from the fleet leaves no page behind; anything else in ``folder`` stays. A folder that holds files but not
    MARKER, which the first run writes, is someone else's: the site is not written there.
    """
    written = files(fleet)
    try:
        if folder.is_dir() and not (folder / MARKER).is_file() and any(folder.iterdir()):
            raise SiteError(
                f"{folder}: holds files fluxplane site did not write (no {MARKER}); write the site into a new or "
                "empty folder, which it then keeps as its own"
            )
        folder.mkdir(parents=True, exist_ok=True)
        write_atomic(folder / MARKER, MARKER_TEXT.encode("utf-8"))
        clusters = folder / pages.CLUSTERS
        if clusters.is_dir() and not clusters.is_symlink():
            for old in clusters.glob("*.html"):
                old.unlink()
        elif clusters.exists() or clusters.is_symlink():
            raise SiteError(f"{clusters}: not a folder; remove it, the site writes its cluster pages there")
        clusters.mkdir(exist_ok=True)
        change_page = folder / pages.CHANGE
        if fleet.change is None and change_page.is_file():
            change_page.unlink()
        for path, content in sorted(written.items()):
            write_atomic(folder / path, content.encode("utf-8"))
    except OSError as exc:
        raise SiteError(f"{folder}: cannot write the site: {exc.strerror or exc}") from exc
    return sorted(written)


def build(
    root: Path, folder: Path, today: date, base: str | None = None, progress: Progress | None = None
) -> list[str]:
    """Write the site of the project under ``root`` into ``folder``; with ``base``, the change page too."""
    progress = progress or Progress("site", show="off")
    resolved = _resolve(root, base) if base is not None else None  # a bad ref fails before anything is read
    with progress.stage("load"):
        fleet = load(root, today)
    if resolved is not None:
        fleet = dataclasses.replace(fleet, change=_change(root, resolved, progress))
    with progress.stage("write") as stage:
        written = write(fleet, folder)
        stage.note(f"{len(written)} files")
    return written


__all__ = ["DEFAULT_FOLDER", "MARKER", "SiteError", "build", "change", "files", "stylesheet", "write"]
