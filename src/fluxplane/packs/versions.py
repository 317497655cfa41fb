"""Every pinned chart and artifact version of the built-in packs, in one place.

Upgrading an add-on fleet-wide is a one-line change here, reviewed as a diff of dist/.
"""

from __future__ import annotations

# Where pinned charts are typed; named here too, for the packs that pin their own.
from fluxplane.constructs.helm_repository import Chart as Chart

METRICS_SERVER = Chart("https://kubernetes-sigs.github.io/metrics-server/", "metrics-server", "3.13.1")
PODINFO = Chart("oci://ghcr.io/stefanprodan/charts", "podinfo", "6.14.1")

#: Installed on every workload cluster by the hub's bootstrap chain (fluxplane.charts.spokes).
EXTERNAL_SECRETS = Chart("https://charts.external-secrets.io", "external-secrets", "2.14.0")
SEALED_SECRETS = Chart("https://bitnami-labs.github.io/sealed-secrets", "sealed-secrets", "2.18.5")
FLUX2 = Chart("https://fluxcd-community.github.io/helm-charts", "flux2", "2.19.0")
#: The Flux minor version the flux2 chart above installs (the chart's appVersion), which fluxplane judges against
#: the Kubernetes versions Flux supports; the same as FLUX_DISTRIBUTION's, so that the installer changes no Flux.
FLUX2_APP_VERSION = "2.9"
#: For clusters with ``fluxInstaller: flux-operator``: the Flux Operator's chart, and the Flux its FluxInstance
#: asks for (a semver range: the operator applies Flux's patch releases of that minor as they come).
FLUX_OPERATOR = Chart("oci://ghcr.io/controlplaneio-fluxcd/charts", "flux-operator", "0.60.0")
FLUX_DISTRIBUTION = "2.9.x"
FLUX_REGISTRY = "ghcr.io/fluxcd"
#: The bootstrap's charts: the hub names their Flux sources after them, in its flux-system.
BOOTSTRAP = (EXTERNAL_SECRETS, SEALED_SECRETS, FLUX2, FLUX_OPERATOR)

CROSSPLANE = Chart("https://charts.crossplane.io/stable", "crossplane", "2.4.3")

#: Crossplane packages, pinned. The AWS providers are the provider-upjet-aws family, published by
#: crossplane-contrib; every AWS provider of one fleet must share the family's version.
CROSSPLANE_REGISTRY = "xpkg.crossplane.io/crossplane-contrib"
#: Each line names its package (renovate.json reads it from the comment).
PROVIDER_AWS = "v2.7.2"  # xpkg.crossplane.io/crossplane-contrib/provider-family-aws
PROVIDER_KUBERNETES = "v1.2.1"  # xpkg.crossplane.io/crossplane-contrib/provider-kubernetes
FUNCTION_PATCH_AND_TRANSFORM = "v0.10.8"  # xpkg.crossplane.io/crossplane-contrib/function-patch-and-transform
FUNCTION_AUTO_READY = "v0.7.0"  # xpkg.crossplane.io/crossplane-contrib/function-auto-ready

#: The add-on catalogue (one pack each; see the catalogue table in docs/explanation/packs.md).
KARPENTER = Chart("oci://public.ecr.aws/karpenter", "karpenter", "1.14.1")
AWS_LOAD_BALANCER_CONTROLLER = Chart("https://aws.github.io/eks-charts", "aws-load-balancer-controller", "3.5.0")
EXTERNAL_DNS = Chart("https://kubernetes-sigs.github.io/external-dns/", "external-dns", "1.21.1")
CERT_MANAGER = Chart("https://charts.jetstack.io", "cert-manager", "v1.21.1")
AWS_EBS_CSI_DRIVER = Chart("https://kubernetes-sigs.github.io/aws-ebs-csi-driver", "aws-ebs-csi-driver", "2.64.0")
KUBE_PROMETHEUS_STACK = Chart("https://prometheus-community.github.io/helm-charts", "kube-prometheus-stack", "91.5.0")
ENVOY_GATEWAY = Chart("oci://docker.io/envoyproxy", "gateway-helm", "v1.9.0")
KYVERNO = Chart("https://kyverno.github.io/kyverno/", "kyverno", "3.9.0")
FLUENT_BIT = Chart("https://fluent.github.io/helm-charts", "fluent-bit", "0.58.1")
