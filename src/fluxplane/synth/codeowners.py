"""dist/CODEOWNERS: who reviews which folder of the fleet repository, from the definition.

The platform team owns everything by default; the governance team owns onboarding (the tenants in the
workloads folder); each app's team owns its own tenant folders (its sync, its sealed secrets) and its
sealed secrets in environments/secrets/. What grants privilege needs the governance team alone: the app
definitions (environments/apps/), every tenant's RBAC (``tenant.yaml``), the apps' IAM roles and AWS
resources (the platform repository's cloud/ folder), and whatever can hold any object for a cluster, a
binding to cluster-admin as well as anything else: the plain manifests (environments/manifests/), the
project's cdk8s charts with their helper modules (charts/) and what both make in each cluster's entry point
(its manifests/ folder).

How GitHub reads the file (its "About code owners" page; GitLab reads it the same way outside sections):
a pattern follows gitignore's rules (``*`` matches within one path segment), the last line that matches a
file alone decides its owners, and a line with several owners is satisfied by any one of them. So the
privilege lines come last, naming only the governance team: a team line before them may match the same
file, but never decides it, and no line could require governance and a team together anyway.
"""

from __future__ import annotations

from fluxplane.charts.cloud import CLOUD_DIR
from fluxplane.charts.cluster import MANIFESTS_FOLDER
from fluxplane.charts.tenants import TENANT_FILE
from fluxplane.config.apps import APPS_DIR, Placement
from fluxplane.config.cdk8s_charts import CDK8S_CHARTS_DIR
from fluxplane.config.manifests import MANIFESTS_DIR
from fluxplane.config.models import Teams
from fluxplane.config.secrets import SECRETS_DIR
from fluxplane.core.layout import RepositoryLayout, cluster_dir

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
        "# The governance team approves onboarding: the tenants made of app definitions.",
        _line(_folder(workloads, ""), governance),
    ]
    owned = [placement for placement in placements if placement.app.team is not None]
    if owned:
        lines += ["", "# Each app's team owns its tenants (their sync and sealed secrets) and its sealed secrets."]
    for placement in sorted(owned, key=lambda p: (p.app.name, p.cluster)):
        app, team = placement.app, str(placement.app.team)
        lines.append(_line(_folder(workloads, f"{cluster_dir(placement.cluster)}/{app.name}"), team))
        lines.append(_line(f"/environments/{SECRETS_DIR}/{placement.cluster}/{app.target_namespace}/", team))
    lines += [
        "",
        "# Privilege needs the governance team alone: app definitions, every tenant's RBAC, the apps' IAM roles",
        "# and AWS resources, and the plain manifests and cdk8s charts, which can grant anything on a cluster,",
        "# with what they make. These lines come last: the last matching line decides a file's owners.",
        _line(f"/environments/{APPS_DIR}/", governance),
        _line(_folder(workloads, cluster_dir("*")) + f"*/{TENANT_FILE}", governance),
        _line(_folder(platform, CLOUD_DIR), governance),
        _line(f"/{MANIFESTS_DIR}/", governance),
        _line(f"/{CDK8S_CHARTS_DIR}/", governance),
        _line(_folder(platform, f"{cluster_dir('*')}/{MANIFESTS_FOLDER}"), governance),
    ]
    return "\n".join(lines) + "\n"
