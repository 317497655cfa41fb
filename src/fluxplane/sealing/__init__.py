"""Sealed Secrets without the cluster: sealing a value the way kubeseal does, from the controller's
certificate (fluxplane.sealing.kubeseal), and sealing a Secret into the project's definition
(fluxplane.sealing.project). This module itself loads nothing: the commands import it to parse their options, and
the sealing modules, which load cryptography, when they run."""

#: Where the sealing key's certificate is looked for, relative to the project.
DEFAULT_CERT = "environments/sealing-cert.pem"
