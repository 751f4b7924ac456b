"""Log analysis shared by every log source and the engine: no I/O, no clients.

- :mod:`.fields`: which record fields hold the time, level, message, service... (config
  ``logs.fields``), and :class:`~.fields.ParsedLine`.
- :mod:`.parse`: one record or text line into a :class:`~.fields.ParsedLine` (JSON, logfmt,
  klog, Python/Java/Go/nginx shapes; levels inferred from content when none is printed).
- :mod:`.templates`: Drain-style template mining of messages.
- :mod:`.signals`: what a message says (a dependency unreachable, auth refused, disk full...).
- :mod:`.stats`: ``log_stats`` grouping (levels, timeline, templates, rare errors,
  latency and status codes) over parsed records.
- :mod:`.podlines`: pod log lines as ``pod_logs`` records.

Elasticsearch (:mod:`opsmate.tools.elasticsearch`), Loki (:mod:`opsmate.tools.loki`),
the Kubernetes API and bundle replay all shape logs with these, so a question gets the
same answer whichever source holds the records.
"""
