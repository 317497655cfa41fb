"""Sealed Secrets without the cluster: sealing a value the way kubeseal does, from the controller's
certificate (fluxplane.sealing.kubeseal.kubeseal), and sealing a Secret into the project's definition
(fluxplane.sealing.kubeseal.project)."""
