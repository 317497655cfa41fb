"""cdk8s Charts, each owning a group of dist/ files."""
