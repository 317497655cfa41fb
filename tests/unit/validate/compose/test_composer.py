"""Tests for fluxplane.validate.compose.composer: a composite rendered to what its Composition composes."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from fluxplane.validate.compose.composer import Composer
from fluxplane.validate.compose.overlays import overlay_definitions
from fluxplane.validate.tree import Document, load_tree
from tests.conftest import ROOT


@pytest.fixture(scope="module")
def documents() -> list[Document]:
    return load_tree(ROOT / "dist").documents


@pytest.fixture(scope="module")
def composer(documents: list[Document]) -> Composer:
    return Composer([*documents, *overlay_definitions(documents)])


def composite(documents: list[Document], kind: str, file: str) -> dict[str, Any]:
    return next(document.body for document in documents if document.kind == kind and document.file == file)


def test_a_database_composes_its_instance_with_the_composites_values(
    documents: list[Document], composer: Composer
) -> None:
    # GIVEN production-use1's app database, which the hub makes
    database = composite(documents, "AppDatabase", "platform/cloud/production-use1/orders.yaml")
    # WHEN composed
    composed = composer.compose(database, "hub")
    # THEN its RDS instance is named and placed by the composite's fields
    assert composed.reason == ""
    instance = composed.resources["instance"]
    assert instance["kind"] == "Instance"
    given = instance["spec"]["forProvider"]
    assert (given["identifier"], given["engine"], given["region"]) == (
        "production-use1-orders-main",
        "postgres",
        "us-east-1",
    )
    assert instance["spec"]["providerConfigRef"]["name"] == "production"


def test_a_cluster_that_makes_its_own_resources_composes_with_its_own_compositions(
    documents: list[Document], composer: Composer
) -> None:
    # GIVEN the table production-usw2 makes itself, in its tenant's namespace
    table = composite(documents, "AppTable", "workloads/clusters/production-usw2/app-resources/orders.yaml")
    # WHEN composed on that cluster THEN its own Composition makes the DynamoDB table
    composed = composer.compose(table, "production-usw2")
    assert composed.reason == ""
    assert {resource["kind"] for resource in composed.resources.values()} >= {"Table"}


def test_a_composite_no_definition_knows_says_why(documents: list[Document], composer: Composer) -> None:
    database = copy.deepcopy(composite(documents, "AppDatabase", "platform/cloud/production-use1/orders.yaml"))
    database["kind"] = "AppCache"
    assert composer.compose(database, "hub").reason == "no CompositeResourceDefinition defines it"
    database["kind"] = "AppDatabase"
    database["spec"]["crossplane"] = {"compositionRef": {"name": "missing"}}
    assert "Composition 'missing'" in composer.compose(database, "hub").reason


def test_a_composer_without_definitions_renders_nothing() -> None:
    assert Composer([]).compose({"apiVersion": "a.b/v1", "kind": "X"}, None).resources == {}
