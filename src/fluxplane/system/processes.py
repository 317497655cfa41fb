"""Child processes run many at a time from a thread pool, and ended at once when the caller is stopped.

validate, diff and plan build folders with ``kubectl kustomize``, one process per folder, several at a time on
a thread pool. A SIGINT or SIGTERM is raised in the main thread (fluxplane.cli), where it would only end the
wait for the results: a thread pool waits for the jobs its threads run, and those wait for their processes.
So when the caller leaves :meth:`Processes.map` by an exception (a signal, or a job's error), the jobs not
started yet are cancelled, the processes running are ended, and only then are the threads waited for; the
caller's cleanup (a temporary tree) follows at once. The same holds for one process run by the main thread
itself (:meth:`Processes.run` outside ``map``).

The kernel hands a process's signal to any of its threads that does not block it, and Python runs the handler
in the main thread only, the next time that thread runs: a main thread waiting with no end (on a lock, in a
select) for a build whose thread took the signal would hear of it only when the build ends. So the main thread
never waits longer than :data:`POLL` at a time.

Each process is started in a process group of its own (a terminal's Ctrl-C does not reach it then; what it
starts in turn is ended with it) and ended by group: SIGTERM, then SIGKILL to those still running after
:data:`GRACE`. Once stopped, a ``Processes`` ends any process started after, at once.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")

#: How long a process has to end after SIGTERM before it gets SIGKILL, in seconds.
GRACE = 0.5
#: The longest the main thread waits at a time for another thread or a process, in seconds: how late, at most,
#: it hears of a signal another thread took (module docstring).
POLL = 0.1


def cores() -> int:
    """How many cores this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def _signal_group(process: subprocess.Popen[str], signum: int) -> None:
    if process.returncode is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):  # the group has ended already
            os.killpg(process.pid, signum)


def _result(future: Future[Result]) -> Result:
    """The result of ``future``, once done, waited for :data:`POLL` at a time."""
    while not future.done():
        wait((future,), timeout=POLL)
    return future.result()


class Processes:
    """Processes started by :meth:`run` from the threads of :meth:`map` (``workers`` at a time)."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self._lock = threading.Lock()
        self._running: set[subprocess.Popen[str]] = set()
        self._stopped = False

    def run(self, args: Sequence[str]) -> subprocess.CompletedProcess[str]:
        """``args`` run to its end, its output captured as text (what ``subprocess.run`` with
        ``capture_output=True, text=True`` returns)."""
        with subprocess.Popen(
            args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, process_group=0
        ) as process:
            try:
                with self._lock:
                    self._running.add(process)
                    stopped = self._stopped
                if stopped:
                    _signal_group(process, signal.SIGKILL)
                while True:
                    try:
                        stdout, stderr = process.communicate(timeout=POLL)
                        break
                    except subprocess.TimeoutExpired:  # it goes on where it was: nothing read is lost
                        continue
            except BaseException:  # a signal raised in this thread, the main one
                self.stop()
                raise
            finally:
                with self._lock:
                    self._running.discard(process)
        return subprocess.CompletedProcess(list(args), process.returncode, stdout, stderr)

    def map(self, job: Callable[[Item], Result], items: Iterable[Item]) -> list[Result]:
        """``job`` of each of ``items`` on the pool's threads, the results in order (module docstring)."""
        pool = ThreadPoolExecutor(max_workers=self.workers)
        try:
            futures = [pool.submit(job, item) for item in items]
            return [_result(future) for future in futures]
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)
            self.stop()
            raise
        finally:
            pool.shutdown(wait=True)

    def stop(self) -> None:
        """End the processes running, SIGTERM then SIGKILL after GRACE, and any started from now on."""
        with self._lock:
            self._stopped = True
            running = list(self._running)
        for process in running:
            _signal_group(process, signal.SIGTERM)
        deadline = time.monotonic() + GRACE
        for process in running:
            try:
                process.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                _signal_group(process, signal.SIGKILL)
