"""Observing a live query: one log line per micro-batch and Prometheus metrics
(docs/production/operating.md, "Logging" and "Metrics").

Every run handle of the live front ends owns an :class:`Observer` (``run.observer``):

* **Logging** through the standard :mod:`logging` module, logger ``streamproof.<front end>``
  (``streamproof.fries``, ``streamproof.oplus``, ``streamproof.dgs``): one INFO line per
  micro-batch - batch id, rows in, rows out, late tuples, duration, backlog - and a WARNING for
  every tuple drop, retry (a batch replayed after a restart) and refused request. Each record
  carries the same values as a dict in its ``fields`` attribute, for a JSON formatter. streamproof
  configures no handler: the application decides where lines go (``logging.basicConfig``).
* **Metrics** with ``prometheus-client`` in a registry of the run's own
  (``run.observer.registry``, never the process-wide default: two runs in one process, or a
  test's, do not collide). Names: :data:`METRICS`. Per-batch values are updated by the batch;
  the status values (committed batch, late tuples, state size, requests, versions) are read from
  :func:`spark_impl.status` at scrape time, so they are the checkpoint's, also after a restart.
  ``run.observer.start_metrics_server(port)`` serves them over HTTP on 127.0.0.1 (the run's
  ``stop()`` stops the server too).
"""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass
from typing import Any, Callable, Iterator

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.exposition import start_http_server
from prometheus_client.registry import Collector

from spark_impl.run_status import REQUEST_STATES, Status

__all__ = ["BatchReport", "METRICS", "Observer"]

METRICS = {
    "streamproof_batch_duration_seconds": "histogram: wall time of a micro-batch's foreachBatch call",
    "streamproof_batches_total": "counter: micro-batches handled by this driver (label replayed: true/false)",
    "streamproof_input_rows_total": "counter: rows the micro-batches brought in",
    "streamproof_output_rows_total": "counter: rows delivered to the sink (Fries, DGS: with a sink; O+: emitted)",
    "streamproof_backlog": "gauge: work received and not yet committed or delivered after the last batch "
                           "(Fries: input tuples not committed; O+: committed batches not delivered; "
                           "DGS: events held in the mailboxes, waiting for a heartbeat, the watermark or a dependency)",
    "streamproof_warnings_total": "counter: WARNING lines by kind (late, replay, refused)",
    "streamproof_committed_batch": "gauge: the last committed batch (status)",
    "streamproof_late_tuples": "gauge: late tuples since the query started, dropped or sent to a late sink "
                               "(status, from the checkpoint)",
    "streamproof_state_bytes": "gauge: bytes of the committed state files (status)",
    "streamproof_requests": "gauge: requests by state: pending, applied, rejected, lost (status)",
    "streamproof_operator_version": "gauge, 1 per operator (labels operator, version): the active version (status)",
}
"""Every metric name with its type and meaning (the documented contract)."""


@dataclass(frozen=True)
class BatchReport:
    """What one micro-batch did: ``rows_out`` None when the front end cannot count it (no
    sink); ``late`` tuples this batch dropped; ``backlog`` as :data:`METRICS` says."""

    batch: int
    rows_in: int
    rows_out: int | None
    late: int
    duration_s: float
    backlog: int
    replayed: bool = False


class Observer:
    """The log and metrics of one run (module docstring). ``status`` (set by the run handle)
    gives the run's :class:`~spark_impl.status.Status` at scrape time."""

    def __init__(self, front_end: str) -> None:
        self.front_end = front_end
        self.log = logging.getLogger(f"streamproof.{front_end}")
        self.registry = CollectorRegistry()
        self.status: Callable[[], Status] | None = None
        self.server: Any = None
        self.port: int | None = None
        self.last: BatchReport | None = None
        self.duration = Histogram("streamproof_batch_duration_seconds", METRICS["streamproof_batch_duration_seconds"],
                                  registry=self.registry,
                                  buckets=(0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0))
        self.batches = Counter("streamproof_batches", METRICS["streamproof_batches_total"], ["replayed"],
                               registry=self.registry)
        self.rows_in = Counter("streamproof_input_rows", METRICS["streamproof_input_rows_total"], registry=self.registry)
        self.rows_out = Counter("streamproof_output_rows", METRICS["streamproof_output_rows_total"],
                                registry=self.registry)
        self.backlog = Gauge("streamproof_backlog", METRICS["streamproof_backlog"], registry=self.registry)
        self.warnings = Counter("streamproof_warnings", METRICS["streamproof_warnings_total"], ["kind"],
                                registry=self.registry)
        self.registry.register(_StatusCollector(self))

    def batch(self, report: BatchReport) -> None:
        """Record a micro-batch: the INFO line, the per-batch metrics, and a WARNING when it
        was a replay (a batch with late tuples is counted under ``kind="late"``; its WARNING
        line is the late policy's)."""
        self.last = report
        self.duration.observe(report.duration_s)
        self.batches.labels(replayed=str(report.replayed).lower()).inc()
        self.rows_in.inc(report.rows_in)
        if report.rows_out is not None:
            self.rows_out.inc(report.rows_out)
        self.backlog.set(report.backlog)
        fields = {"front_end": self.front_end, **asdict(report)}
        self.log.info("batch %d: %d rows in, %s rows out, %d late, %.3f s, backlog %d", report.batch, report.rows_in,
                      "-" if report.rows_out is None else report.rows_out, report.late, report.duration_s,
                      report.backlog, extra={"fields": fields})
        if report.late:
            # the front end's late policy logs the one WARNING line of the batch, naming the
            # first late tuple and where it went (spark_impl.lateness); counted here
            self.warnings.labels(kind="late").inc()
        if report.replayed:
            self.warn("replay", f"batch {report.batch} replayed after a restart: it was committed before, "
                                "not computed again", batch=report.batch)

    def warn(self, kind: str, message: str, **fields: Any) -> None:
        """One WARNING line of ``kind`` (``late``, ``replay``, ``refused``), counted."""
        self.warnings.labels(kind=kind).inc()
        self.log.warning("%s", message, extra={"fields": {"front_end": self.front_end, "kind": kind, **fields}})

    def start_metrics_server(self, port: int = 0, addr: str = "127.0.0.1") -> int:
        """Serve this run's metrics over HTTP (``/metrics``) on ``addr:port`` (port 0: a free
        one); returns the port. Loopback by default: exposing it is the operator's choice."""
        if self.server is not None:
            raise RuntimeError(f"the metrics server already runs on port {self.port}")
        server, _ = start_http_server(port, addr, registry=self.registry)
        self.server, self.port = server, int(server.server_port)
        return self.port

    def close(self) -> None:
        """Stop the metrics server, if any (the run's ``stop()`` calls it)."""
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
            self.server = None


class _StatusCollector(Collector):
    """The status metrics, read when scraped (a failing read leaves them out and is logged)."""

    def __init__(self, observer: Observer) -> None:
        self.observer = observer

    def collect(self) -> Iterator[Metric]:
        source = self.observer.status
        if source is None:
            return
        try:
            status = source()
        except Exception as error:  # noqa: BLE001 - a scrape must not fail on a busy store
            self.observer.log.warning("status unreadable for metrics: %s: %s", type(error).__name__, error)
            return
        yield from status_metrics(status)


def status_metrics(status: Status) -> Iterator[Metric]:
    """The status part of :data:`METRICS` for ``status``."""
    yield GaugeMetricFamily("streamproof_committed_batch", METRICS["streamproof_committed_batch"],
                            value=status.committed_batch)
    yield GaugeMetricFamily("streamproof_late_tuples", METRICS["streamproof_late_tuples"], value=status.late)
    if status.state_bytes is not None:
        yield GaugeMetricFamily("streamproof_state_bytes", METRICS["streamproof_state_bytes"], value=status.state_bytes)
    requests = GaugeMetricFamily("streamproof_requests", METRICS["streamproof_requests"], labels=["state"])
    for state in REQUEST_STATES:
        requests.add_metric([state], status.count(state))
    yield requests
    versions = GaugeMetricFamily("streamproof_operator_version", METRICS["streamproof_operator_version"],
                                 labels=["operator", "version"])
    for operator, version in sorted(status.versions.items()):
        versions.add_metric([operator, version], 1)
    yield versions
