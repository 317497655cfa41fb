"""Applications: ``environments/apps/<app>.yaml``, one file per app, the file name is the app's name.

An app names its Git repository (URL, a tag, a semver range or a branch, sealed credentials), the
folder of its kustomize overlays, the clusters or environments it runs on, its namespace, and the AWS
resources it needs. Onboarding an app is a pull request that adds one such file; the governance team
reviews it (CODEOWNERS), and synth turns it into a tenant on every cluster it names.

The package reads in that order: :mod:`.app` (the model), :mod:`.resources` (its ``aws`` section),
:mod:`.names` (the names its resources take, and clashes between apps) and :mod:`.files` (reading the
folder and placing each app); every public name is importable from here.
"""

from fluxplane.config.apps.app import (
    SEMVER_RANGE,
    App,
    AppFile,
    AppRepository,
    GitRef,
    GitRefSpec,
    Owner,
    Placement,
)
from fluxplane.config.apps.files import (
    APPS_DIR,
    SPOKE_RESOURCES_DIR,
    app_path,
    apps_dir,
    place_apps,
    read_app_files,
)
from fluxplane.config.apps.names import (
    MAX_LABELLED_NAME,
    REQUESTS_SUFFIX,
    RESERVED_APP_NAMES,
    RESOURCE_KINDS,
    aws_name_problem,
    aws_names,
    composite_name,
    name_collisions,
    name_length_problems,
    physical_name,
    prefix_overlaps,
    queue_name,
    requests_name,
)
from fluxplane.config.apps.resources import (
    ATTRIBUTE,
    DATABASE_NAME,
    DB_ENGINE_VERSION,
    DB_IDENTIFIER,
    DB_IDENTIFIER_MAX_LENGTH,
    DB_INSTANCE_CLASS,
    DB_USERNAME,
    RESERVED_DB_USERS,
    AwsNeeds,
    Bucket,
    Database,
    Queue,
    Table,
)

__all__ = [
    "APPS_DIR",
    "ATTRIBUTE",
    "DATABASE_NAME",
    "DB_ENGINE_VERSION",
    "DB_IDENTIFIER",
    "DB_IDENTIFIER_MAX_LENGTH",
    "DB_INSTANCE_CLASS",
    "DB_USERNAME",
    "MAX_LABELLED_NAME",
    "REQUESTS_SUFFIX",
    "RESERVED_APP_NAMES",
    "RESERVED_DB_USERS",
    "RESOURCE_KINDS",
    "SEMVER_RANGE",
    "SPOKE_RESOURCES_DIR",
    "App",
    "AppFile",
    "AppRepository",
    "AwsNeeds",
    "Bucket",
    "Database",
    "GitRef",
    "GitRefSpec",
    "Owner",
    "Placement",
    "Queue",
    "Table",
    "app_path",
    "apps_dir",
    "aws_name_problem",
    "aws_names",
    "composite_name",
    "name_collisions",
    "name_length_problems",
    "physical_name",
    "place_apps",
    "prefix_overlaps",
    "queue_name",
    "read_app_files",
    "requests_name",
]
