"""The packs: the add-ons fluxplane installs, and the framework they plug into.

Each built-in pack is a package of its own, ``fluxplane.packs.<name>``, whose ``__init__.py`` exports ``PACK``
(registered under the ``fluxplane.packs`` entry points), with the IAM policies it reads as JSON
(``<name>/<policy>.json``, read with ``load_policy``) and the modules only it uses. The modules here are what
the packs share or what reads them all: the pack API (api), the registry, the pinned versions, the Helm release
helpers (helm), ``load_policy`` (policies), the definition's chart files, each a pack (helm_charts), the AWS
managed resources the compositions make (managed_resources), what an EKS Auto Mode cluster applies itself
(auto_mode), and ``packs list`` and ``packs show`` (describe).
"""
