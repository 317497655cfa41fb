"""The reloader pack's tests: fluxplane.testing binds it as synth does and checks it against the pack contract."""

from fluxplane_pack_reloader import PACK, RELOADER

from fluxplane.testing import bind_pack, check_pack


def test_the_pack_keeps_the_contract() -> None:
    # GIVEN the pack WHEN checked (declaration, config model, a bind with the defaults) THEN nothing is wrong
    assert check_pack(PACK) == []


def test_the_pinned_chart_is_released_into_kube_system() -> None:
    # GIVEN the defaults WHEN bound THEN a HelmRepository and a HelmRelease of the pinned chart
    bound = bind_pack(PACK)
    assert bound.kinds() == [("HelmRepository", "reloader"), ("HelmRelease", "reloader")]
    assert bound.one("HelmRelease")["spec"]["chart"]["spec"]["version"] == RELOADER.version
    assert bound.one("HelmRelease")["spec"]["targetNamespace"] == "kube-system"


def test_the_release_gates_the_packs_kustomization() -> None:
    # GIVEN the defaults WHEN bound THEN Flux waits for the release, and nothing else
    checks = bind_pack(PACK).health_checks
    assert [(check.kind, check.namespace, check.name) for check in checks] == [
        ("HelmRelease", "flux-system", "reloader")
    ]


def test_the_section_sets_the_charts_values() -> None:
    # GIVEN watchGlobally switched off WHEN bound THEN the chart's values say so
    values = bind_pack(PACK, {"watchGlobally": False}).one("HelmRelease")["spec"]["values"]
    assert values == {"reloader": {"watchGlobally": False, "ignoreSecrets": False}}


def test_extra_values_are_merged_last() -> None:
    # GIVEN extra Helm values over a key the pack sets WHEN bound THEN they win, key by key
    values = bind_pack(PACK, {"values": {"reloader": {"ignoreSecrets": True}}}).one("HelmRelease")["spec"]["values"]
    assert values == {"reloader": {"watchGlobally": True, "ignoreSecrets": True}}
