"""render_app: forked workers render the same files as one process, and a problem stops them; the cdk8s
constructs found below each chart."""

from __future__ import annotations

import multiprocessing
import posixpath
import signal
import threading
import time
from pathlib import Path
from typing import Any, cast

import pytest

from fluxplane.errors import TreeError
from fluxplane.synth import load_plan, render
from fluxplane.synth.app import FleetApp
from fluxplane.synth.render import render_app

pytestmark = pytest.mark.skipif(
    "fork" not in multiprocessing.get_all_start_methods(), reason="forked workers need the fork start method"
)


def _app(project: Path, custom: bool = False) -> FleetApp:
    import cdk8s

    app = FleetApp(load_plan(project))
    if custom:
        cdk8s.ApiObject(
            app.clusters["staging-usw2"], "team", api_version="v1", kind="Namespace", metadata={"name": "team-a"}
        )
    return app


def _workers(monkeypatch: pytest.MonkeyPatch, count: int) -> None:
    monkeypatch.setattr(render, "PARALLEL_MIN_FILES", 0)
    monkeypatch.setattr(render, "cores", lambda: count)


@pytest.mark.parametrize("custom", [False, True], ids=["readmes-in-workers", "readmes-after-cdk8s"])
def test_workers_render_the_same_files_as_one_process(
    example_project: Path, monkeypatch: pytest.MonkeyPatch, custom: bool
) -> None:
    # GIVEN the example fleet, with or without a cdk8s construct under a cluster chart
    # WHEN it is rendered by this process alone, and by 2 and 3 forked workers
    alone = render_app(_app(example_project, custom))
    results = []
    for count in (2, 3):
        _workers(monkeypatch, count)
        results.append(render_app(_app(example_project, custom)))
    # THEN every run gives the same files in the same order, READMEs included
    assert [list(result) for result in results] == [list(alone)] * 2
    assert results == [alone, alone]
    assert ("platform/clusters/staging-usw2/custom.yaml" in alone) is custom
    assert "platform/clusters/staging-usw2/README.md" in alone
    assert multiprocessing.active_children() == []


def test_a_problem_found_while_workers_render_stops_them(
    example_project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import cdk8s

    # GIVEN a plaintext Secret from cdk8s, which is found after the workers have started
    _workers(monkeypatch, 2)
    app = _app(example_project)
    leak = cdk8s.ApiObject(
        app.clusters["staging-usw2"], "leak", api_version="v1", kind="Secret", metadata={"name": "leak"}
    )
    leak.add_json_patch(cdk8s.JsonPatch.add("/stringData", {"password": "hunter2"}))
    # WHEN rendered THEN the problem is reported and no worker is left running
    with pytest.raises(TreeError, match=r"^cluster-staging-usw2 \(cdk8s\): Secret 'leak' in "):
        render_app(app)
    assert multiprocessing.active_children() == []


@pytest.mark.parametrize(
    ("custom", "refusal"),
    [
        (
            False,
            "environments/manifests/staging/configs/kyverno.yaml: Namespace kyverno is written by pack 'kyverno' too "
            "on clusters 'staging-euw1', 'staging-usw2'; remove it from the file or give it another name",
        ),
        (
            True,
            "platform/clusters/staging-usw2/custom.yaml: Namespace kyverno is written by pack 'kyverno' too on cluster "
            "'staging-usw2'; remove it from the cluster chart or give it another name",
        ),
    ],
    ids=["judged-in-workers", "judged-after-cdk8s"],
)
def test_workers_refuse_an_object_two_writers_apply_as_one_process_does(
    example_project: Path, monkeypatch: pytest.MonkeyPatch, custom: bool, refusal: str
) -> None:
    import cdk8s

    # GIVEN pack kyverno's Namespace written again on staging-usw2, by a plain manifest or a cdk8s construct
    def app() -> FleetApp:
        made = _app(example_project)
        if custom:
            metadata = {"name": "kyverno"}
            cdk8s.ApiObject(
                made.clusters["staging-usw2"], "again", api_version="v1", kind="Namespace", metadata=metadata
            )
        return made

    if not custom:
        manifest = example_project / "environments/manifests/staging/configs/kyverno.yaml"
        manifest.parent.mkdir(parents=True)
        manifest.write_text("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: kyverno\n")
    # WHEN rendered by this process alone, and by 2 forked workers THEN both refuse it alike, leaving no worker
    with pytest.raises(TreeError) as alone:
        render_app(app())
    _workers(monkeypatch, 2)
    with pytest.raises(TreeError) as workers:
        render_app(app())
    assert alone.value.problems == workers.value.problems == (refusal,)
    assert multiprocessing.active_children() == []


def _handlers(_: int) -> tuple[object, object]:
    return signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)


def test_render_workers_end_on_sigterm_whatever_handlers_the_command_installed() -> None:
    # GIVEN the command's own SIGTERM handler (which raises in the main thread), inherited through fork
    def raising(signum: int, frame: object) -> None:
        raise SystemExit(143)

    previous = signal.signal(signal.SIGTERM, raising)
    try:
        # WHEN a pool starts its workers as synth's does
        with multiprocessing.get_context("fork").Pool(1, initializer=render._worker_signals) as pool:
            handlers = pool.map(_handlers, [0])[0]
    finally:
        signal.signal(signal.SIGTERM, previous)
    # THEN a worker ignores Ctrl-C (the command handles it) and dies on the SIGTERM Pool.terminate sends
    assert handlers == (signal.SIG_IGN, signal.SIG_DFL)


class _Stopped(Exception):
    """What the test's signal handler raises in the main thread."""


def _raising(signum: int, frame: object) -> None:
    raise _Stopped


def test_a_signal_another_thread_takes_reaches_the_main_thread_waiting_for_the_workers() -> None:
    # GIVEN the main thread waiting for a worker that takes 30 s, and a handler that raises there (as the command's)
    previous = signal.signal(signal.SIGUSR1, _raising)
    pool = multiprocessing.get_context("fork").Pool(1, initializer=render._worker_signals)
    try:
        rendering = render.PendingRender(cast(Any, None), [])
        rendering._start(pool, pool.map_async(time.sleep, [30]), True)
        # WHEN the signal reaches the process through another thread (the kernel may hand it to any; the pool
        # runs three of its own)
        threading.Timer(0.3, lambda: signal.pthread_kill(threading.get_ident(), signal.SIGUSR1)).start()
        start = time.monotonic()
        # THEN the main thread raises at once, not when the worker is done
        with pytest.raises(_Stopped):
            rendering.result({})
        assert time.monotonic() - start < 5
    finally:
        pool.terminate()
        pool.join()
        signal.signal(signal.SIGUSR1, previous)


def test_the_folders_of_reused_kustomization_files_are_those_dirname_gives() -> None:
    # GIVEN paths with and without a kustomization.yaml, odd ones too (a doubled slash, the top of the tree)
    paths = [
        "platform/clusters/a/kustomization.yaml",
        "platform/clusters/a/apps.yaml",
        "platform/clusters/a/overlays/x/kustomization.yaml",
        "platform/clusters/a/notkustomization.yaml",
        "platform/clusters/a/kustomization.yml",
        "kustomization.yaml",
        "a//kustomization.yaml",
        "/kustomization.yaml",
    ]
    # WHEN their kustomization folders are taken THEN they are posixpath's dirname of each such file
    expected = {posixpath.dirname(path) for path in paths if posixpath.basename(path) == "kustomization.yaml"}
    assert render._kustomization_folders(paths) == expected
