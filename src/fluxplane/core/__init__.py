"""The small core every layer above the definition shares.

* :mod:`fluxplane.core.codec`: the one YAML style fluxplane writes and reads manifests with;
* :mod:`fluxplane.core.layout`: where things go in ``dist/`` and the names Flux sees them by;
* :mod:`fluxplane.core.tree`: a synthesized tree as Flux reads it (which objects land on which cluster);
* :mod:`fluxplane.system.processes`: child processes run many at a time (the kustomize builds), which a signal ends.

It imports the definition's models (``fluxplane.config``) and nothing that builds or renders a fleet:
constructs, charts, packs, synth and the commands all sit above it.
"""
