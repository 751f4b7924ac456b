"""Requests to the Kubernetes API that can be stopped: on Ctrl-C and when the process ends.

The executor runs each tool call in a daemon thread and stops waiting for it at its
time-out or the task's deadline; the request itself goes on. A request still blocked
on a socket when the interpreter shuts down wakes up during finalization, and the
process dies with SIGABRT ("Fatal Python error: Aborted", exit 134) after the report
was printed; a Ctrl-C waits for the request to time out (tens of seconds).

This module tracks the sockets of the client's connections (registered before they
connect) and the threads inside a request. :func:`abort_inflight` shuts those sockets
down, so every blocked connect, send or receive returns at once and the request fails
as ``interrupted``. It runs:

- at exit (``atexit``), followed by a short join of the threads still in a request, so
  no request outlives the interpreter;
- on Ctrl-C, through a SIGINT handler that stops the requests in flight and then does
  what the previous handler did (raise KeyboardInterrupt). It is installed once, from
  the main thread, and only over Python's default handler.

Nothing here changes what is sent: only how a connection is opened and closed.
"""

from __future__ import annotations

import atexit
import contextlib
import signal
import socket
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from typing import Any

JOIN_AT_EXIT_S = 2.0

_lock = threading.Lock()
_sockets: weakref.WeakSet[socket.socket] = weakref.WeakSet()
_threads: dict[int, threading.Thread] = {}
_generation = 0
_closing = False
_hooked = False


class Interrupted(Exception):
    """A request stopped by :func:`abort_inflight` (Ctrl-C or the process ending)."""


def _track(sock: Any) -> None:
    if isinstance(sock, socket.socket):
        with _lock:
            _sockets.add(sock)


def _connection_classes() -> tuple[type[Any], type[Any]]:
    """urllib3 pool classes whose connections register their sockets before connecting."""
    from urllib3.connection import HTTPConnection, HTTPSConnection
    from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
    from urllib3.exceptions import ConnectTimeoutError, NameResolutionError, NewConnectionError
    from urllib3.util.connection import allowed_gai_family

    class _Tracked:
        def _new_conn(self: Any) -> socket.socket:
            """urllib3's create_connection, with the socket registered before connect()."""
            host = self._dns_host.strip("[]")
            err: OSError | None = None
            try:
                infos = socket.getaddrinfo(
                    host, self.port, allowed_gai_family(), socket.SOCK_STREAM
                )
            except socket.gaierror as e:
                raise NameResolutionError(self.host, self, e) from e
            for af, socktype, proto, _, sa in infos:
                sock = socket.socket(af, socktype, proto)
                _track(sock)
                try:
                    for opt in self.socket_options or ():
                        sock.setsockopt(*opt)
                    if isinstance(self.timeout, int | float):
                        sock.settimeout(self.timeout)
                    if self.source_address:
                        sock.bind(self.source_address)
                    sock.connect(sa)
                    return sock
                except TimeoutError as e:
                    sock.close()
                    raise ConnectTimeoutError(
                        self,
                        f"Connection to {self.host} timed out. (connect timeout={self.timeout})",
                    ) from e
                except OSError as e:
                    err = e
                    sock.close()
            raise NewConnectionError(self, f"Failed to establish a new connection: {err}")

        def connect(self: Any) -> None:
            super().connect()  # type: ignore[misc]
            _track(getattr(self, "sock", None))  # the TLS socket wrapping the registered one

    class TrackedHTTP(_Tracked, HTTPConnection):
        pass

    class TrackedHTTPS(_Tracked, HTTPSConnection):
        pass

    class Pool(HTTPConnectionPool):
        ConnectionCls = TrackedHTTP

    class PoolS(HTTPSConnectionPool):
        ConnectionCls = TrackedHTTPS

    return Pool, PoolS


_POOLS: tuple[type[Any], type[Any]] | None = None


def install(api_client: Any) -> None:
    """Make the connections of a kubernetes ``ApiClient`` abortable (no-op when its pool
    manager is not a plain urllib3 PoolManager / ProxyManager)."""
    global _POOLS
    import urllib3

    manager = getattr(getattr(api_client, "rest_client", None), "pool_manager", None)
    if manager is None or type(manager) not in (urllib3.PoolManager, urllib3.ProxyManager):
        return
    if _POOLS is None:
        _POOLS = _connection_classes()
    manager.pool_classes_by_scheme = {"http": _POOLS[0], "https": _POOLS[1]}
    manager.clear()
    hook_sigint()


@contextlib.contextmanager
def tracked() -> Iterator[Callable[[], bool]]:
    """Mark the current thread as inside a request; yields ``aborted()``: whether
    :func:`abort_inflight` ran since. Raises :class:`Interrupted` once the process is ending."""
    if _closing:
        raise Interrupted("the process is ending")
    me = threading.current_thread()
    with _lock:
        gen = _generation
        _threads[id(me)] = me
    try:
        yield lambda: _generation != gen
    finally:
        with _lock:
            _threads.pop(id(me), None)


def abort_inflight() -> int:
    """Shut down every tracked connection: requests blocked on them fail at once.
    Returns how many threads were inside a request."""
    global _generation
    with _lock:
        _generation += 1
        socks = list(_sockets)
        busy = len(_threads)
    for s in socks:
        with contextlib.suppress(OSError, ValueError):
            socket.socket.shutdown(s, socket.SHUT_RDWR)
    return busy


def inflight() -> int:
    """How many threads are inside a Kubernetes request now."""
    with _lock:
        return len(_threads)


@atexit.register
def _at_exit() -> None:
    global _closing
    _closing = True
    with _lock:
        threads = [t for t in _threads.values() if t is not threading.current_thread()]
    if not threads:
        return
    abort_inflight()
    deadline = time.monotonic() + JOIN_AT_EXIT_S
    for t in threads:
        t.join(max(deadline - time.monotonic(), 0.0))


def hook_sigint() -> None:
    """On SIGINT, stop the requests in flight, then raise KeyboardInterrupt as before.
    Call it from the main thread (clients are built lazily, in worker threads)."""
    global _hooked
    if _hooked or threading.current_thread() is not threading.main_thread():
        return
    try:
        previous = signal.getsignal(signal.SIGINT)
    except (ValueError, OSError):
        return
    if previous is not signal.default_int_handler:
        return  # someone else handles Ctrl-C (a UI, a test runner): leave it alone

    def handler(signum: int, frame: Any) -> None:
        abort_inflight()
        signal.default_int_handler(signum, frame)

    with contextlib.suppress(ValueError, OSError):
        signal.signal(signal.SIGINT, handler)
        _hooked = True
