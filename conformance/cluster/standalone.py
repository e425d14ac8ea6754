"""A Spark standalone cluster on 127.0.0.1 from the pip-installed PySpark.

:class:`LocalCluster` starts one master and ``workers`` workers (separate JVMs, 1 core and 1g
each, daemons at -Xmx512m through ``SPARK_DAEMON_MEMORY``), every one on an explicitly chosen
free port of 127.0.0.1 (``SPARK_LOCAL_IP=127.0.0.1``, ``--host``, ``--port``,
``--webui-port``), waits until the master's ``/json/`` lists them all ALIVE, runs
``spark-submit --deploy-mode client`` for a driver script (:meth:`LocalCluster.submit`), and on
:meth:`LocalCluster.stop` kills every process tree it started (:mod:`.processes`). It is a
context manager and also registers itself with ``atexit``, so a failing test, an exception or
Ctrl-C never leaves a JVM behind; every JVM it starts carries ``-Dstreamproof.cluster=<its
directory>`` so :meth:`LocalCluster.leftovers` can find strays by command line too.

Code shipping: the driver, the executors and their Python workers all run the venv's Python
(``PYSPARK_PYTHON`` / ``spark.pyspark.python``) on this one machine, where the project is
installed editable: every process imports the working tree directly, so there is no
``--py-files`` zip (it would be a second copy of the code that could differ from the tree the
driver imports).

For a nemesis :meth:`LocalCluster.processes` lists every live process of the
cluster by role: ``master``, ``worker``, ``executor`` (CoarseGrainedExecutorBackend JVMs),
``python`` (PySpark daemons and workers) and ``driver`` (spark-submit and its Python driver).
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from typing import Any, Sequence

from conformance.cluster import processes as proc

MARKER = "-Dstreamproof.cluster="


class ClusterError(RuntimeError):
    """The cluster could not be started or used (Java missing, a daemon died, a timeout)."""


def spark_home() -> str:
    """The pip-installed PySpark package directory (it has ``bin/spark-class``)."""
    import pyspark

    return os.path.dirname(os.path.abspath(pyspark.__file__))


def java_problem() -> str | None:
    """None when a Java runtime is available, else why not (one line)."""
    java_home = os.environ.get("JAVA_HOME")
    if java_home and os.access(os.path.join(java_home, "bin", "java"), os.X_OK):
        return None
    if shutil.which("java"):
        return None
    return "no Java runtime: Spark's standalone cluster needs 'java' on PATH or JAVA_HOME (Java 17 or 21)"


def free_port() -> int:
    """A TCP port of 127.0.0.1 that is free right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Daemon:
    """One JVM the cluster started: role, ports and its Popen."""

    role: str
    port: int
    webui_port: int
    process: "subprocess.Popen[bytes]"
    log: str


@dataclass
class Submission:
    """One finished ``spark-submit``: exit code, output log, elapsed seconds."""

    returncode: int
    log: str
    elapsed_s: float
    timed_out: bool = False
    leftovers: list[int] = field(default_factory=list)

    def tail(self, lines: int = 30) -> str:
        """The last ``lines`` lines of the driver's output."""
        with open(self.log, encoding="utf-8", errors="replace") as handle:
            return "".join(handle.readlines()[-lines:])


_LIVE: list["LocalCluster"] = []


def _stop_all() -> None:
    for cluster in list(_LIVE):
        cluster.stop()


atexit.register(_stop_all)


class LocalCluster:
    """A standalone master + ``workers`` workers on 127.0.0.1 (module docstring)."""

    def __init__(self, workers: int = 2, *, start_timeout_s: float = 240.0,
                 directory: str | None = None) -> None:
        if workers < 1:
            raise ValueError("a cluster needs at least one worker")
        self.workers = workers
        self.start_timeout_s = start_timeout_s
        self.directory = directory or tempfile.mkdtemp(prefix="streamproof-cluster-")
        self._own_directory = directory is None
        self.daemons: list[Daemon] = []
        self._drivers: list["subprocess.Popen[bytes]"] = []
        self.seen: dict[int, str] = {}
        self.master_port = 0
        self.webui_port = 0
        self.started_s = 0.0

    # -- life cycle ---------------------------------------------------------------------
    def __enter__(self) -> "LocalCluster":
        self.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    @property
    def master_url(self) -> str:
        """``spark://127.0.0.1:PORT``."""
        return f"spark://127.0.0.1:{self.master_port}"

    @property
    def shared_dir(self) -> str:
        """A directory every process of the cluster can read and write (checkpoints, results)."""
        path = os.path.join(self.directory, "shared")
        os.makedirs(path, exist_ok=True)
        return path

    def environment(self) -> dict[str, str]:
        """The environment of every daemon and driver: 127.0.0.1 only, small JVMs, the venv's
        Python for every PySpark process, an empty conf dir so no site config leaks in."""
        env = dict(os.environ)
        conf_dir = os.path.join(self.directory, "conf")
        os.makedirs(conf_dir, exist_ok=True)
        env.update({
            "SPARK_HOME": spark_home(),
            "SPARK_CONF_DIR": conf_dir,
            "SPARK_LOCAL_IP": "127.0.0.1",
            "SPARK_LOCAL_HOSTNAME": "127.0.0.1",
            "SPARK_DAEMON_MEMORY": "512m",
            "SPARK_DAEMON_JAVA_OPTS": f"{MARKER}{self.directory}",
            "SPARK_LOG_DIR": os.path.join(self.directory, "logs"),
            "PYSPARK_PYTHON": sys.executable,
            "PYSPARK_DRIVER_PYTHON": sys.executable,
        })
        env.pop("PYSPARK_SUBMIT_ARGS", None)
        env.pop("PYSPARK_GATEWAY_PORT", None)
        env.pop("STREAMPROOF_SPARK_MASTER", None)
        return env

    def start(self) -> None:
        """Start the master and the workers and wait until every worker is registered."""
        problem = java_problem()
        if problem is not None:
            raise ClusterError(problem)
        began = time.monotonic()
        _LIVE.append(self)
        try:
            self.master_port, self.webui_port = free_port(), free_port()
            self._daemon("master", self.master_port, self.webui_port,
                         ["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                          "--port", str(self.master_port), "--webui-port", str(self.webui_port)])
            for index in range(self.workers):
                port, webui = free_port(), free_port()
                self._daemon(f"worker-{index}", port, webui, self._worker_arguments(index, port, webui))
            self._wait_for_workers(began + self.start_timeout_s)
        except BaseException:
            self.stop()
            raise
        self.started_s = time.monotonic() - began

    def _worker_arguments(self, index: int, port: int, webui: int) -> list[str]:
        work_dir = os.path.join(self.directory, f"worker-{index}")
        os.makedirs(work_dir, exist_ok=True)
        return ["org.apache.spark.deploy.worker.Worker", self.master_url, "--host", "127.0.0.1",
                "--port", str(port), "--cores", "1", "--memory", "1g",
                "--webui-port", str(webui), "--work-dir", work_dir]

    def _daemon(self, role: str, port: int, webui: int, arguments: Sequence[str]) -> None:
        log_path = os.path.join(self.directory, f"{role}.log")
        with open(log_path, "wb") as log:
            process = proc.start_group([os.path.join(spark_home(), "bin", "spark-class"), *arguments],
                                       self.environment(), log, cwd=self.directory)
        self.daemons.append(Daemon(role, port, webui, process, log_path))
        self.seen[process.pid] = role

    def master_state(self) -> dict[str, Any]:
        """The master's ``/json/`` document (workers, applications)."""
        with urllib.request.urlopen(f"http://127.0.0.1:{self.webui_port}/json/", timeout=10) as response:
            value = json.loads(response.read().decode("utf-8"))
        if not isinstance(value, dict):
            raise ClusterError("the master's /json/ is not an object")
        return value

    def alive_workers(self) -> int:
        """How many workers the master lists as ALIVE (0 while it is not answering)."""
        try:
            state = self.master_state()
        except (OSError, ValueError, ClusterError):
            return 0
        return sum(1 for worker in state.get("workers", []) if worker.get("state") == "ALIVE")

    def _wait_for_workers(self, deadline: float) -> None:
        while time.monotonic() < deadline:
            for daemon in self.daemons:
                if daemon.process.poll() is not None:
                    raise ClusterError(f"the {daemon.role} exited with code {daemon.process.returncode} "
                                       f"while starting; its log {daemon.log} ends:\n{_tail(daemon.log)}")
            if self.alive_workers() >= self.workers:
                return
            time.sleep(1.0)
        raise ClusterError(f"{self.workers} workers not registered with the master after "
                           f"{self.start_timeout_s:.0f} s (logs in {self.directory})")

    # -- jobs ---------------------------------------------------------------------------
    def launch(self, script: str, arguments: Sequence[str], *,
               conf: dict[str, str] | None = None) -> "subprocess.Popen[bytes]":
        """Start ``spark-submit --deploy-mode client`` of ``script`` on this cluster and return
        at once (the nemesis kills and relaunches drivers); output in ``driver-<n>.log``."""
        settings = {
            "spark.driver.host": "127.0.0.1",
            "spark.driver.bindAddress": "127.0.0.1",
            "spark.driver.memory": "512m",
            "spark.executor.memory": "512m",
            "spark.executor.cores": "1",
            "spark.ui.enabled": "false",
            "spark.ui.showConsoleProgress": "false",
            "spark.pyspark.python": sys.executable,
            "spark.pyspark.driver.python": sys.executable,
            "spark.driver.extraJavaOptions": f"{MARKER}{self.directory}",
            "spark.executor.extraJavaOptions": f"{MARKER}{self.directory}",
            "spark.sql.shuffle.partitions": str(2 * self.workers),
            "spark.default.parallelism": str(2 * self.workers),
            "spark.python.worker.reuse": "true",
        }
        settings.update(conf or {})
        command = [os.path.join(spark_home(), "bin", "spark-submit"), "--master", self.master_url,
                   "--deploy-mode", "client"]
        for key, value in settings.items():
            command += ["--conf", f"{key}={value}"]
        command += [script, *arguments]
        log_path = os.path.join(self.directory, f"driver-{len(self._drivers)}.log")
        with open(log_path, "wb") as log:
            process = proc.start_group(command, self.environment(), log, cwd=self.directory)
        self._drivers.append(process)
        self.seen[process.pid] = "driver"
        return process

    def driver_log(self, process: "subprocess.Popen[bytes]") -> str:
        """The output log of a driver :meth:`launch` started."""
        return os.path.join(self.directory, f"driver-{self._drivers.index(process)}.log")

    def submit(self, script: str, arguments: Sequence[str], *, timeout_s: float = 900.0,
               conf: dict[str, str] | None = None) -> Submission:
        """Run ``script`` with ``spark-submit --deploy-mode client`` on this cluster and wait.
        The driver's whole process tree is killed on return (it should be gone already)."""
        began = time.monotonic()
        process = self.launch(script, arguments, conf=conf)
        tree = {process.pid}  # followed while it runs: orphans are no longer descendants
        try:
            while process.poll() is None and time.monotonic() - began < timeout_s:
                tree |= proc.descendants([process.pid])
                for pid in tree:
                    self.seen.setdefault(pid, "driver")
                time.sleep(0.5)
        finally:
            timed_out = process.poll() is None
            left = proc.kill_tree(tree)
            proc.reap(process)
        return Submission(process.returncode if process.returncode is not None else -9, self.driver_log(process),
                          time.monotonic() - began, timed_out, sorted(left))

    def restart_worker(self, index: int, timeout_s: float | None = 120.0) -> float:
        """Stop worker ``index`` (its whole tree: the worker JVM, its executors and their Python
        processes; SIGTERM, SIGKILL after the grace period), start a new worker in its place
        (fresh ports: the master may still hold the old address for a moment) and wait until
        the master lists it ALIVE (``timeout_s`` None: do not wait); return the seconds taken."""
        began = time.monotonic()
        role = f"worker-{index}"
        old = next(d for d in self.daemons if d.role == role)
        self.processes()  # record the executors and Python workers that go with it
        proc.kill_tree([old.process.pid], grace_s=5.0)
        proc.reap(old.process)
        self.daemons.remove(old)
        port, webui = free_port(), free_port()
        self._daemon(role, port, webui, self._worker_arguments(index, port, webui))
        if timeout_s is None:
            return time.monotonic() - began
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                workers = self.master_state().get("workers", [])
            except (OSError, ValueError, ClusterError):
                workers = []
            if any(w.get("port") == port and w.get("state") == "ALIVE" for w in workers):
                return time.monotonic() - began
            time.sleep(0.5)
        raise ClusterError(f"the restarted {role} did not register with the master within {timeout_s:.0f} s")

    # -- inspection (for tests and the nemesis) -----------------------------------------
    def processes(self) -> dict[str, list[int]]:
        """Live processes of the cluster by role (module docstring); every pid also goes into
        :attr:`seen` so :meth:`leftovers` checks it after :meth:`stop`."""
        roles: dict[str, list[int]] = {"master": [], "worker": [], "executor": [], "python": [], "driver": []}
        roots = [d.process.pid for d in self.daemons] + [p.pid for p in self._drivers]
        for pid in sorted(set(roots) | proc.descendants(roots)):
            if not proc.alive(pid):
                continue
            role = self._role(pid)
            roles[role].append(pid)
            self.seen[pid] = role
        return roles

    def _role(self, pid: int) -> str:
        for daemon in self.daemons:
            if daemon.process.pid == pid:
                return "master" if daemon.role == "master" else "worker"
        line = proc.command_line(pid)
        if "CoarseGrainedExecutorBackend" in line:
            return "executor"
        if any(driver.pid == pid for driver in self._drivers) or "SparkSubmit" in line:
            return "driver"
        ancestor = proc.parent_of(pid)
        while ancestor is not None and ancestor > 1:
            if any(driver.pid == ancestor for driver in self._drivers):
                return "driver"
            ancestor = proc.parent_of(ancestor)
        return "python"

    def leftovers(self) -> list[int]:
        """Pids of this cluster still alive: every pid it ever saw, plus any process whose
        command line carries this cluster's marker. Empty after :meth:`stop`."""
        left = {pid for pid in self.seen if proc.alive(pid)}
        left |= set(proc.matching(f"{MARKER}{self.directory}"))
        return sorted(left)

    def stop(self) -> None:
        """Kill every process tree of the cluster (drivers first, then workers, then the
        master); idempotent. Removes the directory when the cluster made it itself."""
        if self in _LIVE:
            _LIVE.remove(self)
        if self.daemons or self._drivers:
            self.processes()  # record executors and Python workers before they go
        roots = [p.pid for p in self._drivers] + [d.process.pid for d in reversed(self.daemons)]
        roots += proc.matching(f"{MARKER}{self.directory}")
        proc.kill_tree(roots)
        for process in [*self._drivers, *(d.process for d in self.daemons)]:
            proc.reap(process)
        if self._own_directory and os.path.isdir(self.directory) and not self.leftovers():
            shutil.rmtree(self.directory, ignore_errors=True)


def _tail(path: str, lines: int = 15) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return "".join(handle.readlines()[-lines:])
    except OSError:
        return "(no log)"
