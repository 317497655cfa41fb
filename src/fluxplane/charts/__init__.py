"""cdk8s Charts, each owning a group of dist/ files. The first layer that starts the JavaScript runtime."""

from fluxplane.node import use_project_node

use_project_node()
