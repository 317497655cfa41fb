"""AppBucket (fluxplane.kinds.app_bucket): an app's S3 bucket, and what its Composition composes."""

from __future__ import annotations

import json

from fluxplane.kinds.app_bucket import APP_KIND, BUCKET_ACTIONS, OBJECT_ACTIONS


def test_the_hub_grants_the_app_the_bucket_and_its_objects_a_workload_cluster_only_makes_them() -> None:
    # GIVEN the kind's declaration WHEN its resources are composed on the hub and on a workload cluster
    assert APP_KIND.spoke_composed is not None
    hub = [resource["name"] for resource in APP_KIND.composed()]
    spoke = [resource["name"] for resource in APP_KIND.spoke_composed()]
    # THEN both make the bucket and its versioning; only the hub adds the policy on the app's role
    assert (hub, spoke) == (["bucket", "versioning", "access"], ["bucket", "versioning"])
    # AND that policy grants the bucket's actions on the bucket, and the objects' on what is in it
    fmt = APP_KIND.composed()[2]["patches"][1]["combine"]["string"]["fmt"]
    assert [(s["Action"], s["Resource"]) for s in json.loads(fmt)["Statement"]] == [
        (list(BUCKET_ACTIONS), ["%s"]),
        (list(OBJECT_ACTIONS), ["%s/*"]),
    ]


def test_its_name_is_the_buckets_name_in_aws_and_deleting_it_loses_the_objects() -> None:
    live = APP_KIND.live
    assert (live.name, live.data, live.deletes) == (("spec", "bucketName"), True, "the S3 bucket and its objects")
    assert ("spec", "bucketName") in live.replaces
