"""Tests for fluxplane.core.tree.flux: sources stand for repositories, paths resolve where a repository's content
lives in the tree, and postBuild substitution as Flux does it."""

from __future__ import annotations

import pytest
import yaml

from fluxplane.config.models import Repositories
from fluxplane.core.layout import PLATFORM, RepositoryLayout, workloads_layout
from fluxplane.core.tree import DistRepository, Location, repositories_of, substitute, substitute_text
from fluxplane.core.tree.flux import access, locate, origin, values_of

FLEET = "ssh://git@example.com/org/fleet.git"
PLATFORM_REPOSITORY = DistRepository("platform", FLEET, "dist/platform", "main")
WORKLOADS_REPOSITORY = DistRepository("workloads", FLEET, "dist/workloads", "main")
SHARED = (PLATFORM_REPOSITORY, WORKLOADS_REPOSITORY)


def test_repositories_follow_the_layout_of_the_definition() -> None:
    # GIVEN the default layout, the platform's content under deploy/, and a workloads repository of its own
    default = Repositories.model_validate({"platform": {"url": FLEET}})
    deploy = Repositories.model_validate({"platform": {"url": FLEET, "path": "deploy"}})
    own = Repositories.model_validate(
        {"platform": {"url": FLEET}, "workloads": {"url": "ssh://git@example.com/org/apps.git", "branch": "live"}}
    )

    def of(repositories: Repositories) -> list[tuple[str, str, str, str | None]]:
        layouts = [RepositoryLayout(PLATFORM, repositories.platform), workloads_layout(repositories)]
        return [(r.key, r.url, r.prefix, r.branch) for r in repositories_of(layouts)]

    # THEN each dist/ folder is found where synth writes its Flux paths
    assert of(default) == [
        ("platform", FLEET, "dist/platform", "main"),
        ("workloads", FLEET, "dist/workloads", "main"),
    ]
    assert of(deploy) == [("platform", FLEET, "deploy", "main"), ("workloads", FLEET, "workloads", "main")]
    assert of(own)[1] == ("workloads", "ssh://git@example.com/org/apps.git", "dist/workloads", "live")


def test_a_source_stands_for_its_url_and_branch() -> None:
    git = {"kind": "GitRepository", "spec": {"url": FLEET, "ref": {"branch": "main"}}}
    tag = {"kind": "GitRepository", "spec": {"url": FLEET, "ref": {"tag": "v1"}}}
    oci = {"kind": "OCIRepository", "spec": {"url": "oci://example.com/fleet", "ref": {"tag": "v1"}}}
    assert origin(git) == (FLEET, "main")
    assert origin(tag) == (FLEET, None)
    assert origin(oci) == ("oci://example.com/fleet", None)
    assert origin({"kind": "HelmRepository", "spec": {"url": "https://charts.example.com"}}) is None
    assert origin({"kind": "GitRepository", "spec": {}}) is None


def test_a_path_resolves_under_the_longest_prefix_of_its_repository() -> None:
    # GIVEN the platform at the repository's root and the workloads under workloads/
    rooted = (DistRepository("platform", FLEET, "."), DistRepository("workloads", FLEET, "workloads"))
    # THEN a path names the folder at the same place below the dist/ folder of the longest prefix it lies under
    assert locate(SHARED, FLEET, "main", "./dist/platform/apps/x") == Location(
        SHARED, PLATFORM_REPOSITORY, "platform/apps/x"
    )
    assert locate(SHARED, FLEET, "main", "dist/workloads/") == Location(SHARED, WORKLOADS_REPOSITORY, "workloads")
    assert locate(SHARED, FLEET, None, "./dist/platform/../workloads/c") == Location(
        SHARED, WORKLOADS_REPOSITORY, "workloads/c"
    )
    assert locate(rooted, FLEET, None, "./workloads/clusters/a") == Location(rooted, rooted[1], "workloads/clusters/a")
    assert locate(rooted, FLEET, None, "./clusters/a") == Location(rooted, rooted[0], "platform/clusters/a")


def test_a_path_outside_what_fluxplane_writes_in_its_repository_has_no_folder() -> None:
    # a folder of the fleet repository that is neither dist/platform nor dist/workloads: Flux would not find it
    assert locate(SHARED, FLEET, "main", "./no/such/dir") == Location(SHARED)
    # a folder holding what fluxplane writes and more (dist/, the root) is not followed, and is no problem
    assert locate(SHARED, FLEET, "main", "./dist") is None
    assert locate(SHARED, FLEET, "main", "./") is None


def test_a_repository_fluxplane_does_not_write_is_not_followed() -> None:
    # another URL (a tenant's own repository), or the fleet repository on another branch
    assert locate(SHARED, "https://github.com/org/app.git", "main", "./dist/platform") is None
    assert locate(SHARED, FLEET, "release", "./dist/platform") is None


def test_access_is_the_namespace_and_the_kube_config() -> None:
    remote = {"spec": {"kubeConfig": {"secretRef": {"name": "a-kubeconfig", "key": "value"}}}}
    same = {"spec": {"kubeConfig": {"secretRef": {"key": "value", "name": "a-kubeconfig"}}}}
    assert access(remote, "a") == access(same, "a") != access(remote, "b")
    assert access({"spec": {}}, "a") is None
    assert access({"spec": {"kubeConfig": {}}}, "a") is None


def test_substitution_follows_flux() -> None:
    variables = {"name": "east", "empty": ""}
    assert substitute_text("${name}-${missing}", variables) == "east-"
    assert substitute_text("${missing:=d} ${empty:-d} ${empty-d} ${missing-d}", variables) == "d d  d"
    assert substitute_text("$${name} $${aws:username}", variables) == "${name} ${aws:username}"
    assert substitute_text("${missing}", variables, complete=False) == "${missing}"


def test_every_double_dollar_is_one_dollar_as_in_flux() -> None:
    # Flux's envsubst (fluxcd/pkg) reads $$ as an escaped $ wherever it stands, not only before {.
    variables = {"var01": "abcdEFGH28ij"}
    text = "some text ${var01}$${var$${var01}$var01${var01}"
    assert substitute_text(text, variables) == "some text abcdEFGH28ij${var${var01}$var01abcdEFGH28ij"
    assert substitute_text("a$$b $$$c $$$${var01}", variables) == "a$b $$c $${var01}"
    assert substitute({"data": {"price": "$$5"}}, variables) == {"data": {"price": "$5"}}


def test_a_document_without_a_dollar_is_itself_without_being_written_out(monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN YAML that cannot be written WHEN a document without a "$" is substituted THEN it is returned as is
    def refuse(*args: object, **kwargs: object) -> str:
        raise AssertionError("written out")

    monkeypatch.setattr(yaml, "safe_dump", refuse)
    doc = {"kind": "ConfigMap", "data": {"a": ["b", {"c": 1}], "d": None}}
    assert substitute(doc, {"a": "x"}) is doc


def test_objects_that_disable_substitution_keep_their_text() -> None:
    doc = {"kind": "ConfigMap", "metadata": {"name": "${name}"}}
    assert substitute(doc, {"name": "east"}) == {"kind": "ConfigMap", "metadata": {"name": "east"}}
    off = {
        "kind": "ConfigMap",
        "metadata": {"name": "${name}", "labels": {"kustomize.toolkit.fluxcd.io/substitute": "disabled"}},
    }
    assert substitute(off, {"name": "east"}) == off


def test_variables_of_a_config_map_and_a_secret() -> None:
    assert values_of({"kind": "ConfigMap", "data": {"a": 1}}) == {"a": "1"}
    secret = {"kind": "Secret", "data": {"a": "ZWFzdA==", "bad": "/w=="}, "stringData": {"b": "west"}}
    assert values_of(secret) == {"a": "east", "b": "west"}
