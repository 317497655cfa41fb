"""syrupy snapshots kept as YAML, one file per test: what the pytest plugin's ``yaml_snapshot`` compares with.

Only that fixture imports this module, when a test takes it: syrupy is a test dependency of a fleet repository,
not of fluxplane.
"""

from __future__ import annotations

from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode
from syrupy.types import PropertyFilter, PropertyMatcher, SerializableData, SerializedData

from fluxplane.core.codec import dump_value


class YamlSnapshot(SingleFileSnapshotExtension):
    """``__snapshots__/<test module>/<test>.yaml``: a text as it is, anything else as fluxplane's YAML (keys in
    their order, block style), so a snapshot's diff reads like the change it records."""

    file_extension = "yaml"
    _write_mode = WriteMode.TEXT

    def serialize(
        self,
        data: SerializableData,
        *,
        exclude: PropertyFilter | None = None,
        include: PropertyFilter | None = None,
        matcher: PropertyMatcher | None = None,
    ) -> SerializedData:
        return data if isinstance(data, str) else dump_value(data)
