"""ServiceAccount (v1)."""

from __future__ import annotations

import pytest

from fluxplane.constructs import Root, ServiceAccount
from fluxplane.errors import ConstructError

ROLE_ARN = "arn:aws:iam::123456789012:role/podinfo"


def test_service_account_with_irsa_annotation() -> None:
    # GIVEN / WHEN a ServiceAccount with an IRSA role annotation
    account = ServiceAccount(
        Root(),
        "sa",
        {"name": "podinfo", "namespace": "apps", "annotations": {"eks.amazonaws.com/role-arn": ROLE_ARN}},
    )

    # THEN it renders metadata only, with the annotation
    assert account.to_dict() == {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": {
            "name": "podinfo",
            "namespace": "apps",
            "annotations": {"eks.amazonaws.com/role-arn": ROLE_ARN},
        },
    }


@pytest.mark.parametrize("automount", [True, False])
def test_automount_token_is_a_top_level_field_after_metadata(automount: bool) -> None:
    # GIVEN / WHEN a ServiceAccount that sets automountServiceAccountToken
    doc = ServiceAccount(
        Root(), "sa", {"name": "podinfo", "namespace": "apps", "automountServiceAccountToken": automount}
    ).to_dict()

    # THEN it is written at the top level (not in a spec), even when False
    assert doc == {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": {"name": "podinfo", "namespace": "apps"},
        "automountServiceAccountToken": automount,
    }
    assert list(doc) == ["apiVersion", "kind", "metadata", "automountServiceAccountToken"]


def test_service_account_needs_a_namespace() -> None:
    # GIVEN / WHEN / THEN a ServiceAccount without a namespace is refused
    with pytest.raises(ConstructError, match=r"^root/sa: ServiceAccountProps\.namespace: field required$"):
        ServiceAccount(Root(), "sa", {"name": "podinfo"})


def test_automount_must_be_a_boolean() -> None:
    # GIVEN / WHEN / THEN a non-boolean is refused
    with pytest.raises(
        ConstructError,
        match=r"^root/sa: ServiceAccountProps\.automountServiceAccountToken: input should be a valid boolean",
    ):
        ServiceAccount(Root(), "sa", {"name": "podinfo", "namespace": "apps", "automountServiceAccountToken": "nope"})
