"""aws-load-balancer-controller: ALBs for Ingresses and NLBs for Services of type LoadBalancer.

The controller must know its cluster's region and VPC. It would otherwise ask the instance metadata
service, which pods cannot reach when the nodes keep IMDSv2's hop limit at 1 (and should not: a pod
that reaches IMDS gets the node's role). The region is a cluster variable; the VPC ID is made by
Crossplane after synth, so the controller finds the VPC by tag instead (``--aws-vpc-tags``, the
chart's ``vpcTags``): the EKS composition (fluxplane.kinds.eks_api) names each cluster's VPC like the
cluster, and tags its subnets ``kubernetes.io/role/elb`` (public) and
``kubernetes.io/role/internal-elb`` (private), which is how the controller picks subnets.

The controller calls AWS as the IAM role EKS Pod Identity gives its service account, with the
policy the controller publishes for its release.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, ClassVar, Literal

from pydantic import AfterValidator, Field, field_validator, model_validator

from fluxplane.config.problems import show
from fluxplane.core.layout import CLUSTER_VARIABLE
from fluxplane.packs import versions
from fluxplane.sdk import (
    FLUXPLANE_NETWORK,
    SUBSTITUTED,
    DnsLabel,
    Pack,
    PackContext,
    ReleaseConfig,
    chart_release,
    keep_service_account,
    load_policy,
)

#: Where the chart runs, and the fixed name of its service account: the Pod Identity association
#: binds the IAM role to exactly this pair.
NAMESPACE = "kube-system"
SERVICE_ACCOUNT = "aws-load-balancer-controller"

#: A VPC Name tag: the characters EC2 allows in tags, less ',' and '=' (the flag is a key=value list),
#: and the cluster variables.
VPC_NAME = rf"(?:[A-Za-z0-9 _.:/+@-]|{CLUSTER_VARIABLE})+"


def _vpc_name(value: str) -> str:
    if not re.fullmatch(VPC_NAME, value) or len(value) > 256:
        raise ValueError(
            "expected a VPC Name tag of at most 256 characters: letters, digits, spaces, '_', '.', ':', '/', '+', "
            f"'@', '-' and the cluster variables (${{cluster_name}}, ${{environment}}, ...), got {show(value)}"
        )
    return value


def _vpc_id(value: str) -> str:
    if not re.fullmatch(r"vpc-(?:[0-9a-f]{8}|[0-9a-f]{17})", value):
        raise ValueError(f"expected a VPC ID such as vpc-0123456789abcdef0, got {show(value)}")
    return value


VpcName = Annotated[str, AfterValidator(_vpc_name)]
VpcId = Annotated[str, AfterValidator(_vpc_id)]


def iam_policy() -> dict[str, Any]:
    """The controller's IAM policy as its project publishes it (docs/install/iam_policy.json of
    kubernetes-sigs/aws-load-balancer-controller, unchanged from v2.14 to v3.5.0), kept verbatim in this
    pack's controller.json so that an upgrade is a paste of the new release's file and its review a plain
    diff."""
    return load_policy("controller", __name__)


class AwsLoadBalancerControllerConfig(ReleaseConfig):
    release_namespace: ClassVar[str] = NAMESPACE

    replicas: int = Field(
        2,
        ge=1,
        le=10,
        description="Controller replicas (one leads, the others stand by); 2 or more also adds a PodDisruptionBudget.",
    )
    ingress_class: DnsLabel = Field(
        "alb", alias="ingressClass", description="IngressClass the chart creates and the controller serves."
    )
    default_ingress_class: bool = Field(
        False,
        alias="defaultIngressClass",
        description="Make that IngressClass the cluster's default, for Ingresses without ingressClassName.",
    )
    enable_service_mutator_webhook: bool = Field(
        True,
        alias="enableServiceMutatorWebhook",
        description="Give new Services of type LoadBalancer to this controller (NLBs); false leaves them to EKS's "
        "built-in cloud provider (Classic Load Balancers).",
    )
    default_target_type: Literal["instance", "ip"] = Field(
        "instance",
        alias="defaultTargetType",
        description="Targets of load balancers whose Ingress or Service does not say: node ports (instance) or "
        "pod IPs (ip).",
    )
    vpc_name: Annotated[VpcName, SUBSTITUTED] = Field(
        "${cluster_name}",
        alias="vpcName",
        description="Name tag of the cluster's VPC, by which the controller finds it; the default is the VPC "
        "fluxplane composes for a workload cluster. Set it (or vpcId) for a cluster whose VPC is made elsewhere; "
        "cluster variables such as ${cluster_name} work.",
    )
    vpc_id: VpcId | None = Field(
        None, alias="vpcId", description="The cluster's VPC ID, instead of vpcName, for a VPC made elsewhere."
    )
    version: str = Field(versions.AWS_LOAD_BALANCER_CONTROLLER.version, description="Chart version.")
    values: dict[str, Any] = Field(default_factory=dict, description="Extra Helm values, merged last.")

    @field_validator("values")
    @classmethod
    def _keep_service_account(cls, values: dict[str, Any]) -> dict[str, Any]:
        return keep_service_account(values, NAMESPACE, SERVICE_ACCOUNT)

    @model_validator(mode="after")
    def _one_way_to_the_vpc(self) -> AwsLoadBalancerControllerConfig:
        if self.vpc_id is not None and "vpc_name" in self.model_fields_set:
            raise ValueError(
                f"give vpcName or vpcId, not both: got vpcName {show(self.vpc_name)} and vpcId {show(self.vpc_id)}"
            )
        return self


def chart_values(config: AwsLoadBalancerControllerConfig) -> dict[str, Any]:
    """The chart's values for ``config``, before the user's ``values``."""
    values: dict[str, Any] = {
        "clusterName": "${cluster_name}",
        "region": "${cluster_region}",
    }
    if config.vpc_id is not None:
        values["vpcId"] = config.vpc_id
    else:
        values["vpcTags"] = {"Name": config.vpc_name}
    values |= {
        "serviceAccount": {"create": True, "name": SERVICE_ACCOUNT},
        "replicaCount": config.replicas,
        "ingressClass": config.ingress_class,
        "createIngressClassResource": True,
        "ingressClassConfig": {"default": config.default_ingress_class},
        "enableServiceMutatorWebhook": config.enable_service_mutator_webhook,
        "defaultTargetType": config.default_target_type,
        # Keep the webhook's certificate across upgrades: with a new one per upgrade, the API server
        # distrusts the webhooks, and refuses what they check, until the pods load the new one.
        "keepTLSSecret": True,
        # From v3 the controller runs its own Gateway API controllers whenever the Gateway API CRDs exist
        # (envoy-gateway installs them); off, as in v2, unless the values turn them on.
        "controllerConfig": {"featureGates": {"ALBGatewayAPI": False, "NLBGatewayAPI": False}},
    }
    if config.replicas > 1:
        values["podDisruptionBudget"] = {"maxUnavailable": 1}
    return values


def bind(ctx: PackContext, config: AwsLoadBalancerControllerConfig) -> None:
    release = chart_release(
        ctx.scope,
        name="aws-load-balancer-controller",
        chart=versions.AWS_LOAD_BALANCER_CONTROLLER,
        version=config.version,
        target_namespace=NAMESPACE,
        identity=config,
    )
    release.add_values(chart_values(config))
    release.add_values(config.values)
    ctx.add_pod_identity("controller", namespace=NAMESPACE, service_account=SERVICE_ACCOUNT, policy=iam_policy())
    ctx.add_health_check(release)


PACK = Pack(
    name="aws-load-balancer-controller",
    version="1.0.0",
    description="AWS Load Balancer Controller (ALBs for Ingresses, NLBs for Services of type LoadBalancer)",
    config=AwsLoadBalancerControllerConfig,
    layer="controllers",
    bind=bind,
    replaced_by_auto_mode="load balancing (ALBs for Ingresses, NLBs for Services)",
    namespaces=(NAMESPACE,),
    needs=(FLUXPLANE_NETWORK,),
    # the chart's crds/: TargetGroupBinding, IngressClassParams; GlobalAccelerator; the Gateway API configurations
    crds=("elbv2.k8s.aws", "aga.k8s.aws", "gateway.k8s.aws"),
)
