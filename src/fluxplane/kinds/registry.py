"""The kinds' registry: every app kind's declaration, in the order the pack writes them, and what a change does to
each cloud kind (fluxplane.kinds.live), the AWS managed resources' (fluxplane.kinds.aws) and fluxplane's own."""

from __future__ import annotations

from fluxplane.kinds import app_bucket, app_database, app_identity, app_queue, app_table, aws, eks_cluster
from fluxplane.kinds.app import AppKind
from fluxplane.kinds.live import ANY_MANAGED, CloudKind, FieldPath, Switch, is_managed

#: The app kinds, by kind, in the order their XRDs and Compositions are written.
APP_KINDS: dict[str, AppKind] = {
    declared.kind: declared
    for declared in (
        app_identity.APP_KIND,
        app_table.APP_KIND,
        app_queue.APP_KIND,
        app_bucket.APP_KIND,
        app_database.APP_KIND,
        app_identity.ADDON_KIND,
    )
}
#: The app kinds' plurals, by kind.
PLURALS: dict[str, str] = {kind: declared.plural for kind, declared in APP_KINDS.items()}
#: The kinds an app may request from its own repository, kind -> plural: not its identity, which is the platform's,
#: nor a database, which delivers its credentials to a namespace on the cluster that the request would choose.
REQUESTABLE: dict[str, str] = {
    kind: declared.plural for kind, declared in APP_KINDS.items() if declared.spoke_composed is not None
}

#: What a change does to each cloud kind: the AWS managed resources', then fluxplane's composites'.
KINDS: tuple[CloudKind, ...] = (
    *aws.MANAGED,
    eks_cluster.LIVE,
    app_table.APP_KIND.live,
    app_queue.APP_KIND.live,
    app_bucket.APP_KIND.live,
    app_database.APP_KIND.live,
    app_identity.APP_KIND.live,
    app_identity.ADDON_KIND.live,
)


def cloud_kind(group: str, kind: str) -> CloudKind | None:
    """The entry of ``group`` and ``kind``, None for a kind the table does not hold."""
    return next((entry for entry in KINDS if entry.matches(group, kind)), None)


def noun(group: str, kind: str) -> str:
    """How a reader names an object of ``group`` and ``kind``: the table's noun, else ``<service> <Kind>``."""
    entry = cloud_kind(group, kind)
    if entry is not None:
        return entry.noun
    return f"{group.split('.', 1)[0]} {kind}" if is_managed(group) else kind


def switches(group: str, kind: str) -> tuple[Switch, ...]:
    """The switches of objects of ``group`` and ``kind`` (none for a kind the table does not hold)."""
    entry = cloud_kind(group, kind)
    return entry.switches if entry is not None else ()


def replacing_fields(group: str, kind: str) -> tuple[FieldPath, ...]:
    """The fields whose change replaces an object of ``group`` and ``kind`` (ANY_MANAGED first for a managed
    resource)."""
    entry = cloud_kind(group, kind)
    own = entry.replaces if entry is not None else ()
    return (*ANY_MANAGED, *own) if is_managed(group) else own
