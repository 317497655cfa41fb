"""The ``fluxplane`` command. The only place that catches FluxplaneError and picks the exit code.

Exit codes: 0 success; 1 ``synth --check`` found dist/ stale; 2 bad input (every problem printed,
one per line, no traceback, dist/ untouched), and a standard output that cannot be written (full,
closed: one line); 130 and 143 stopped by SIGINT (Ctrl-C) or SIGTERM, after the cleanup on the way
out, with one line; 141 standard output is a pipe whose reader left (``| head``), silently, as a
shell reports git or cat stopped by the closed pipe. Anything else is a bug and keeps its traceback;
``--debug`` shows the traceback of the handled cases too.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import os
import posixpath
import signal
import sys
import threading
import time
import traceback
from collections.abc import Iterable, Sequence
from pathlib import Path
from types import FrameType
from typing import Any, TextIO, cast

from fluxplane import transaction
from fluxplane.commands import graph as graph_command
from fluxplane.errors import FluxplaneError
from fluxplane.files import CDK8S_OUTDIR, output_dir
from fluxplane.node import require_node, start_runtime
from fluxplane.progress import Progress
from fluxplane.seal_secret import DEFAULT_CERT

EXIT_STALE = 1
EXIT_FINDINGS = 1
EXIT_BAD_INPUT = 2
EDIT_COMMANDS = ("new-cluster", "remove-cluster", "onboard-app", "offboard-app")


def _version() -> str:
    """The installed distribution's version (the package's own when it runs from a source tree)."""
    from importlib import metadata

    try:
        return metadata.version("fluxplane")
    except metadata.PackageNotFoundError:
        from fluxplane import __version__

        return __version__


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="fluxplane", description="Synthesize a Flux and Crossplane fleet repository from environments/."
    )
    parser.add_argument(
        "--root", type=Path, default=Path("."), help="project folder holding environments/ (default: .)"
    )
    parser.add_argument(
        "--debug", action="store_true", help="on an error, show the full traceback (with the error's causes)"
    )
    parser.add_argument("--version", action="version", version=f"fluxplane {_version()}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    synth = commands.add_parser("synth", help="write dist/ from the fleet definition")
    synth.add_argument(
        "--check", action="store_true", help="write nothing; exit 1 and list the files if dist/ is stale"
    )
    synth.add_argument(
        "--outdir",
        type=Path,
        default=None,
        help="where to write (default: $CDK8S_OUTDIR when cdk8s runs fluxplane, else <root>/dist)",
    )
    synth.add_argument(
        "--cdk8s",
        action="store_true",
        help="run as cdk8s.yaml's app: $CDK8S_OUTDIR inside the project is cdk8s-cli's scratch folder (dist/ is "
        "written, and a copy of it there for cdk8s-cli to list); outside it (cdk8s synth --stdout) only it is written",
    )
    synth.add_argument(
        "--no-cache",
        action="store_true",
        help="render every cluster, ignoring the cache of unchanged clusters in <root>/.fluxplane-cache",
    )
    synth.add_argument(
        "--replace",
        action="append",
        default=[],
        metavar="KIND/NAMESPACE/NAME",
        help="allow a change that replaces this live object (an immutable field: a VPC CIDR, a region, a table's "
        "keys); shell wildcards match several (repeatable)",
    )
    synth.add_argument(
        "--delete",
        action="append",
        default=[],
        metavar="KIND/NAMESPACE/NAME",
        help="allow removing this cluster, table, queue or bucket, which Crossplane then deletes in AWS (repeatable)",
    )
    synth.add_argument(
        "--move",
        action="append",
        default=[],
        metavar="KIND/NAMESPACE/NAME",
        help="allow this object to move to another Flux Kustomization, once the old one is suspended on the hub "
        "(repeatable)",
    )
    init = commands.add_parser(
        "init",
        help="start a fleet repository: definition, tests, CI and README",
        description="Write a new fleet repository into DIR (default: the current folder): pyproject.toml pinning "
        "this fluxplane, cdk8s.yaml, a commented environments/ (a hub and one environment), the fleet's tests, "
        ".gitignore, a CI workflow and a README. Refuses, writing nothing, when any of these files exists.",
    )
    init.add_argument("dir", nargs="?", type=Path, default=Path("."), metavar="DIR")
    commands.add_parser("reference", help="print the fleet definition reference (Markdown)")
    seal = commands.add_parser(
        "seal",
        help="seal a Secret offline into environments/secrets/<cluster>/ (or print it)",
        description="Seal values for the Sealed Secrets controller from its public certificate, without cluster "
        "access. Values that did not change keep their ciphertext.",
    )
    seal.add_argument("--cluster", required=True, help="the cluster the secret is for")
    seal.add_argument("--name", required=True, help="name of the Secret")
    seal.add_argument("--namespace", required=True, help="namespace of the Secret")
    seal.add_argument(
        "--scope",
        choices=("strict", "namespace-wide", "cluster-wide"),
        default="strict",
        help="where it may be unsealed: this name and namespace (default), any name in the namespace, anywhere",
    )
    seal.add_argument(
        "--cert", type=Path, default=None, help=f"PEM certificate of the sealing key (default: {DEFAULT_CERT})"
    )
    seal.add_argument("--type", default="Opaque", help="Secret type (default: Opaque)")
    seal.add_argument("--from-literal", action="append", default=[], metavar="KEY=VALUE", help="a value (repeatable)")
    seal.add_argument(
        "--from-file", action="append", default=[], metavar="[KEY=]PATH", help="a file's content (repeatable)"
    )
    seal.add_argument(
        "--from-env-file", action="append", default=[], metavar="PATH", help="KEY=VALUE lines (repeatable)"
    )
    seal.add_argument("--stdout", action="store_true", help="print the SealedSecret instead of writing it")
    _edit_commands(commands)
    packs = commands.add_parser("packs", help="the installed packs (add-ons): list them, or show one")
    pack_commands = packs.add_subparsers(dest="packs_command", required=True, metavar="SUBCOMMAND")
    pack_commands.add_parser("list", help="name, version, layer, requires and description of every pack")
    show = pack_commands.add_parser("show", help="a pack's config keys, what it emits and an example")
    show.add_argument("name", metavar="NAME", help="the pack")
    _review_commands(commands)
    return parser


def _review_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """validate, schemas, diff, graph: what a pull request's reviewers and CI need to know about dist/."""
    validate = commands.add_parser(
        "validate",
        help="check dist/ against CRD and Kubernetes schemas, kustomize and Flux's reference rules",
        description="Check every document strictly against its schema, build every kustomization with kubectl "
        "kustomize, and check the references Flux and Crossplane resolve only at run time. Prints one finding per "
        "line as FILE:DOCUMENT KIND/NAME: PATH: MESSAGE; exit 1 when there is any.",
    )
    validate.add_argument(
        "dist", nargs="?", type=Path, default=None, metavar="DIST", help="the tree to check (default: <root>/dist)"
    )
    validate.add_argument(
        "--crds",
        type=Path,
        action="append",
        default=[],
        metavar="DIR",
        help="a folder of CRD YAML (repeatable; default: $FLUXPLANE_CRDS, else the cache 'schemas pull' fills)",
    )
    validate.add_argument("--no-kustomize", action="store_true", help="do not run kubectl kustomize")
    validate.add_argument(
        "--changed",
        metavar="BASE",
        default=None,
        help="check only what changed in DIST since the Git ref BASE (references still across the whole tree)",
    )
    schemas = commands.add_parser("schemas", help="the CRD schemas validate checks against")
    schema_commands = schemas.add_subparsers(dest="schemas_command", required=True, metavar="SUBCOMMAND")
    pull = schema_commands.add_parser(
        "pull",
        help="download the CRDs of every API fluxplane emits into the schema cache",
        description="Fill the schema cache from the pinned upstream release URLs, or from a cluster with kubectl.",
    )
    pull.add_argument(
        "--from-cluster", action="store_true", help="read the CRDs from the current kubectl context instead"
    )
    pull.add_argument("--context", help="kubectl context for --from-cluster (default: the current one)")
    pull.add_argument("--dest", type=Path, default=None, metavar="DIR", help="where to write (default: the cache)")
    diff = commands.add_parser(
        "diff",
        help="what a change does to dist/: objects added, changed and removed per cluster, risky changes flagged",
        description="Synthesize the definition at a base Git ref (in a temporary worktree) and in the working "
        "tree, and report the difference per repository, cluster and object.",
    )
    diff.add_argument("--base", default="HEAD", metavar="REF", help="Git ref to compare with (default: HEAD)")
    diff.add_argument(
        "--format", choices=("text", "markdown"), default="text", help="text, or Markdown for a pull-request comment"
    )
    versions = commands.add_parser(
        "versions",
        help="which version of every pack runs on which cluster, and what blocks each cluster's next upgrade",
        description="Per cluster: its Kubernetes version and EKS support, its packs' versions, the API versions its "
        "objects use, and whether it can move to the next Kubernetes minor version (and what blocks it).",
    )
    versions.add_argument(
        "--format", choices=("text", "markdown"), default="text", help="text, or Markdown for a pull request or wiki"
    )
    graph_command.register(commands)


def _edit_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """new-cluster, remove-cluster, onboard-app, offboard-app: they edit environments/ and print the diff."""
    dry_run = argparse.ArgumentParser(add_help=False)
    dry_run.add_argument("--dry-run", action="store_true", help="print the change, write nothing")
    new = commands.add_parser(
        "new-cluster",
        parents=[dry_run],
        help="add a workload cluster to an environment",
        description="Add a workload cluster to environments/ENV.yaml. What you leave out comes from clusterDefaults.",
    )
    new.add_argument("name", metavar="NAME", help="cluster name, unique in the fleet")
    new.add_argument("--env", required=True, help="the environment (environments/ENV.yaml)")
    new.add_argument("--region", help="AWS region, e.g. us-east-2")
    new.add_argument("--kubernetes-version", help='Kubernetes minor version, e.g. "1.33"')
    new.add_argument("--cidr", help="VPC address range (default: allocated from clusterNetwork.pool)")
    new.add_argument("--availability-zones", type=int, help="zones to spread subnets and nodes over (2 to 6)")
    new.add_argument("--hub-access", choices=("kubeconfig", "keyless"), help="how the hub's Flux reaches the cluster")
    remove = commands.add_parser(
        "remove-cluster",
        parents=[dry_run],
        help="remove a workload cluster and its sealed secrets",
        description="Remove a workload cluster from its environment, with its sealed secrets. Refused while an app "
        "lists the cluster by name.",
    )
    remove.add_argument("name", metavar="NAME", help="the cluster")
    onboard = commands.add_parser(
        "onboard-app",
        parents=[dry_run],
        help="onboard an app (environments/apps/NAME.yaml), or add clusters to it",
        description="Write environments/apps/NAME.yaml. For an app that exists, add the clusters and environments "
        "given.",
    )
    onboard.add_argument("name", metavar="NAME", help="the app's name; its namespace unless --namespace")
    onboard.add_argument("--cluster", action="append", default=[], help="a cluster to run on (repeatable)")
    onboard.add_argument("--env", action="append", default=[], help="an environment to run on (repeatable)")
    onboard.add_argument("--repo", help="the app's Git repository, ssh:// or https://")
    onboard.add_argument("--path", help="folder of its kustomize overlays in the repository")
    onboard.add_argument(
        "--ref",
        help="tag:V, semver:RANGE or branch:NAME; bare, 1.2.3 or v1.2.3 is a tag, a range a semver, else a branch "
        "(default: branch:main)",
    )
    onboard.add_argument("--namespace", help="namespace on the clusters (default: NAME)")
    onboard.add_argument("--team", help="code owner of the app's folders, e.g. @example-org/payments")
    onboard.add_argument("--secret-ref", help="Secret with the repository's credentials (seal it per cluster)")
    onboard.add_argument(
        "--overlay", choices=("environment", "cluster", "none"), help="deploy PATH/<env>, PATH/<cluster> or PATH"
    )
    offboard = commands.add_parser(
        "offboard-app",
        parents=[dry_run],
        help="take an app off some clusters, or off the fleet",
        description="Take an app off the clusters given, or off every cluster (deleting its file), with its sealed "
        "secrets there.",
    )
    offboard.add_argument("name", metavar="NAME", help="the app")
    offboard.add_argument("--cluster", action="append", default=[], help="a cluster to leave (repeatable)")


def _seal(args: argparse.Namespace) -> int:
    from fluxplane.seal_secret import SealRequest, seal_secret

    root: Path = args.root
    transaction.note(transaction.recover(root, write=not args.stdout))
    request = SealRequest(
        cluster=args.cluster,
        name=args.name,
        namespace=args.namespace,
        scope=args.scope,
        cert=args.cert,
        secret_type=args.type,
        literals=args.from_literal,
        files=args.from_file,
        env_files=args.from_env_file,
    )
    warnings: list[str] = []
    try:
        sealed = seal_secret(root, request, write=not args.stdout, warnings=warnings)
    finally:
        # the certificate's warnings come first, whatever refuses the request after them
        for line in warnings:
            print(line, file=sys.stderr)
    if not sealed.written:
        print(sealed.text, end="")
        return 0
    summary = ", ".join(
        f"{label} {', '.join(keys)}"
        for label, keys in (("sealed", sealed.sealed), ("unchanged", sealed.unchanged), ("removed", sealed.removed))
        if keys
    )
    print(f"{sealed.path}: {summary}")
    return 0


def _edit(args: argparse.Namespace) -> int:
    from fluxplane import edit

    root: Path = args.root
    transaction.note(transaction.recover(root, write=not args.dry_run))
    if args.command == "new-cluster":
        change = edit.new_cluster(
            root,
            args.name,
            args.env,
            region=args.region,
            kubernetes_version=args.kubernetes_version,
            cidr=args.cidr,
            availability_zones=args.availability_zones,
            hub_access=args.hub_access,
        )
    elif args.command == "remove-cluster":
        change = edit.remove_cluster(root, args.name)
    elif args.command == "onboard-app":
        app = edit.AppRequest(
            name=args.name,
            clusters=args.cluster,
            environments=args.env,
            repo=args.repo,
            path=args.path,
            ref=args.ref,
            namespace=args.namespace,
            team=args.team,
            secret_ref=args.secret_ref,
            overlay=args.overlay,
        )
        change = edit.onboard_app(root, app)
    else:
        change = edit.offboard_app(root, args.name, args.cluster)
    outcome = edit.carry_out(change, dry_run=args.dry_run)
    print(outcome.diff, end="")
    for note in outcome.notes:
        print(note)
    if outcome.todo:
        print("to do before synth, seal:")
        for line in outcome.todo:
            print(f"  {line}")
    print("dry run: nothing written" if args.dry_run else "next: run 'fluxplane synth' and open a pull request")
    return 0


def _packs(args: argparse.Namespace) -> int:
    from fluxplane.packs.describe import list_packs, show_pack
    from fluxplane.synth import project_registry

    registry = project_registry(args.root)
    if args.packs_command == "list":
        print(list_packs(registry), end="")
    else:
        print(show_pack(registry.get(args.name)), end="")
    return 0


def _warn(line: str | None) -> None:
    if line:
        print(line, file=sys.stderr)


def _cdk8s_folder(args: argparse.Namespace) -> tuple[Path | None, bool]:
    """With ``--cdk8s``: the folder cdk8s-cli reads the manifests from ($CDK8S_OUTDIR), and whether it is the
    only output (outside the project: ``cdk8s synth --stdout``'s temporary folder, or ``--output`` elsewhere)."""
    value = os.environ.get(CDK8S_OUTDIR) if getattr(args, "cdk8s", False) else None
    if not value:
        return None, False
    folder = Path(value) if Path(value).is_absolute() else Path.cwd() / value
    project = Path(os.path.abspath(args.root))
    inside = Path(os.path.abspath(folder)) == project or project in Path(os.path.abspath(folder)).parents
    return folder, not inside


def _outdir(args: argparse.Namespace) -> Path:
    """Where synth writes: --outdir, else $CDK8S_OUTDIR (as ``cdk8s synth`` sets it; with --cdk8s only when it
    lies outside the project), else dist/."""
    if args.outdir is None and getattr(args, "cdk8s", False):
        folder, only = _cdk8s_folder(args)
        return folder if folder is not None and only else args.root / "dist"
    return output_dir(args.root, args.outdir)


def _synth(args: argparse.Namespace) -> int:
    import gc
    from datetime import UTC, datetime

    from fluxplane import synth
    from fluxplane.config.awsdata import fleet_support_warnings
    from fluxplane.errors import ConfigError
    from fluxplane.synth import allocations
    from fluxplane.synth.guard import guard

    root: Path = args.root
    outdir = _outdir(args)
    synth.check_outdir(outdir, root)
    transaction.note(transaction.recover(root, write=not args.check))
    progress = Progress("synth")
    _warn(require_node(root))
    start_runtime()
    with progress.stage("load"), synth.paused_gc():
        plan = synth.load_plan(root)
    for note in plan.notes:
        print(f"note: {note}", file=sys.stderr)
    # said once synth has done its work: after any refusal, never before it
    support = [f"warning: {line}" for line in fleet_support_warnings(plan.fleet, datetime.now(UTC).date())]
    started = time.perf_counter()
    with progress.stage("render") as stage:
        cache = None if args.no_cache else synth.SynthCache.for_root(root, read_only=args.check)
        files = synth.with_kept(plan, synth.render_plan(plan, cache), outdir)
        stage.note(f"{len(files)} files")
    for folder in synth.kept_folders(plan):
        if not any(path.startswith(folder) for path in files):
            path = f"<the repository's path to {outdir.name}>/{posixpath.dirname(folder.rstrip('/'))}"
            writer = (
                f"`flux bootstrap` writes it (management.bootstrap: flux), with --path={path}"
                if plan.fleet.management.bootstrap == "flux"
                else f"your FluxInstance goes there (management.bootstrap: flux-operator), with sync.path: {path}"
            )
            print(f"note: {outdir / folder}/ is empty: {writer}", file=sys.stderr)
    if args.check:
        for line in support:
            print(line, file=sys.stderr)
        with progress.stage("compare"):
            staleness = synth.compare_tree(files, outdir)
            recorded_stale = allocations.stale(root, plan)
        if not staleness.stale and not recorded_stale:
            print(f"{outdir}: up to date ({len(files)} files)")
            return 0
        if recorded_stale:
            print(f"changed: {root / allocations.ALLOCATIONS}")
        for label, paths in (
            ("added", staleness.added),
            ("changed", staleness.changed),
            ("removed", staleness.removed),
        ):
            for path in paths:
                print(f"{label}: {outdir / path}")
        print(f"{outdir}: stale; run 'fluxplane synth' (or 'make synth') and commit the result", file=sys.stderr)
        return EXIT_STALE
    with progress.stage("guard"):
        refused = guard(
            files,
            outdir,
            hub=plan.fleet.management.name,
            replace=args.replace,
            delete=args.delete,
            move=args.move,
        )
    if refused:
        raise ConfigError([*refused, f"{outdir}: nothing written"])
    scratch, only = _cdk8s_folder(args)
    with progress.stage("write"):
        if only:
            # cdk8s synth --stdout: the manifests are printed, the project is left alone
            synth.copy_tree(files, outdir)
        else:
            # The allocations first: a synth stopped in between writes the same ranges next time.
            allocations.write(root, plan)
            synth.write_tree(files, outdir)
            if scratch is not None and os.path.abspath(scratch) != os.path.abspath(outdir):
                synth.copy_tree(files, scratch)
    for line in support:
        print(line, file=sys.stderr)
    # The process ends next: spare the collector's final pass over everything synth built.
    gc.freeze()
    elapsed = time.perf_counter() - started
    print(f"wrote {len(files)} files to {outdir} in {elapsed:.2f}s")
    return 0


#: Exit codes of a command a signal stopped: 128 + the signal's number, what a shell reports for a
#: program the signal ended (a Ctrl-C: 130; SIGTERM: 143; a closed pipe on standard output: 141).
EXIT_INTERRUPTED = 128 + signal.SIGINT
EXIT_TERMINATED = 128 + signal.SIGTERM
EXIT_BROKEN_PIPE = 128 + signal.SIGPIPE


class Terminated(BaseException):
    """SIGTERM, raised in the main thread as Python raises KeyboardInterrupt for SIGINT.

    A BaseException, like KeyboardInterrupt, so that ``except Exception`` does not swallow it while
    every ``finally`` and ``except BaseException`` on the way out still runs.
    """


class _Signals:
    """SIGINT and SIGTERM while main() runs a command.

    Each raises in the main thread (KeyboardInterrupt, Terminated) instead of ending the process on
    the spot, so that the cleanup on the way out runs: the writer's staging folder and its swap back,
    diff's temporary worktree, the project lock. Once one is raised both are ignored, so that a second
    Ctrl-C cannot cut that cleanup short (SIGQUIT and SIGKILL still end the process), and from the
    first one on, unless ``--debug``, standard error is silenced: what the rest of the process says on
    its way out (jsii's Node process, which the same Ctrl-C stopped, and its exit handler) would bury
    main()'s one line. Signals ignored by whoever started fluxplane (``nohup``, a background job) stay
    ignored.

    A signal that arrives while the main thread runs the import machinery itself is raised a moment
    later: an exception there can leave the import locks held, and the thread importing cdk8s
    (fluxplane.node.start_runtime), which Python waits for at exit, waiting on them forever.
    """

    HANDLED = (signal.SIGINT, signal.SIGTERM)
    #: How long a signal that arrived during an import waits before it is tried again, in seconds.
    RETRY = 0.02

    def __init__(self) -> None:
        self.received: int | None = None
        self.debug = False
        #: Standard error as it was before a signal silenced it: where main() prints its line.
        self.stderr: TextIO = sys.stderr
        self._previous: dict[int, Any] = {}

    def install(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return  # only the main thread can set handlers; a caller's thread keeps Python's defaults
        for signum in self.HANDLED:
            previous = signal.getsignal(signum)
            if previous is signal.SIG_IGN or previous is None:
                continue
            self._previous[signum] = previous
            signal.signal(signum, self._handle)

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.received is None:
            self.received = signum
            self.stderr = sys.stderr
            if not self.debug:
                sys.stderr = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 - for the rest of the process
        signum = self.received
        if frame is not None and frame.f_code.co_filename.startswith("<frozen importlib"):
            retry = threading.Timer(self.RETRY, os.kill, (os.getpid(), signum))
            retry.daemon = True
            retry.start()
            return
        self._ignore()
        if signum == signal.SIGINT:
            raise KeyboardInterrupt
        raise Terminated(signal.Signals(signum).name)

    def _ignore(self) -> None:
        for signum in self._previous:
            signal.signal(signum, signal.SIG_IGN)

    def uninstall(self) -> None:
        """Restore the handlers main() replaced; after a signal, ignore them: the process is ending."""
        if self.received is not None:
            self._ignore()
            return
        for signum, previous in self._previous.items():
            signal.signal(signum, previous)


class _StdoutFailed(Exception):
    """Standard output cannot take the command's output: a closed pipe, a full device, a closed descriptor."""

    def __init__(self, error: OSError) -> None:
        super().__init__(error)
        self.error = error


class _Stdout:
    """sys.stdout while main() runs a command: an OSError writing or flushing it becomes _StdoutFailed,
    so that main() tells standard output's failure from a file's (whose OSError a command reports itself)."""

    def __init__(self, stream: TextIO | None) -> None:
        self.stream = stream

    def _open(self) -> TextIO:
        if self.stream is None:  # Python starts with sys.stdout None when descriptor 1 is closed (>&-)
            raise _StdoutFailed(OSError(errno.EBADF, os.strerror(errno.EBADF)))
        return self.stream

    def write(self, text: str) -> int:
        stream = self._open()
        try:
            return stream.write(text)
        except OSError as exc:
            raise _StdoutFailed(exc) from exc

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        if self.stream is None:
            return
        try:
            self.stream.flush()
        except OSError as exc:
            raise _StdoutFailed(exc) from exc

    def __getattr__(self, name: str) -> Any:
        return getattr(self._open(), name)


def _drop_stdout(stream: TextIO | None) -> None:
    """Point the descriptor under ``stream`` at /dev/null, so that Python's flush at exit does not fail a
    second time (what the Python documentation advises after a BrokenPipeError)."""
    if stream is None:
        return
    try:
        descriptor = stream.fileno()
    except (OSError, ValueError):  # not a file (a test's captured output)
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, descriptor)
    finally:
        os.close(devnull)


def _flush_quietly(stream: TextIO | None) -> None:
    """Flush what a failed command printed; if standard output cannot take it, drop it silently."""
    if stream is None:
        return
    try:
        stream.flush()
    except OSError:
        _drop_stdout(stream)


def _stopped_line(args: argparse.Namespace | None, signum: int) -> str:
    """The line for a command a signal stopped, saying what is true of what it writes."""
    word = "interrupted" if signum == signal.SIGINT else "terminated"
    if args is None:
        return word
    if args.command == "synth" and not args.check:
        # synth.write_tree swaps the finished tree in at once and puts the old one back on any exception
        return f"{word}; {_outdir(args)} holds a whole tree: the one it held, or the new one if writing had finished"
    writes = args.command == "schemas" or (args.command == "graph" and args.output is not None)
    if args.command in ("synth", "reference", "packs", "validate", "diff", "graph", "versions") and not writes:
        return f"{word}; nothing written"
    return word


def _report(stderr: TextIO, lines: Iterable[str], failure: BaseException | None, debug: bool) -> None:
    """Print ``lines`` on ``stderr``, after the traceback of ``failure`` with ``--debug``."""
    with contextlib.suppress(OSError, ValueError):  # standard error closed too: nowhere left to say it
        if debug and failure is not None:
            traceback.print_exception(failure, file=stderr)
        for line in lines:
            print(line, file=stderr)
        stderr.flush()


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; its exit code. Bad input, an interruption and a standard output that cannot be
    written each end in a line, not a traceback (``--debug`` adds it); anything else is a bug and raises."""
    signals = _Signals()
    signals.install()
    stdout = sys.stdout
    sys.stdout = cast(TextIO, _Stdout(stdout))
    args: argparse.Namespace | None = None
    failure: BaseException | None = None
    code = 0
    try:
        try:
            args = _parser().parse_args(argv)
        except SystemExit:  # --help, or a usage error: argparse printed, and exits
            sys.stdout.flush()
            raise
        signals.debug = args.debug
        code = _run(args)
        sys.stdout.flush()  # a closed or full standard output fails here, not at exit
    except BaseException as exc:  # sorted out below, once sys.stdout is restored
        failure = exc
    finally:
        sys.stdout = stdout
        signals.uninstall()
    debug = bool(args is not None and args.debug)
    if signals.received is not None:
        # Whatever the signal's exception became on its way out (a git it killed, a jsii error): stopped.
        _flush_quietly(stdout)
        _report(signals.stderr, [_stopped_line(args, signals.received)], failure, debug)
        return EXIT_INTERRUPTED if signals.received == signal.SIGINT else EXIT_TERMINATED
    if failure is None:
        return code
    if isinstance(failure, _StdoutFailed):
        _drop_stdout(stdout)
        if failure.error.errno == errno.EPIPE:
            # The reader left (``| head``): say nothing, as git and the coreutils do.
            _report(sys.stderr, [], failure, debug)
            return EXIT_BROKEN_PIPE
        reason = failure.error.strerror or str(failure.error)
        _report(sys.stderr, [f"standard output: cannot write ({reason}); the output is incomplete"], failure, debug)
        return EXIT_BAD_INPUT
    if isinstance(failure, FluxplaneError):
        _flush_quietly(stdout)
        _report(sys.stderr, [] if debug else failure.problems, failure, debug)
        return EXIT_BAD_INPUT
    raise failure


def _init(args: argparse.Namespace) -> int:
    from fluxplane import scaffold

    folder: Path = args.dir
    written = scaffold.write(folder, scaffold.scaffold(folder, _version()))
    for path in written:
        print(f"wrote {folder / path}")
    print(
        f"next: cd {folder} && python -m venv .venv && .venv/bin/pip install -e '.[test]' && "
        ".venv/bin/fluxplane synth && .venv/bin/pytest --snapshot-update (see README.md)"
    )
    return 0


def _validate(args: argparse.Namespace) -> int:
    from fluxplane import validate

    dist: Path = args.dist if args.dist is not None else args.root / "dist"
    result = validate.run(
        dist, args.crds, kustomize=not args.no_kustomize, changed=args.changed, progress=Progress("validate")
    )
    for line in result.warnings:
        print(line, file=sys.stderr)
    for finding in result.findings:
        print(finding.line())
    if result.coverage.narrowed:
        print(result.coverage.narrowed)
    print(result.coverage.line())
    summary = f"{dist}: {result.documents} documents in {result.files} files, {result.kustomizations} kustomizations"
    if result.findings:
        noun = "finding" if len(result.findings) == 1 else "findings"
        print(f"{summary}: {len(result.findings)} {noun}")
        return EXIT_FINDINGS
    print(f"{summary}: valid")
    return 0


def _pull(args: argparse.Namespace) -> int:
    from fluxplane.validate.pull import pull

    pulled = pull(args.dest, from_cluster=args.from_cluster, context=args.context)
    for path in pulled.written:
        print(path)
    print(f"{pulled.dest}: {len(pulled.written)} CRDs")
    return 0


def _diff(args: argparse.Namespace) -> int:
    from fluxplane import diff
    from fluxplane.diff.report import markdown, text

    root: Path = args.root
    base = diff.resolve(root, args.base)
    _warn(require_node(root))
    report = diff.run(root, base, Progress("diff"))
    sys.stdout.write(markdown(report) if args.format == "markdown" else text(report))
    return 0


def _versions(args: argparse.Namespace) -> int:
    from datetime import UTC, datetime

    from fluxplane import upgrades

    _warn(require_node(args.root))
    clusters = upgrades.project_versions(args.root, datetime.now(UTC).date())
    sys.stdout.write(upgrades.markdown(clusters) if args.format == "markdown" else upgrades.text(clusters))
    return 0


def _run(args: argparse.Namespace) -> int:
    """The command ``args`` names; FluxplaneError for bad input."""
    if args.command in ("synth", "seal", *EDIT_COMMANDS):
        from fluxplane.lock import project_lock

        with project_lock(args.root):
            if args.command == "synth":
                return _synth(args)
            if args.command == "seal":
                return _seal(args)
            return _edit(args)
    if args.command == "packs":
        return _packs(args)
    if args.command == "validate":
        return _validate(args)
    if args.command == "schemas":
        return _pull(args)
    if args.command == "diff":
        return _diff(args)
    if args.command == "graph":
        return graph_command.run(args)
    if args.command == "versions":
        return _versions(args)
    if args.command == "init":
        return _init(args)
    if args.command == "reference":
        from fluxplane.config.reference import markdown

        print(markdown(), end="")
        return 0
    raise AssertionError(f"unhandled command {args.command!r}")


if __name__ == "__main__":
    sys.exit(main())
