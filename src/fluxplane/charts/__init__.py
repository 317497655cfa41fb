"""The charts of a fleet, each owning a group of dist/ files (cdk8s Charts too, under the library's FleetApp)."""
