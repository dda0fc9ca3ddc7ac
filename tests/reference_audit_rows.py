"""The audit writer's batch-to-steps as it was before session 11, kept as the oracle the
regrouped steps are tested against: every statement where it was queued, so event rows on
either side of one went in separate INSERTs."""

from __future__ import annotations

from typing import Any

from proxy.audit import AuditWriter, row_text
from proxy.store.writer import EventRows, Statement, Step


def reference_rows(writer: AuditWriter, batch: list[Any]) -> list[Step]:
    steps: list[Step] = []
    rows: list[tuple[Any, ...]] = []
    for item in batch:
        if isinstance(item, Statement):
            if rows:
                steps.append(EventRows(rows))
                rows = []
            steps.append(item)
            continue
        text = row_text(item)
        rows.append((item.ts, writer.session_id, writer.server, item.direction, item.kind,
                     item.method, item.rpc_id, item.tool, item.size, item.verdict,
                     item.contract, text.reason, item.decided_by, text.detail, item.latency_ms,
                     item.trace_id, text.payload, text.truncated))
    if rows:
        steps.append(EventRows(rows))
    return steps
