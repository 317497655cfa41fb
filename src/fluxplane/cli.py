"""The ``fluxplane`` command. The only place that catches FluxplaneError and picks the exit code.

Exit codes: 0 success; 1 ``synth --check`` found dist/ stale, or ``validate`` found something; 2 bad
input (every problem printed, one per line, no traceback, dist/ untouched), and a standard output that
cannot be written (full, closed: one line); 3 ``plan --fail-on`` found what it names in the plan (printed
first); 130 and 143 stopped by SIGINT (Ctrl-C) or SIGTERM, after the cleanup on the way out, with one
line; 141 standard output is a pipe whose reader left (``| head``), silently, as a shell reports git or
cat stopped by the closed pipe. Anything else is a bug and keeps its traceback; ``--debug`` shows the
traceback of the handled cases too.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import gc
import os
import signal
import sys
import threading
import traceback
from collections.abc import Iterable, Sequence
from pathlib import Path
from types import FrameType
from typing import Any, TextIO, cast

from fluxplane.commands import (
    Command,
    aws_setup,
    cdk8s,
    diff,
    edit,
    graph,
    init,
    installed_version,
    packs,
    plan,
    reference,
    seal,
    sealing_key,
    site,
    synth,
    validate,
    versions,
)
from fluxplane.errors import FluxplaneError
from fluxplane.system.lock import project_lock

#: The commands, in the order ``fluxplane --help`` lists them.
COMMANDS: tuple[Command, ...] = (
    synth,
    cdk8s,
    init,
    reference,
    seal,
    sealing_key,
    edit,
    packs,
    validate,
    diff,
    plan,
    versions,
    graph,
    site,
    aws_setup,
)
_BY_NAME: dict[str, Command] = {name: command for command in COMMANDS for name in command.NAMES}

#: ``synth --check``: dist/ is stale (the command's own code, named here with the others).
EXIT_STALE = synth.EXIT_STALE
#: Bad input, and a standard output that cannot be written.
EXIT_BAD_INPUT = 2
#: ``plan --fail-on``: the plan holds what the option names (the command's own code, named here with the others).
EXIT_GATED = plan.EXIT_GATED


def build_parser() -> argparse.ArgumentParser:
    """The CLI's parser: every command and option (the documentation's command reference walks it)."""
    parser = argparse.ArgumentParser(
        prog="fluxplane", description="Synthesize a Flux and Crossplane fleet repository from environments/."
    )
    parser.add_argument(
        "--root", type=Path, default=Path("."), help="project folder holding environments/ (default: .)"
    )
    parser.add_argument(
        "--debug", action="store_true", help="on an error, show the full traceback (with the error's causes)"
    )
    parser.add_argument("--version", action="version", version=f"fluxplane {installed_version()}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        command.register(commands)
    return parser


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
    (fluxplane.system.node.start_runtime), which Python waits for at exit, waiting on them forever.
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
    what = _BY_NAME[args.command].stopped(args)
    return f"{word}; {what}" if what else word


def _report(stderr: TextIO, lines: Iterable[str], failure: BaseException | None, debug: bool) -> None:
    """Print ``lines`` on ``stderr``, after the traceback of ``failure`` with ``--debug``."""
    with contextlib.suppress(OSError, ValueError):  # standard error closed too: nowhere left to say it
        if debug and failure is not None:
            traceback.print_exception(failure, file=stderr)
        for line in lines:
            print(line, file=stderr)
        stderr.flush()


def entry() -> int:
    """The ``fluxplane`` program: :func:`main` on the process's arguments, in a process that ends next. Everything a
    command built is kept from the collector's final pass over it, which takes longer than the run's own ending on
    a large fleet (most of a second at 1,000 clusters); the objects are freed with the process all the same."""
    code = main()
    gc.freeze()
    return code


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
            args = build_parser().parse_args(argv)
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


def _run(args: argparse.Namespace) -> int:
    """The command ``args`` names; FluxplaneError for bad input."""
    command = _BY_NAME[args.command]
    if not command.LOCKS_PROJECT:
        return command.run(args)
    with project_lock(args.root):
        return command.run(args)


if __name__ == "__main__":
    sys.exit(main())
