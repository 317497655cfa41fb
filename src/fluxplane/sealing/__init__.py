"""Sealed Secrets without the cluster: sealing a value the way kubeseal does, from the controller's
certificate (fluxplane.sealing.kubeseal.kubeseal), and sealing a Secret into the project's definition
(fluxplane.sealing.kubeseal.project)."""

#: Where the sealing key's certificate is looked for, relative to the project.
DEFAULT_CERT = "environments/sealing-cert.pem"
