"""AppIdentity and AddonIdentity (fluxplane.kinds.app_identity): the roles EKS Pod Identity gives one service
account."""

from __future__ import annotations

import json

from fluxplane.kinds.app import APP_ROLE_LABEL
from fluxplane.kinds.app_identity import ADDON_KIND, APP_KIND, SPOKE_IDENTITY, spoke_identity_props


def _patches(resources: list[dict[str, object]], name: str) -> list[str]:
    (resource,) = [resource for resource in resources if resource["name"] == name]
    patches = resource["patches"]
    assert isinstance(patches, list)
    return [patch.get("toFieldPath", "") for patch in patches]


def test_an_apps_role_is_found_by_its_label_an_add_ons_carries_its_own_policies() -> None:
    # GIVEN both kinds WHEN their roles are composed
    app = _patches(APP_KIND.composed(), "role")
    addon = _patches(ADDON_KIND.composed(), "role")
    # THEN the app's role is labelled with the app (its resources' policies find it so); the add-on's has policies
    assert f"metadata.labels[{APP_ROLE_LABEL}]" in app and "spec.forProvider.inlinePolicy" not in app
    assert {"spec.forProvider.managedPolicyArns", "spec.forProvider.inlinePolicy"} <= set(addon)


def test_the_spoke_identity_grants_the_apps_resources_by_name_in_a_policy_of_its_own() -> None:
    # GIVEN the hub's composition for an app whose cluster makes its resources
    props = spoke_identity_props().dump()
    resources = props["pipeline"][0]["input"]["resources"]
    # THEN it is the identity's role and association, and a RolePolicy of its own on the role
    assert props["name"] == SPOKE_IDENTITY
    assert [resource["name"] for resource in resources] == ["role", "pod-identity-association", "app-resources"]
    fmt = resources[2]["patches"][0]["combine"]["string"]["fmt"]
    assert json.loads(fmt)["Statement"][0]["Resource"] == ["arn:aws:dynamodb:%s:*:table/%s-%s-*"]


def test_neither_identity_holds_data() -> None:
    assert not APP_KIND.live.data and not ADDON_KIND.live.data
    assert APP_KIND.spoke_composed is None and ADDON_KIND.spoke_composed is None
