"""Incident bundles out: record what an investigation read, and write it as a bundle.

- :mod:`opsmate.capture.recorder`: :class:`~opsmate.capture.recorder.Recorder`, attached
  to every executor's registry by :func:`opsmate.agent.session.sources.open_sources`; it keeps the
  raw answers of the sources (Kubernetes objects as the API server sent them, log records,
  PromQL results with their exact query text, alerts) or, for a bundle replay, which parts
  of the bundle the calls read.
- :mod:`opsmate.capture.live_hooks` / :mod:`opsmate.capture.replay_reads`: how the
  recorder sees those reads (at the source-client level, before any shaping).
- :mod:`opsmate.capture.convert`: raw reads into the parts of an ``opsmate-bundle/v1``.
- :mod:`opsmate.capture.writer`: redaction, then an atomic ``.tar.gz`` (or directory).
- :mod:`opsmate.capture.save`: ``diagnose --save-bundle`` and the TUI's save as bundle.
- :mod:`opsmate.capture.snapshot`: ``opsmate snapshot``, a capture before any question.
"""
