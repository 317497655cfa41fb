"""dist/CODEOWNERS: who reviews which folder of the fleet repository, from the definition.

The platform team owns everything by default; the governance team owns onboarding (the app
definitions in environments/apps/ and the generated tenants in the workloads folder); each app's
team owns its own generated folders and its sealed secrets. Later lines win, as GitHub and GitLab
read the file, so the most specific owners come last.
"""

from __future__ import annotations

from fluxplane.charts.layout import RepositoryLayout, cluster_dir
from fluxplane.config.apps import APPS_DIR, Placement
from fluxplane.config.models import Teams
from fluxplane.config.secrets import SECRETS_DIR

HEADER = """\
# Code owners of the fleet repository, written by `fluxplane synth` from environments/ (teams in
# base.yaml, each app's team in environments/apps/<app>.yaml); do not edit. GitHub reads this file
# from .github/, the repository root or docs/: copy it there (see the README's "Governance").
"""


def _line(path: str, *owners: str) -> str:
    return f"{path} {' '.join(owners)}"


def _folder(layout: RepositoryLayout, directory: str) -> str:
    return "/" + layout.flux_path(directory).removeprefix("./").rstrip("/") + "/"


def codeowners(
    teams: Teams, placements: tuple[Placement, ...], platform: RepositoryLayout, workloads: RepositoryLayout
) -> str | None:
    """The file's text, or None when the definition names no platform team."""
    if teams.platform is None:
        return None
    lines = [HEADER, "# The platform team owns the fleet.", _line("*", teams.platform)]
    governance = teams.governance or teams.platform
    lines += [
        "",
        "# The governance team approves onboarding: app definitions and the tenants made of them.",
        _line(f"/environments/{APPS_DIR}/", governance),
        _line(_folder(workloads, ""), governance),
    ]
    owned = [placement for placement in placements if placement.app.team is not None]
    if owned:
        lines += ["", "# Each app's team owns its tenants, its AWS resources and its sealed secrets."]
    for placement in sorted(owned, key=lambda p: (p.app.name, p.cluster)):
        app, team = placement.app, str(placement.app.team)
        lines.append(_line(_folder(workloads, f"{cluster_dir(placement.cluster)}/{app.name}"), team))
        if not app.aws.empty:
            cloud = platform.flux_path(f"cloud/{placement.cluster}/{app.name}.yaml").removeprefix("./")
            lines.append(_line(f"/{cloud}", team))
        lines.append(_line(f"/environments/{SECRETS_DIR}/{placement.cluster}/{app.target_namespace}/", team))
    return "\n".join(lines) + "\n"
