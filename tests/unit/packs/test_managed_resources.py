"""The AWS managed resources fluxplane composes, and the MRDs a hub activates for them
(fluxplane.packs.managed_resources)."""

from __future__ import annotations

from fluxplane.packs.managed_resources import AWS_MANAGED_RESOURCES, aws_activations


def test_the_activations_of_a_service_are_its_composed_resources_in_their_namespaced_group() -> None:
    # GIVEN the services a hub's providers run WHEN their activations are asked for
    # THEN each composed resource of those services, by MRD name, in the table's order
    assert aws_activations(["sqs", "dynamodb"]) == (
        "tables.dynamodb.aws.m.upbound.io",
        "queues.sqs.aws.m.upbound.io",
        "queuepolicies.sqs.aws.m.upbound.io",
    )


def test_a_service_fluxplane_composes_nothing_of_activates_nothing() -> None:
    assert aws_activations(["lambda"]) == ()
    assert aws_activations([]) == ()


def test_every_service_s_resources_are_activated_once() -> None:
    services = {entry.split("_", 1)[0] for entry in AWS_MANAGED_RESOURCES}
    activations = aws_activations(services)
    assert len(activations) == len(set(activations)) == len(AWS_MANAGED_RESOURCES)
