"""HTTP reads with a wall-clock deadline, not a per-read time-out.

A client's ``timeout`` bounds each socket operation: a server that accepts and never
answers is caught, but one that drips a byte every half second never is (every read
succeeds). The helpers here bound the whole request, answer included:

- before the answer's headers, every operation gets the time left as its time-out;
- while the body is read, a watchdog shuts the connection's socket down at the
  deadline (a blocked read returns at once) and the read loop checks the clock between
  chunks; past the deadline the request fails as a time-out of the client's own kind
  (``httpx.ReadTimeout``, ``requests.exceptions.ReadTimeout``), so callers map it as
  they map any time-out.

:func:`httpx_get` serves the httpx clients (Alertmanager, Loki); :class:`DeadlineSession`
is a ``requests.Session`` whose every request is bounded by its ``timeout`` taken as a
wall-clock limit (Prometheus, through prometheus-api-client); :func:`urllib3_body` reads
a urllib3 answer by a deadline (the Kubernetes API) and :func:`bounded_urlopen` makes a
urllib3 pool do so (Elasticsearch). Nothing heavy is imported at module
load.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import httpx
    import requests

CHUNK = 64 << 10
MIN_S = 0.05  # the shortest time-out a read is given


class _Watchdog:
    """Shuts ``sock`` down at ``deadline`` (a ``time.monotonic()`` value) unless disarmed."""

    def __init__(self, deadline: float) -> None:
        self.deadline = deadline
        self.fired = False
        self._timer: threading.Timer | None = None
        self._lock = threading.Lock()

    def arm(self, sock: Any) -> None:
        if not isinstance(sock, socket.socket):
            return

        def fire() -> None:
            with self._lock:
                if self._timer is None:
                    return
                self.fired = True
            with contextlib.suppress(OSError, ValueError):
                socket.socket.shutdown(sock, socket.SHUT_RDWR)

        timer = threading.Timer(max(self.deadline - time.monotonic(), 0.0), fire)
        timer.daemon = True
        timer.name = "opsmate-wallclock"
        with self._lock:
            self._timer = timer
        timer.start()

    def disarm(self) -> None:
        with self._lock:
            timer, self._timer = self._timer, None
        if timer is not None:
            timer.cancel()


def remaining(deadline: float) -> float:
    """Seconds left before ``deadline``, at least :data:`MIN_S`."""
    return max(deadline - time.monotonic(), MIN_S)


def _read_all(
    chunks: Iterator[bytes],
    deadline: float,
    on_late: Callable[[], Exception],
    max_bytes: int | None,
    on_large: Callable[[], Exception] | None,
) -> bytes:
    out = bytearray()
    for chunk in chunks:
        out += chunk
        if max_bytes is not None and len(out) > max_bytes and on_large is not None:
            raise on_large()
        if time.monotonic() > deadline:
            raise on_late()
    return bytes(out)


# -- httpx ----------------------------------------------------------------------------
def httpx_get(
    http: httpx.Client,
    url: str,
    *,
    deadline: float,
    params: Any = None,
    headers: dict[str, str] | None = None,
    max_bytes: int | None = None,
    on_large: Callable[[], Exception] | None = None,
) -> httpx.Response:
    """``GET url`` on ``http`` finished by ``deadline``, body read (``resp.content`` set).

    Raises ``httpx.ReadTimeout`` past the deadline (``httpx.TimeoutException`` as any
    time-out of httpx), ``on_large()`` when the body passes ``max_bytes``."""
    import httpx

    req = http.build_request("GET", url, params=params, headers=headers)
    req.extensions["timeout"] = httpx.Timeout(remaining(deadline)).as_dict()
    watchdog = _Watchdog(deadline)

    def late() -> Exception:
        return httpx.ReadTimeout(f"no complete answer within the deadline from {url}", request=req)

    resp = http.send(req, stream=True)
    try:
        stream = resp.extensions.get("network_stream")
        if stream is not None:
            with contextlib.suppress(Exception):
                watchdog.arm(stream.get_extra_info("socket"))
        try:
            body = _read_all(resp.iter_bytes(CHUNK), deadline, late, max_bytes, on_large)
        except (httpx.TransportError, httpx.StreamError) as exc:
            if watchdog.fired or time.monotonic() >= deadline:
                raise late() from exc
            raise
        resp._content = body  # what ``resp.content`` / ``resp.json()`` read
    finally:
        watchdog.disarm()
        resp.close()
    return resp


# -- requests -------------------------------------------------------------------------
def _deadline_of(timeout: Any) -> float | None:
    if isinstance(timeout, int | float) and not isinstance(timeout, bool):
        return time.monotonic() + float(timeout)
    if isinstance(timeout, tuple) and timeout and all(isinstance(t, int | float) for t in timeout):
        return time.monotonic() + float(max(timeout))
    return None


def deadline_session() -> requests.Session:
    """A :class:`requests.Session` whose requests end within their ``timeout`` seconds of
    wall-clock time, answer included (see the module docstring)."""
    import requests

    class DeadlineSession(requests.Session):
        def send(self, request: Any, **kwargs: Any) -> Any:
            deadline = _deadline_of(kwargs.get("timeout"))
            if deadline is None or kwargs.get("stream"):
                return super().send(request, **kwargs)
            kwargs["stream"] = True
            resp = super().send(request, **kwargs)
            _load_within(resp, deadline, request.url)
            return resp

    return DeadlineSession()


def _load_within(resp: Any, deadline: float, url: str) -> None:
    """Read ``resp``'s body into ``resp._content`` by ``deadline`` (ReadTimeout past it)."""
    import requests

    def late() -> Exception:
        return requests.exceptions.ReadTimeout(
            f"no complete answer within the deadline from {url}", response=resp
        )

    def cut(exc: Exception) -> Exception:
        return requests.exceptions.ConnectionError(f"{url}: the answer was cut: {exc}")

    try:
        resp._content = urllib3_body(resp.raw, deadline, late=late, cut=cut)
    finally:
        resp._content_consumed = True


# -- urllib3 (requests, the kubernetes client) ----------------------------------------
def urllib3_body(
    raw: Any,
    deadline: float,
    *,
    late: Callable[[], Exception] | None = None,
    cut: Callable[[Exception], Exception] | None = None,
) -> bytes:
    """The body of a urllib3 response opened with ``preload_content=False``, read by
    ``deadline``: past it ``late()`` (default ``TimeoutError``) is raised; a connection
    that breaks before raises ``cut(exc)`` (default: the error itself)."""
    watchdog = _Watchdog(deadline)
    conn = getattr(raw, "connection", None) or getattr(raw, "_connection", None)
    with contextlib.suppress(Exception):
        watchdog.arm(getattr(conn, "sock", None))

    def too_late() -> Exception:
        return (
            late() if late is not None else TimeoutError("no complete answer within the deadline")
        )

    try:
        return _read_all(raw.stream(CHUNK, decode_content=True), deadline, too_late, None, None)
    except Exception as exc:
        if watchdog.fired or time.monotonic() >= deadline:
            raise too_late() from exc
        if cut is not None and not isinstance(exc, TimeoutError):
            raise cut(exc) from exc
        raise
    finally:
        watchdog.disarm()
        with contextlib.suppress(Exception):
            raw.release_conn()


def bounded_urlopen(pool: Any) -> None:
    """Make every ``pool.urlopen`` (a urllib3 connection pool) finish within its
    ``timeout`` of wall-clock time, answer included: the body is read by the deadline
    (``urllib3.exceptions.ReadTimeoutError`` past it) and kept as the response's data."""
    import urllib3

    original = pool.urlopen

    def urlopen(method: str, url: str, *args: Any, **kwargs: Any) -> Any:
        timeout = kwargs.get("timeout")
        if isinstance(timeout, urllib3.Timeout):
            timeout = timeout.total if timeout.total is not None else timeout.read_timeout
        deadline = _deadline_of(timeout)
        if deadline is None or kwargs.get("preload_content") is False:
            return original(method, url, *args, **kwargs)
        kwargs["preload_content"] = False
        resp = original(method, url, *args, **kwargs)

        def late() -> Exception:
            return urllib3.exceptions.ReadTimeoutError(pool, url, "no complete answer in time")

        resp._body = urllib3_body(resp, deadline, late=late)
        return resp

    pool.urlopen = urlopen
