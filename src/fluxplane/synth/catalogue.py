"""The fleet's catalogue: per add-on, the folders clusters apply it from.

An add-on is rendered once per distinct configuration. Its base folder holds it with the fleet-wide
configuration; an environment, then a cluster, whose configuration renders differently gets an overlay
over its parent that holds only the difference (fluxplane.charts.catalogue, fluxplane.charts.overlay).
This binds packs, so it sits in synth rather than among the charts, which are below the packs.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from fluxplane.charts.catalogue import CatalogueChart, Variant
from fluxplane.charts.overlay import OverlayPlan
from fluxplane.constructs.kustomization import escaped
from fluxplane.constructs.manifest import Manifest
from fluxplane.core.layout import RepositoryLayout, cluster_overlay_dir
from fluxplane.packs.api import Pack, PackConfig, PackContext, split_pack
from fluxplane.synth.plan import ClusterPlan, FleetPlan


def config_key(config: PackConfig) -> str:
    """What makes two configurations of a pack render alike: every field but ``enabled``."""
    return config.model_dump_json(exclude={"enabled"})


class Catalogue(Mapping[str, CatalogueChart]):
    """The catalogue charts by pack name (a part of a split pack is a pack of its own), made on first ask.

    Asking for a pack's folder for a cluster (:meth:`variant`) makes what that folder needs: the
    pack's base, its environment's overlay and the cluster's own overlay, each only once and only when
    it renders differently from its parent.
    """

    def __init__(self, scope: Any, plan: FleetPlan, layout: RepositoryLayout) -> None:
        self._scope = scope
        self.plan = plan
        self.layout = layout
        self._charts: dict[str, CatalogueChart] = {}
        self._base: dict[str, Variant] = {}
        self._environment_variants: dict[tuple[str, str], Variant] = {}
        # Clusters that share override values share the rendering and the overlay plan.
        self._rendered: dict[tuple[str, str], tuple[list[dict[str, Any]], PackContext]] = {}
        self._plans: dict[tuple[str, str, str], OverlayPlan] = {}
        #: Per pack as applied (a part of a split pack included): the pack whose config it takes.
        self._source: dict[str, str] = {}
        #: (environment, packs) of clusters already started (:meth:`start`), and the folders they start from.
        self._started: set[tuple[str | None, tuple[str, ...]]] = set()
        self._prefixes: dict[tuple[str | None, tuple[str, ...]], tuple[str, ...]] = {}
        #: config_key of each config asked about, by identity (configs are frozen; each is kept, so its id is its own).
        self._keys: dict[int, tuple[PackConfig, str]] = {}

    def __getitem__(self, pack: str) -> CatalogueChart:
        return self._charts[pack]

    def __iter__(self) -> Iterator[str]:
        return iter(self._charts)

    def __len__(self) -> int:
        return len(self._charts)

    def parts(self, pack: Pack) -> tuple[Pack, ...]:
        """The pack as applied (split_pack); remembers whose config each part takes."""
        parts = split_pack(pack)
        for part in parts:
            self._source[part.name] = pack.name
        return parts

    def source(self, part: str) -> str:
        """The pack whose config ``part`` (a pack as applied, :meth:`parts`) takes."""
        return self._source.get(part, part)

    def variant(self, pack: Pack, cluster: ClusterPlan, config: PackConfig) -> Variant:
        """What ``cluster`` applies ``pack`` (a part, :meth:`parts`) from with ``config``: the folder, and what
        the pack declared about itself there (PackContext)."""
        chart = self._chart(pack)
        variant, parent_config = self._parent(pack, chart, cluster.environment)
        if self._key(config) == self._key(parent_config):
            return variant
        overlay_dir = cluster_overlay_dir(cluster.name, pack.name)
        return self._derive(pack, chart, variant, config, f"cluster-{cluster.name}", overlay_dir)

    def start(self, cluster: ClusterPlan) -> None:
        """Make the folders ``cluster``'s packs start from (base and environment overlays), not its own.

        For a cluster whose own files are reused (fluxplane.synth.cache): the shared folders it applies
        are still written.
        """
        started = (cluster.environment, tuple(cluster.packs))
        if started in self._started:
            return
        self._started.add(started)
        for name in cluster.packs:
            for pack in self.parts(self.plan.registry.get(name)):
                self._parent(pack, self._chart(pack), cluster.environment)

    def prefixes(self, cluster: ClusterPlan) -> tuple[str, ...]:
        """The catalogue folders under dist/ that ``cluster``'s packs start from: each base and environment overlay."""
        started = (cluster.environment, tuple(cluster.packs))
        found = self._prefixes.get(started)
        if found is None:
            found = self._prefixes[started] = self._catalogue_prefixes(cluster)
        return found

    def _catalogue_prefixes(self, cluster: ClusterPlan) -> tuple[str, ...]:
        prefixes: list[str] = []
        for name in cluster.packs:
            for pack in split_pack(self.plan.registry.get(name)):
                chart = self._charts.get(pack.name)
                if chart is None:
                    continue
                for variant in ("base", cluster.environment or "base"):
                    prefixes.append(posixpath.join(self.layout.key, chart.directory, variant) + "/")
        return tuple(prefixes)

    def _key(self, config: PackConfig) -> str:
        """config_key of ``config``, worked out once per config: a fleet asks about the same few configs for every
        cluster."""
        known = self._keys.get(id(config))
        if known is None:
            known = self._keys[id(config)] = (config, config_key(config))
        return known[1]

    def _binder(self, pack: Pack, config: PackConfig) -> Callable[[Manifest], PackContext]:
        fleet = self.plan.fleet

        def binder(manifest: Manifest) -> PackContext:
            context = PackContext(manifest, fleet)
            # Applied with post-build substitution (ClusterChart.add_pack): the user's text, escaped.
            pack.apply(context, escaped(config))
            return context

        return binder

    def _chart(self, pack: Pack) -> CatalogueChart:
        chart = self._charts.get(pack.name)
        if chart is None:
            chart = CatalogueChart(
                self._scope, f"catalogue-{pack.name}", layout=self.layout, layer=pack.layer, pack=pack.name
            )
            self._charts[pack.name] = chart
            config = self.plan.base_configs[self.source(pack.name)]
            self._base[pack.name] = chart.emit_base(self._binder(pack, config))
            self._rendered[(pack.name, self._key(config))] = (
                self._base[pack.name].documents,
                self._base[pack.name].declared,
            )
        return chart

    def _derive(
        self,
        pack: Pack,
        chart: CatalogueChart,
        parent: Variant,
        config: PackConfig,
        construct_id: str,
        directory: str,
    ) -> Variant:
        """``parent`` changed to ``config``: an overlay at ``directory``, or ``parent`` if it renders alike."""
        key = self._key(config)
        rendered = self._rendered.get((pack.name, key))
        if rendered is None:
            rendered = chart.render(f"config-{len(self._rendered)}", self._binder(pack, config))
            self._rendered[(pack.name, key)] = rendered
        documents, declared = rendered
        plan_key = (pack.name, parent.directory, key)
        overlay = self._plans.get(plan_key)
        if overlay is None:
            overlay = self._plans[plan_key] = chart.plan(parent, documents)
        if overlay.empty:
            return parent
        chart.emit_overlay(construct_id, directory, parent, overlay)
        return Variant(directory=directory, documents=documents, declared=declared)

    def _parent(self, pack: Pack, chart: CatalogueChart, environment: str | None) -> tuple[Variant, PackConfig]:
        """The variant a cluster of ``environment`` starts from: the environment's overlay, or the base."""
        source = self.source(pack.name)
        base_config = self.plan.base_configs[source]
        base = self._base[pack.name]
        env_config = self.plan.environment_configs.get((environment, source)) if environment else None
        if environment is None or env_config is None or self._key(env_config) == self._key(base_config):
            return base, base_config
        key = (pack.name, environment)
        if key not in self._environment_variants:
            self._environment_variants[key] = self._derive(
                pack,
                chart,
                base,
                env_config,
                f"env-{environment}",
                posixpath.join(chart.directory, environment),
            )
        return self._environment_variants[key], env_config
