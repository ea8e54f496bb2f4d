"""`spark:local`: a Spark Connect server on this machine, started from the pyspark package.

pyspark >= 4.0 ships the Spark jars including spark-connect, so no download is needed; Java 17
must be on PATH (Debian: openjdk-17-jre-headless). The server runs in the foreground of a child
process we own (spark-submit --class SparkConnectServer) and is stopped by LocalSpark.stop(),
at interpreter exit at the latest.
"""
from __future__ import annotations

import atexit
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ..errors import TraceExplorerError

SERVER_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"


class WarehouseUnavailable(TraceExplorerError):
    """The warehouse engine cannot be reached or started."""


def spark_home() -> Path:
    """The pyspark package folder (its bin/spark-submit and jars/). Raises WarehouseUnavailable
    when pyspark (the `spark` extra) is not installed or ships no Spark Connect server."""
    try:
        import pyspark
    except ImportError:
        raise WarehouseUnavailable("the Spark client is not installed: pip install "
                                   "'trace-explorer[spark]'") from None
    home = Path(pyspark.__file__).parent
    if not (home / "bin" / "spark-submit").exists() or not list((home / "jars").glob("spark-connect_*.jar")):
        raise WarehouseUnavailable(f"pyspark {pyspark.__version__} at {home} ships no Spark Connect "
                                   "server (pyspark >= 4.0 does): spark:local cannot start one")
    return home


def java_missing() -> str | None:
    """Why Java cannot run Spark here (None when `java` is on PATH or JAVA_HOME is set)."""
    if os.environ.get("JAVA_HOME") and Path(os.environ["JAVA_HOME"], "bin", "java").exists():
        return None
    if shutil.which("java"):
        return None
    return "no Java runtime: install Java 17 (Debian: apt-get install openjdk-17-jre-headless)"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LocalSpark:
    """A Spark Connect server child process on 127.0.0.1:port. url is its sc:// address."""

    def __init__(self, port: int | None = None, cores: int = 2, memory: str = "1g"):
        self.port = port or _free_port()
        self.cores, self.memory = cores, memory
        self.proc: subprocess.Popen | None = None
        self.log_dir = Path(tempfile.mkdtemp(prefix="te-spark-"))

    @property
    def url(self) -> str:
        return f"sc://127.0.0.1:{self.port}"

    def start(self, timeout_s: float = 300.0, cancelled=None) -> "LocalSpark":
        """Start the server and wait until its port accepts connections. Raises
        WarehouseUnavailable (with the end of the server log) when it exits or times out."""
        home = spark_home()
        why = java_missing()
        if why:
            raise WarehouseUnavailable(why)
        env = {**os.environ, "SPARK_HOME": str(home), "SPARK_LOG_DIR": str(self.log_dir),
               "SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_PYTHON": sys.executable}
        cmd = [str(home / "bin" / "spark-submit"), "--class", SERVER_CLASS,
               "--name", "trace-explorer spark:local", "--master", f"local[{self.cores}]",
               "--driver-memory", self.memory,
               "--conf", f"spark.connect.grpc.binding.port={self.port}",
               "--conf", "spark.connect.grpc.binding.address=127.0.0.1",
               "--conf", "spark.ui.enabled=false",
               "--conf", "spark.sql.shuffle.partitions=4",
               "--conf", f"spark.sql.warehouse.dir={self.log_dir / 'warehouse'}",
               "--conf", f"spark.driver.extraJavaOptions=-Dderby.system.home={self.log_dir}",
               "spark-internal"]
        log = open(self.log_dir / "server.log", "wb")
        self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env,
                                     cwd=self.log_dir, start_new_session=True)
        atexit.register(self.stop)
        t0 = time.monotonic()
        while time.monotonic() - t0 < timeout_s:
            if self.proc.poll() is not None:
                raise WarehouseUnavailable(f"the local Spark Connect server exited "
                                           f"({self.proc.returncode}): {self.log_tail()}")
            if cancelled is not None and cancelled():
                self.stop()
                raise WarehouseUnavailable("starting the local Spark Connect server was cancelled")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return self
            except OSError:
                time.sleep(0.5)
        self.stop()
        raise WarehouseUnavailable(f"the local Spark Connect server did not open port {self.port} "
                                   f"within {timeout_s:.0f} s: {self.log_tail()}")

    def log_tail(self, n: int = 6) -> str:
        try:
            lines = (self.log_dir / "server.log").read_text(errors="replace").splitlines()
        except OSError:
            return "(no log)"
        return " | ".join(ln for ln in lines if "WARN" not in ln)[-1200:] or " | ".join(lines[-n:])

    def stop(self) -> None:
        """Stop the server (SIGTERM to its process group, then SIGKILL after 20 s)."""
        p, self.proc = self.proc, None
        if p is None or p.poll() is not None:
            return
        import signal
        try:
            os.killpg(p.pid, signal.SIGTERM)
            p.wait(timeout=20)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        shutil.rmtree(self.log_dir, ignore_errors=True)
