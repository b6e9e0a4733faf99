"""`tileir server`: a compile server that keeps Triton loaded between `tileir compile`s.

Why: a `tileir compile` process of a small kernel spends most of its time before the compile
starts: Python's start-up, `import triton`, and the lazy imports and library reading of
Triton's first compile in a process (benchmarks/compile.py splits it; a vector add: ~80 ms
of compile in a process of ~300-400 ms). NVIDIA's tileiras, a C++ program, pays none of it.
A build that runs `tileir compile` once per kernel pays it every time; a server pays it once.

How (Linux; elsewhere, and without a server, `tileir compile` compiles in its own process):

- `tileir server start` starts one server per Python interpreter and copy of this package
  (its socket's name holds a hash of both) in $TILEIR_SERVER_DIR, else $XDG_RUNTIME_DIR/tileir,
  else $TMPDIR/tileir-UID: a directory only its user may enter (refused otherwise). The
  server imports the compiler and Triton and compiles a small kernel (Triton's lazy imports
  done, its library sources read), then listens on the socket.
- A `tileir compile` (or `run`, `bench`) process (the program; `compiler.cli.main` called
  from Python is never forwarded) connects and sends its arguments, working directory,
  environment, umask and module search path, and its standard input, output and error as file descriptors
  (SCM_RIGHTS). The server forks a worker that takes all of them and runs the command as the
  process would have run it: output goes straight to the caller's terminal or files (a
  terminal is still a terminal), the exit status comes back. One fork per command: nothing
  one command does (an import, a crash) reaches the next. The worker is forked ahead, while
  the previous command runs, and compiles the warm-up kernel before it waits for a command:
  the pages a compile writes are then its own already, not shared with the server and copied
  on the first write (~20 ms of a vector add's ~100; _Server._fork_spare). Its compile runs
  on a thread of it, not in a child as in a process of its own (compiler/lower/guard.py): a
  crash ends the worker, and the caller then runs the command itself, where the crash is a
  diagnostic, unless the worker had used the caller's streams (then it is one line).
- Ctrl-C in the caller interrupts the worker, which stops as a process of its own would
  (`tileir: interrupted`, status 130); a caller that goes away has its worker stopped.
- Nothing is served stale or from elsewhere: the server answers "compile it yourself" (and
  the caller does, saying nothing) when the caller's interpreter, package or module search
  path is not the server's, and when a file of the server's loaded code (this package,
  Triton) has changed since it started; a server whose code changed then stops.
- A served command that ran in its own process and imported Triton (so paid its start-up)
  starts a server in the background where none runs, for the commands after it, and says so
  in one line (autostart; a failed start holds off the next tries for AUTO_IDLE_MINUTES, its
  reason in the `.failed` file beside the socket). `TILEIR_SERVER=on` uses a server that runs
  but never starts one.
- It stops after --idle-timeout minutes without a command (default 30; 10 for one that
  autostart started), on `tileir server stop`, or on SIGTERM. `tileir server status` says
  what it is doing; its log (start-up failures) is beside the socket. `TILEIR_SERVER=off`
  (or `--no-server`) runs the command in the calling process even where a server runs, and
  starts none.

Served: `compile`, the command a build runs many times and whose start-up is Triton's, and
`run` and `bench`, whose start-up is NumPy's and the interpreter's, and for the
triton-interpret backend torch's (~1.5 s; imported by the server on the first command that
names that backend, not at its start: see _Server._load_torch).
"""

from __future__ import annotations

import _socket  # not `socket`, whose enums cost a forwarded compile ~5 ms of start-up
import marshal  # not `json` (its regular expressions: ~5 ms); a caller is this user (SO_PEERCRED)
import os
import sys
import zlib

TYPE_CHECKING = False  # not `typing`'s: the forwarding client must start fast
if TYPE_CHECKING:
    import argparse
    import mmap
    import socket
    from collections.abc import Callable

DIR_ENV = "TILEIR_SERVER_DIR"
USE_ENV = "TILEIR_SERVER"  # unset / auto: use and start one; on: use one, never start one; off: neither
OFF = ("off", "0", "no", "false")
PROTOCOL = 1
DEFAULT_IDLE_MINUTES = 30.0
AUTO_IDLE_MINUTES = 10.0  # of a server started by a command (autostart), not by `tileir server start`
START_TIMEOUT = 300.0  # seconds a starting server may take to say it is ready (imports, warm-up compile)
MAX_FRAME = 1 << 22  # bytes of one message (a request holds the caller's environment)
INTERRUPT = b"i"  # the caller's one message after its request: Ctrl-C was pressed
KILL_GRACE = 2.0  # seconds a worker whose caller went away has to stop on SIGINT before SIGKILL
EXIT_INTERNAL = 3  # compiler.cli.common's (not imported: the client stays small)

# A kernel that walks the paths a compile takes: a view load and store, a reduction, `exp`.
_WARM_UP = """
cuda_tile.module @warm_up {
  entry @warm_up(%x: tile<ptr<f32>>, %n: tile<i32>) {
    %tok = make_token : token
    %vx = make_tensor_view %x, shape = [%n], strides = [1] : tile<i32> -> tensor_view<?xf32, strides=[1]>
    %px = make_partition_view %vx : PV
    %b, %by, %bz = get_tile_block_id : tile<i32>
    %t, %t1 = load_view_tko weak %px[%b] token = %tok : PV, tile<i32> -> tile<64xf32>, token
    %s = reduce %t dim=0 identities=[0.000000e+00 : f32] : tile<64xf32> -> tile<f32>
    (%a: tile<f32>, %c: tile<f32>) {
      %r = addf %a, %c : tile<f32>
      yield %r : tile<f32>
    }
    %sr = reshape %s : tile<f32> -> tile<1xf32>
    %sb = broadcast %sr : tile<1xf32> -> tile<64xf32>
    %e = exp %sb : tile<64xf32>
    %y = tanh %e : tile<64xf32>
    %t2 = store_view_tko weak %y, %px[%b] token = %t1 : tile<64xf32>, PV, tile<i32> -> token
    return
  }
}
""".replace("PV", "partition_view<tile=(64), padding_value = zero, tensor_view<?xf32, strides=[1]>>")


class ServerError(Exception):
    """Why the server cannot be started, reached or used: one line for the user."""


# --------------------------------------------------------------------------------------------
# Where: the directory and the socket


def _package_dir() -> str:
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _base_dir() -> str:
    """The servers' directory's path (which may not exist)."""
    base = os.environ.get(DIR_ENV)
    if base:
        return base
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    return (
        os.path.join(runtime, "tileir")
        if runtime
        else os.path.join(os.environ.get("TMPDIR") or "/tmp", f"tileir-{os.getuid()}")
    )


def server_dir(create: bool = False) -> str | None:
    """The servers' directory; None where it does not exist (and `create` is false). A
    ServerError where it is not private to this user: a socket there could be anyone's."""
    base = _base_dir()
    if create:
        try:
            os.makedirs(base, mode=0o700, exist_ok=True)
        except OSError as exc:
            raise ServerError(f"cannot make the server directory {base}: {exc.strerror or exc}") from None
    try:
        st = os.lstat(base)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ServerError(f"cannot use the server directory {base}: {exc.strerror or exc}") from None
    import stat

    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
        raise ServerError(
            f"the server directory {base} is not a directory private to this user (mode 0700, owned by uid "
            f"{os.getuid()}); remove it, or set {DIR_ENV} to another"
        )
    return base


def _identity() -> dict:
    """What a caller and the server must share: the interpreter, its environment (a venv's
    `python` and `python3` are links to one binary; two venvs of one binary differ in their
    prefix) and this package's copy."""
    return {"python": os.path.realpath(sys.executable), "prefix": sys.prefix, "package": _package_dir()}


def socket_path(create: bool = False) -> str | None:
    """This interpreter's and package's server socket (which may not exist), or None where
    the servers' directory does not exist."""
    base = server_dir(create)
    return None if base is None else _socket_in(base)


def _socket_in(base: str) -> str:
    """The path of this interpreter's and package's socket in the servers' directory `base`."""
    key = zlib.crc32("\0".join(_identity().values()).encode()) & 0xFFFFFFFF
    return os.path.join(base, f"compile-{key:08x}.sock")


# --------------------------------------------------------------------------------------------
# Messages: a 4-byte length, then a dict of plain values in `marshal`'s format


def _frame(message: dict) -> bytes:
    data = marshal.dumps(message)
    return len(data).to_bytes(4, "big") + data


def _read_frame(sock: _socket.socket, first: bytes = b"") -> dict | None:
    """The next message, or None where the peer closed first."""
    data = bytearray(first)
    need = None
    while True:
        if need is None and len(data) >= 4:
            need = 4 + int.from_bytes(data[:4], "big")
            if need > MAX_FRAME:
                raise ServerError(f"a message of {need} bytes (at most {MAX_FRAME})")
        if need is not None and len(data) >= need:
            message = marshal.loads(data[4:need])
            if not isinstance(message, dict):
                raise ServerError("a message that is no dict")
            return message
        chunk = sock.recv(65536)
        if not chunk:
            return None
        data += chunk


def _connect(path: str, timeout: float | None = None) -> _socket.socket | None:
    """A connection to the server at `path`; None where none listens there (a socket left by
    a server that died is removed)."""
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        sock.connect(path)
    except ConnectionRefusedError:
        sock.close()
        # Nobody listens: the server died without removing it. (A starting server binds
        # elsewhere and renames its socket here only once it listens.)
        try:
            os.unlink(path)
        except OSError:
            pass
        return None
    except OSError:
        sock.close()
        return None
    return sock


def ask(op: str, path: str | None = None, timeout: float = 10.0) -> dict | None:
    """The server's answer to `op` (status, stop), or None where none runs."""
    path = path or socket_path()
    if path is None:
        return None
    sock = _connect(path, timeout)
    if sock is None:
        return None
    try:
        sock.sendall(_frame({"protocol": PROTOCOL, "op": op}))
        return _read_frame(sock)
    except (OSError, ValueError, EOFError, ServerError):
        return None
    finally:
        sock.close()


# --------------------------------------------------------------------------------------------
# The client: `tileir compile` forwarded


def add_server_flag(parser: argparse.ArgumentParser) -> None:
    """--no-server, of each command a server serves (the client reads it before argparse)."""
    parser.add_argument(
        "--no-server",
        action="store_true",
        help="run in this process even where a compile server runs, and start none (`tileir server`; also "
        "TILEIR_SERVER=off)",
    )


def _mode() -> str:
    """TILEIR_SERVER as "off" (never use a server), "on" (use one, start none) or "auto"."""
    value = os.environ.get(USE_ENV, "").strip().lower()
    return "off" if value in OFF else "on" if value == "on" else "auto"


def _wanted(argv: list[str]) -> bool:
    """Whether a served command (compiler.cli.SERVED_COMMANDS) may go to a server: Linux, and
    neither --no-server nor TILEIR_SERVER=off."""
    return sys.platform == "linux" and "--no-server" not in argv and _mode() != "off"


def _beside(path: str, suffix: str) -> str:
    """The file beside the socket `path` with `suffix` (.lock, .log, .failed)."""
    return path[: -len(".sock")] + suffix


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def forward(argv: list[str]) -> int | None:
    """Run `tileir ARGV` on this interpreter's server, if one runs and takes it: its exit
    status; None to run it in this process (no server, or one that said no). Never raises."""
    if not _wanted(argv):
        return None
    try:
        path = socket_path()
        sock = _connect(path) if path else None
    except (ServerError, OSError):
        return None  # an unusable directory: `tileir server start` says why
    if sock is None:
        return None
    try:
        return _forward_on(sock, argv)
    finally:
        sock.close()


def _forward_on(sock: _socket.socket, argv: list[str]) -> int | None:
    fds = b"".join(fd.to_bytes(4, sys.byteorder) for fd in (0, 1, 2))  # three C ints: SCM_RIGHTS' data
    try:
        request = {
            "protocol": PROTOCOL,
            "op": "run",
            "argv": argv,
            "cwd": os.getcwd(),
            "env": dict(os.environ),
            "umask": _umask(),
            "path": sys.path,
            **_identity(),
        }
        sock.sendmsg([_frame(request)], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, fds)])
    except (OSError, ValueError):
        # Nothing reached the server: a closed standard stream, a working directory that is
        # gone (the command, run here, says so), a search path entry that is no string.
        return None
    # From here the server may be running the command: never run it a second time.
    interrupted = False
    while True:
        try:
            reply = _read_frame(sock)
            break
        except KeyboardInterrupt:
            if interrupted:  # a second Ctrl-C: stop waiting (the server stops the worker)
                return 130
            interrupted = True
            try:
                sock.sendall(INTERRUPT)
            except OSError:
                return 130
        except (OSError, ValueError, EOFError, ServerError) as exc:
            reply = {"lost": str(exc)}
            break
    if reply is None or "lost" in reply:
        sys.stderr.write(
            "tileir: error: the compile server stopped during the command; run it again (TILEIR_SERVER=off "
            "compiles without the server)\n"
        )
        return EXIT_INTERNAL
    if "fallback" in reply:
        return None
    if reply.get("rerun"):
        # (A crash of Triton's, say: run here, the command isolates its compile and says so.)
        sys.stderr.write(
            f"tileir: the compile server's worker was {reply['rerun']} before it used this command's input or "
            "output; running the command here\n"
        )
        return None
    if reply.get("died"):
        sys.stderr.write(f"tileir: internal error: the compile server's worker was {reply['died']} (this is a bug)\n")
    return int(reply.get("status", EXIT_INTERNAL))


# --------------------------------------------------------------------------------------------
# Starting one behind a command that paid Triton's start-up


def autostart(argv: list[str]) -> None:
    """After a served command ran in this process and imported Triton (its start-up, ~0.3 s,
    paid): start this interpreter's server in the background, unless one runs or starts, so
    that the next commands are served (a cold compile of a vector add: ~2.3x tileiras' time in
    a process of its own, ~0.8x served; benchmarks/compile.py), as sccache's and Gradle's
    daemons start themselves. It stops after AUTO_IDLE_MINUTES without a command. Not with
    TILEIR_SERVER=on (use a running server, start none) or off, --no-server, or where the server
    cannot run. The command does not wait: a starter, `python -m compiler server start
    --autostarted` in a session of its own (so the server reads as that in `ps`), waits for the
    server to be ready, with no stream of the caller's (a caller reading our output through a
    pipe sees its end when we end). It runs in this package's parent directory, so that `-m`
    finds this copy of the package; its search path past [0] is then the callers' (which the
    server compares: _Server._refusal). Never raises."""
    if not _wanted(argv) or _mode() != "auto" or "triton" not in sys.modules or _start_problem():
        return
    try:
        path = socket_path(create=True)
        if path is None or not _lock_free(path) or _failed_lately(path):
            return  # (a server runs or starts: it holds the lock for its life)
        import subprocess

        package = _package_dir()
        subprocess.Popen(
            [sys.executable, "-m", os.path.basename(package), "server", "start", "--autostarted"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd=os.path.dirname(package),
            start_new_session=True,
        )
    except (ServerError, OSError, ValueError):
        return
    if "-q" not in argv and "--quiet" not in argv:
        try:
            sys.stderr.write(
                f"tileir: starting a compile server in the background for the next commands (it stops after "
                f"{AUTO_IDLE_MINUTES:g} min idle or on `tileir server stop`; TILEIR_SERVER=on: never start one, "
                "off: never use one)\n"
            )
            sys.stderr.flush()
        except (OSError, ValueError):
            pass


def _lock_free(path: str) -> bool:
    """Whether no server holds (or is starting under) the lock of the socket `path`."""
    import fcntl

    with open(_beside(path, ".lock"), "a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return False
        fcntl.flock(lock, fcntl.LOCK_UN)
    return True


def _failed_lately(path: str) -> bool:
    """Whether a server started for `path` by autostart failed to start within the last
    AUTO_IDLE_MINUTES: the commands then do not start another each (`tileir server start`
    says why)."""
    import time

    try:
        return os.stat(_beside(path, ".failed")).st_mtime > time.time() - AUTO_IDLE_MINUTES * 60
    except OSError:
        return False


def _failure_note(path: str) -> str | None:
    """Why the last autostart for `path` failed (its `.failed` file), or None."""
    try:
        with open(_beside(path, ".failed")) as note:
            return note.read().strip().removeprefix("autostart: ") or None
    except OSError:
        return None


def start_quietly(idle_minutes: float) -> None:
    """The starter's work (autostart): start the server; where it cannot, why goes to the
    `.failed` file beside the socket, which holds off the next autostarts a while."""
    import contextlib

    failed = None
    try:
        start(idle_minutes)
    except (ServerError, OSError) as exc:
        failed = str(exc)
    try:
        path = socket_path(create=True)
        if path is None:
            return
        if failed is None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(_beside(path, ".failed"))
        else:
            with open(_beside(path, ".failed"), "w") as note:
                note.write(f"autostart: {failed}\n")
    except (ServerError, OSError):
        pass


# --------------------------------------------------------------------------------------------
# The server


def _mtime(name: str) -> int:
    try:
        return os.stat(name).st_mtime_ns
    except OSError:
        return -1  # gone: a change too


def _code_files() -> dict[str, int]:
    """The files of the loaded modules of this package and of Triton, with their mtimes."""
    roots = [_package_dir() + os.sep]
    triton = sys.modules.get("triton")
    if triton is not None and getattr(triton, "__file__", None):
        roots.append(os.path.dirname(triton.__file__) + os.sep)
    files = {}
    for module in list(sys.modules.values()):
        name = getattr(module, "__file__", None)
        if name and name.startswith(tuple(roots)):
            files[name] = _mtime(name)
    return files


def _changed(files: dict[str, int]) -> str | None:
    return next((name for name, mtime in files.items() if _mtime(name) != mtime), None)


class _Worker:
    __slots__ = ("pid", "pidfd", "conn", "used", "signalled", "kill_at")

    def __init__(self, pid: int, pidfd: int, conn: socket.socket | None, used: mmap.mmap) -> None:
        self.pid = pid
        self.pidfd = pidfd
        # The caller's connection; a spare's, until its command comes: the server's end of the
        # socket pair its command goes over.
        self.conn = conn
        # Shared with the worker: [0] becomes 1 once it used the caller's streams, [1] once it
        # sent the caller its exit status (_report).
        self.used = used
        self.signalled = False  # did the server signal it (Ctrl-C relayed, a caller gone)?
        self.kill_at: float | None = None  # when to SIGKILL a worker whose caller went away


class _Server:
    def __init__(self, listener: socket.socket, path: str, idle: float | None) -> None:
        import selectors
        import time

        self.time = time.monotonic
        self.listener = listener
        self.path = path
        self.inode = os.stat(path).st_ino
        self.idle = idle  # seconds, or None: never
        self.selector = selectors.DefaultSelector()
        self.selector.register(listener, selectors.EVENT_READ, None)
        # SIGTERM's handler writes here: a select that Python resumes after a handler would
        # otherwise sleep on past the stop.
        self.wake_read, self.wake_write = os.pipe()
        self.selector.register(self.wake_read, selectors.EVENT_READ, ("wake", None))
        self.workers: dict[int, _Worker] = {}
        self.files = _code_files()
        self.started = time.time()
        self.last = self.time()
        self.served = 0
        self.stopping = False
        self.terminated = False  # SIGTERM came
        self.torch = False  # imported (for the triton-interpret backend)?
        # The spare: a worker forked ahead of the next command, which warms up meanwhile (see
        # _fork_spare); ready once it said so.
        self.spare: _Worker | None = None
        self.spare_ready = False

    # The loop: one thread, one selector over the listening socket, each worker's pidfd (it
    # becomes readable when the worker ends) and each worker's caller (readable: Ctrl-C, or
    # gone).
    def serve(self) -> None:
        import signal

        def on_term(*_: object) -> None:
            # (Stopped by the loop, not here: a handler runs between any two bytecodes, a
            # spare's hand-over half done among them.)
            self.terminated = True
            os.write(self.wake_write, b"x")

        signal.signal(signal.SIGTERM, on_term)
        self._fork_spare()
        while not (self.stopping and not self.workers):
            now = self.time()
            deadlines = [w.kill_at for w in self.workers.values() if w.kill_at is not None]
            if not self.workers and self.idle is not None and not self.stopping:
                deadlines.append(self.last + self.idle)
            timeout = max(0.0, min(deadlines) - now) if deadlines else None
            events = self.selector.select(timeout)
            for key, _ in events:
                try:
                    if key.data is None:
                        self._accept()
                    elif key.data[0] == "wake":
                        os.read(self.wake_read, 64)
                    elif key.data[0].startswith("spare"):
                        if key.data[1] is self.spare:  # (not one handed a command earlier in this batch)
                            self._from_spare(key.data[0] == "spare-done")
                    elif self.workers.get(key.data[1].pid) is not key.data[1]:
                        pass  # reaped earlier in this batch (its caller killed as it ended)
                    elif key.data[0] == "done":
                        self._reap(key.data[1])
                    else:
                        self._from_caller(key.data[1])
                except Exception as exc:  # noqa: BLE001 - one command's trouble must not end the server
                    sys.stderr.write(f"tileir server: {type(exc).__name__}: {exc}\n")
            if self.terminated:
                self.stop()
            now = self.time()
            for worker in list(self.workers.values()):
                if worker.kill_at is not None and now >= worker.kill_at:
                    self._kill(worker, signal.SIGKILL)
                    worker.kill_at = None
            if not self.workers and self.idle is not None and now - self.last >= self.idle:
                self.stop()
        self.selector.close()

    def stop(self) -> None:
        """Take no more commands (the socket goes), finish the running ones, then exit."""
        if self.stopping:
            return
        self.stopping = True
        self._drop_spare()
        import contextlib

        # The name goes first, then the listener: a caller that finds the socket closed (a
        # refused or reset connection) then never finds its name still there.
        with contextlib.suppress(OSError):
            if os.stat(self.path).st_ino == self.inode:  # not a newer server's
                os.unlink(self.path)
        with contextlib.suppress(KeyError, ValueError):
            self.selector.unregister(self.listener)
        self.listener.close()

    def status(self) -> dict:
        triton = sys.modules.get("triton")
        return {
            "pid": os.getpid(),
            "started": self.started,
            "served": self.served,
            "running": len(self.workers),
            "workers": sorted(self.workers),
            # those that read or wrote their caller's streams (a crash after that is reported,
            # not rerun by the caller)
            "used": sorted(pid for pid, w in self.workers.items() if w.used[0]),
            "spare": self.spare.pid if self.spare is not None and self.spare_ready else None,
            "idle_timeout": self.idle,
            "socket": self.path,
            "triton": getattr(triton, "__version__", None),
            **_identity(),
        }

    def _accept(self) -> None:
        import socket
        import struct

        try:
            conn, _ = self.listener.accept()
        except OSError:
            return
        fds: list[int] = []
        try:
            creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
            if struct.unpack("3i", creds)[1] != os.getuid():
                raise ServerError("a caller of another user")
            conn.settimeout(5.0)  # a local caller sends its request at once
            data, fds, _, _ = socket.recv_fds(conn, 65536, 3)
            request = _read_frame(conn, data)
            conn.settimeout(None)
            if request is None or request.get("protocol") != PROTOCOL:
                raise ServerError("not a request of this protocol")
            op = request.get("op")
            if op == "status":
                conn.sendall(_frame(self.status()))
            elif op == "stop":
                conn.sendall(_frame({"stopping": True, **self.status()}))
                self.stop()
            elif op == "run":
                reason = self._refusal(request, fds)
                if reason is None:
                    self._start_worker(conn, request, fds)
                    conn = None  # the worker's now
                else:
                    conn.sendall(_frame({"fallback": reason}))
        except (OSError, ValueError, EOFError, TypeError, ServerError) as exc:
            sys.stderr.write(f"tileir server: a request failed: {exc}\n")
        finally:
            for fd in fds:
                os.close(fd)
            if conn is not None:
                conn.close()
        # The next command's spare, forked only now: it must not hold the caller's descriptors
        # (a pipe that never ends for whoever reads the caller's output).
        self._fork_spare()

    def _refusal(self, request: dict, fds: list[int]) -> str | None:
        """Why this server must not run `request` (the caller then runs it), or None."""
        if self.stopping:
            return "stopping"
        if len(fds) != 3:
            return "no standard streams"
        ident = _identity()
        if any(request.get(k) != v for k, v in ident.items()):
            return "another interpreter or package"
        # Modules not loaded yet are found on the caller's path; those loaded must be the ones
        # the caller would load: the same path after its first entry (the script's directory,
        # or the working directory of `python -m`).
        if list(request.get("path", []))[1:] != sys.path[1:]:
            return "another module search path"
        changed = _changed(self.files)
        if changed is not None:
            sys.stderr.write(f"tileir server: {changed} changed since the start; stopping\n")
            self.stop()
            return "stale"
        return None

    def _start_worker(self, conn: socket.socket, request: dict, fds: list[int]) -> None:
        import selectors

        if not self.torch and any("triton-interpret" in a for a in request["argv"]):
            self._load_torch()
            self._drop_spare()  # (forked without torch)
        # The worker gets the caller's connection too, to send the exit status itself as soon as
        # the command is done: the server's reply waits for the worker's end, and the kernel
        # takes ~5 ms to tear down a process that shares the server's memory.
        handed = [*fds, conn.fileno()]
        worker = self._hand_to_spare(request, handed)
        if worker is None:
            worker = self._fork(lambda used: _work(request, handed, used))
        worker.conn = conn
        self.workers[worker.pid] = worker
        self.served += 1  # (counted here: a caller may ask for the status before the worker ends)
        self.selector.register(worker.pidfd, selectors.EVENT_READ, ("done", worker))
        self.selector.register(conn, selectors.EVENT_READ, ("caller", worker))
        self.last = self.time()

    def _fork(self, run: Callable[[mmap.mmap], None]) -> _Worker:
        """A child of the server that runs `run(used)` (`used`: the flag the worker shares
        with the server, _Worker.used) and never returns; OSError where none can be forked."""
        import mmap

        used = mmap.mmap(-1, 2)
        pid = os.fork()
        if pid == 0:  # the child: never returns
            try:
                self.selector.close()
                self.listener.close()
                os.close(self.wake_read)
                os.close(self.wake_write)
                for worker in [*self.workers.values(), *([self.spare] if self.spare else [])]:
                    os.close(worker.pidfd)
                    if worker.conn is not None:
                        worker.conn.close()
                run(used)
            except BaseException as exc:  # noqa: BLE001 - said on the caller's stderr (fd 2 by now)
                said = f"tileir: internal error: the compile server's worker: {type(exc).__name__}: {exc}\n"
                os.write(2, said.encode())
            finally:
                os._exit(EXIT_INTERNAL)
        return _Worker(pid, os.pidfd_open(pid), None, used)

    # Why a spare: a forked worker shares the server's memory until it writes a page, which is
    # then copied; a compile writes ~4,600 pages (a vector add; measured with getrusage), ~20
    # ms of copying. A spare forked while the previous command runs compiles the warm-up
    # kernel, which writes most of them, and then waits: the next command's compile finds them
    # copied (with the compile on a thread of the worker: served vector adds went from 1.01x and
    # 1.03x of tileiras' time to 0.87x and 0.88x, benchmarks/compile.py).
    def _fork_spare(self) -> None:
        import selectors
        import socket

        if self.stopping or self.spare is not None:
            return
        ours, theirs = socket.socketpair()

        def run(used: mmap.mmap) -> None:
            ours.close()
            _spare(theirs, used, self.path)

        try:
            spare = self._fork(run)
        except OSError:
            ours.close()
            return
        finally:
            theirs.close()
        spare.conn = ours
        self.spare, self.spare_ready = spare, False
        self.selector.register(spare.pidfd, selectors.EVENT_READ, ("spare-done", spare))
        self.selector.register(ours, selectors.EVENT_READ, ("spare", spare))

    def _from_spare(self, ended: bool) -> None:
        """The spare says it is warm (a byte), or it ended (before any command: its warm-up
        failed, or it was killed); the next command then starts a new one."""
        if not ended:
            try:
                said = self.spare.conn.recv(1)  # type: ignore[union-attr]
            except OSError:
                said = b""
            if said:
                self.spare_ready = True
                return
        self._drop_spare()

    def _hand_to_spare(self, request: dict, fds: list[int]) -> _Worker | None:
        """The warm spare, sent `request` and the caller's descriptors; None without one."""
        import socket

        if not self.spare_ready:
            return None
        spare = self._take_spare()
        try:
            socket.send_fds(spare.conn, [_frame(request)], fds)
        except OSError:
            self._end(spare)  # (it died meanwhile)
            return None
        finally:
            spare.conn.close()
        return spare

    def _drop_spare(self) -> None:
        if self.spare is not None:
            spare = self._take_spare()
            spare.conn.close()
            self._end(spare)

    def _take_spare(self) -> _Worker:
        """The spare, no longer the server's spare (its events no longer watched)."""
        import contextlib

        spare = self.spare
        assert spare is not None and spare.conn is not None
        for fd in (spare.pidfd, spare.conn):
            with contextlib.suppress(KeyError, ValueError):
                self.selector.unregister(fd)
        self.spare, self.spare_ready = None, False
        return spare

    def _end(self, worker: _Worker) -> None:
        """Kill and reap a worker nobody waits for (a spare), and remove the scratch directory
        of the warm-up compile it may have been in."""
        import contextlib
        import signal

        with contextlib.suppress(OSError):
            os.kill(worker.pid, signal.SIGKILL)
        with contextlib.suppress(OSError):
            os.waitpid(worker.pid, 0)
        os.close(worker.pidfd)
        worker.used.close()
        _remove_scratch(worker.pid)

    def _load_torch(self) -> None:
        """Import what Triton's interpreter runs on (torch: ~1.5 s of every triton-interpret run)
        here, once, on the first command that asks for it: not at the start, because every
        fork then copies the page tables of ~200 MB more (a fork took 13 ms instead of 3)."""
        self.torch = True
        try:
            import torch  # noqa: F401
            import triton.runtime.interpreter  # noqa: F401
        except Exception as exc:  # noqa: BLE001 - the worker meets it again and says so
            sys.stderr.write(f"tileir server: cannot import torch for triton-interpret: {exc}\n")
        self.files = {**_code_files(), **self.files}  # (the files it read: their changes too)

    def _kill(self, worker: _Worker, sig: int) -> None:
        worker.signalled = True
        try:  # the worker leads a process group: its compile child goes too
            os.killpg(worker.pid, sig)
        except OSError:
            try:
                os.kill(worker.pid, sig)
            except OSError:
                pass

    def _from_caller(self, worker: _Worker) -> None:
        import signal

        try:
            data = worker.conn.recv(64)
        except OSError:
            data = b""
        if worker.used[1]:  # done: the caller has its status and has gone; the worker is ending
            self.selector.unregister(worker.conn)
            return
        worker.signalled = True
        if data:  # Ctrl-C: the worker stops as the caller's own process would
            os.kill(worker.pid, signal.SIGINT)
            return
        # The caller went away: nobody waits for the command
        self.selector.unregister(worker.conn)
        os.kill(worker.pid, signal.SIGINT)
        worker.kill_at = self.time() + KILL_GRACE

    def _reap(self, worker: _Worker) -> None:
        import contextlib

        from compiler.lower.guard import how_it_ended

        _, wait_status = os.waitpid(worker.pid, 0)
        if wait_status != 0:  # (killed, or interrupted: its compile's scratch directory may be left)
            _remove_scratch(worker.pid)
        reply: dict = {"status": os.waitstatus_to_exitcode(wait_status)}
        if os.WIFSIGNALED(wait_status):
            how = how_it_ended(wait_status)
            # A worker that crashed (Triton's compile runs in it) before it used the caller's
            # streams: the caller runs the command itself, where a crash is a diagnostic.
            rerun = not worker.used[0] and not worker.signalled
            reply = {"rerun": how} if rerun else {"status": EXIT_INTERNAL, "died": how}
        reported = worker.used[1]  # (the worker sent its status itself)
        worker.used.close()
        self.selector.unregister(worker.pidfd)
        os.close(worker.pidfd)
        with contextlib.suppress(KeyError, ValueError):
            self.selector.unregister(worker.conn)
        if not reported:
            with contextlib.suppress(OSError):
                worker.conn.sendall(_frame(reply))
        worker.conn.close()
        del self.workers[worker.pid]
        self.last = self.time()


def _remove_scratch(pid: int) -> None:
    """Remove the scratch directories of the ended worker `pid` (compiler.lower.build.scratch_dir):
    one killed, or interrupted during a compile on a thread, could not."""
    build = sys.modules.get("compiler.lower.build")  # (imported by the warm-up, where Triton is)
    if build is not None:
        build.remove_scratch_of(pid)


def _spare(sock: socket.socket, used: mmap.mmap, path: str) -> None:
    """In a spare worker of the server at `path`: warm up (_Server._fork_spare), say so, take a
    command and run it; exit where the server closes the socket first."""
    import signal
    import socket

    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # (the server's handler is the server's)
    try:
        _warm_up(path)
    except Exception:  # noqa: BLE001 - not warm, but as able as a worker forked for the command
        pass
    import threading

    for thread in threading.enumerate():  # (the compile's, ending: `-j N` forks only where none runs)
        if thread is not threading.main_thread():
            thread.join(5.0)
    sock.sendall(b"r")
    data, fds, _, _ = socket.recv_fds(sock, 65536, 4)
    request = _read_frame(sock, data) if data else None
    sock.close()
    if request is None:
        os._exit(0)
    _work(request, fds, used)


def _work(request: dict, fds: list[int], used: mmap.mmap) -> None:
    """In a forked worker: become the caller's process, run its command, send the caller its
    exit status (`fds`: its standard streams, then its connection), exit."""
    import atexit
    import signal

    from compiler.lower import guard

    os.setpgid(0, 0)
    atexit._clear()  # the server's (its temporary directories) are not the worker's to run
    for sig in (signal.SIGTERM, signal.SIGCHLD):
        signal.signal(sig, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    fds, reply = fds[:3], fds[3]
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        if fd > 2:
            os.close(fd)
    os.set_inheritable(reply, False)  # (Triton runs ptxas with close_fds=False)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    os.umask(int(request["umask"]))
    sys.path[:] = request["path"]
    argv = list(request["argv"])
    sys.argv = ["tileir", *argv]
    _reopen_streams(used)
    guard.run_here()  # (its compiles need no child: the server reports a crash)
    from compiler.cli import finish, main

    finish(main(argv), lambda status: _report(reply, used, status))


def _report(fd: int, used: mmap.mmap, status: int) -> None:
    """The worker's exit status to its caller, before the worker ends (the server then sends
    nothing more at its end)."""
    used[1] = 1
    data = _frame({"status": status})
    try:
        while data:
            data = data[os.write(fd, data) :]
    except OSError:
        pass  # (the caller went away)


def _reopen_streams(used: mmap.mmap) -> None:
    """sys.stdin/stdout/stderr over the caller's descriptors, buffered as Python's start-up
    buffers them (a terminal line by line) and in $PYTHONIOENCODING where set; their first
    read or write sets used[0] (the server has the caller rerun the command of a worker that
    crashed only where nothing was read or written yet)."""
    import io

    class Noted(io.FileIO):
        def readinto(self, b):  # type: ignore[override]
            used[0] = 1
            return super().readinto(b)

        def readall(self) -> bytes:
            used[0] = 1
            return super().readall()

        def write(self, b):  # type: ignore[override]
            used[0] = 1
            return super().write(b)

    encoding, _, errors = os.environ.get("PYTHONIOENCODING", "").partition(":")
    for fd, name in ((0, "stdin"), (1, "stdout"), (2, "stderr")):
        old = getattr(sys, name)
        raw = Noted(fd, "rb" if fd == 0 else "wb", closefd=False)
        stream = io.TextIOWrapper(
            io.BufferedReader(raw) if fd == 0 else io.BufferedWriter(raw),
            encoding=encoding or getattr(old, "encoding", None) or "utf-8",
            errors=errors or ("backslashreplace" if fd == 2 else getattr(old, "errors", None) or "strict"),
            line_buffering=os.isatty(fd),
            write_through=fd == 2,
        )
        setattr(sys, name, stream)
        setattr(sys, f"__{name}__", stream)


def _warm_up(path: str) -> None:
    """Do in the server what every compile would otherwise do first in its own process. Its
    compile's cache directory (where the generated source is written) is the one beside the
    socket `path`, the same for every warm-up: a spare killed during its warm-up (the server
    stopping) leaves nothing in the temporary directory."""
    import compiler.bytecode.reader  # noqa: F401 - `tileir compile` of a bytecode file
    import compiler.cli.compile  # noqa: F401
    import compiler.cli.launch  # noqa: F401 - run, bench
    import compiler.interp  # noqa: F401 - the cpu backend
    import compiler.lower.targets  # --arch
    import compiler.runtime  # noqa: F401
    from compiler.lower import build
    from compiler.lower import compile as compile_kernel

    compiler.lower.targets.local_arch()  # (nvidia-smi's answer, kept: the default --arch of every worker)
    if build.triton_version() is None:
        return  # (run and bench are served all the same; a compile says what it says alone)
    import triton  # noqa: F401 - its version in `tileir server status`

    saved = os.environ.get("TILEIR_CACHE_DIR")
    os.environ["TILEIR_CACHE_DIR"] = _beside(path, ".warm-up")
    try:
        compile_kernel(_WARM_UP, None, "sm_90", use_cache=False)
        for cc in (80, 100):  # the other usual targets' `ptxas --version`s (~10 ms a compile)
            build.prepare(cc)
    finally:
        if saved is None:
            del os.environ["TILEIR_CACHE_DIR"]
        else:
            os.environ["TILEIR_CACHE_DIR"] = saved


def _serve_detached(path: str, idle: float | None, ready: int) -> None:
    """The server process: lock, warm up, listen, say so on `ready`, serve until stopped."""
    import fcntl

    lock = open(_beside(path, ".lock"), "a")  # noqa: SIM115 - held for the server's life
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.write(ready, b"running: another server is starting")
        return
    try:
        _warm_up(path)
    except Exception as exc:  # noqa: BLE001 - said to the one who started it
        os.write(ready, f"error: the warm-up compile failed: {type(exc).__name__}: {exc}".encode())
        return
    import socket

    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    staging = f"{path}.{os.getpid()}"
    try:
        listener.bind(staging)
        listener.listen(64)
        os.replace(staging, path)  # callers see it only once it listens
    except OSError as exc:
        os.write(ready, f"error: cannot listen on {path}: {exc.strerror or exc}".encode())
        return
    server = _Server(listener, path, idle)
    os.write(ready, f"ok {os.getpid()}".encode())
    os.close(ready)
    server.serve()


def _start_problem() -> str | None:
    """Why no server can start here, or None: asked before the servers' directory is made,
    which a server that cannot start does not need."""
    if sys.platform != "linux" or not hasattr(os, "pidfd_open"):
        return "the compile server needs Linux 5.3 or newer; `tileir compile` works without it"
    path = _socket_in(_base_dir())
    if len(path.encode()) > 100:  # sockaddr_un's path holds 108 bytes
        return f"the socket path {path} is too long for a Unix socket; set {DIR_ENV} to a shorter one"
    return None


def start(idle_minutes: float) -> str:
    """Start this interpreter's server (in the background) unless one runs: what to tell the
    user. A ServerError where it cannot."""
    if problem := _start_problem():
        raise ServerError(problem)
    path = socket_path(create=True)
    running = ask("status", path)
    if running is not None:
        return f"a compile server is already running (pid {running['pid']}, {path})"
    idle = idle_minutes * 60 if idle_minutes > 0 else None
    log = _beside(path, ".log")
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # detach: a new session, then a grandchild that no terminal or parent owns
        try:
            os.close(read_end)
            os.setsid()
            if os.fork() == 0:
                os.chdir("/")
                null = os.open(os.devnull, os.O_RDWR)
                os.dup2(null, 0)
                os.dup2(null, 1)
                os.dup2(os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), 2)
                _serve_detached(path, idle, write_end)
        finally:
            os._exit(0)
    os.close(write_end)
    os.waitpid(pid, 0)
    import select

    answer = b""
    while select.select([read_end], [], [], START_TIMEOUT)[0]:
        chunk = os.read(read_end, 4096)
        if not chunk:
            break
        answer += chunk
    os.close(read_end)
    text = answer.decode(errors="replace")
    if text.startswith("ok "):
        after = f"stops after {idle_minutes:g} min idle" if idle else "runs until `tileir server stop`"
        return f"compile server started (pid {text[3:]}, {path}; {after})"
    if text.startswith("running: "):
        return text[len("running: ") :]
    detail = text[len("error: ") :] if text.startswith("error: ") else f"it did not start (see {log})"
    raise ServerError(f"the compile server did not start: {detail}")


# --------------------------------------------------------------------------------------------
# `tileir server start|stop|status`


def arguments_server(parser: argparse.ArgumentParser) -> None:
    from argparse import SUPPRESS  # (loaded already: the parser is argparse's)

    parser.description = (
        "A compile server keeps Triton loaded, so that `tileir compile`, `run` and `bench` skip Python's and "
        "Triton's start-up; they use it whenever it runs (TILEIR_SERVER=off or --no-server: never), and one of "
        f"them that paid Triton's start-up starts one for the next (stopping after {AUTO_IDLE_MINUTES:g} min "
        "idle; TILEIR_SERVER=on: never start one)."
    )
    parser.add_argument("action", choices=("start", "stop", "status"), help="start, stop, or show the server")
    parser.add_argument(
        "--idle-timeout",
        type=float,
        metavar="MINUTES",
        help=f"start: stop after this many minutes without a command (default {DEFAULT_IDLE_MINUTES:g}; 0: never)",
    )
    # autostart's starter: the idle timeout AUTO_IDLE_MINUTES by default, a failure into `.failed`
    parser.add_argument("--autostarted", action="store_true", help=SUPPRESS)


def command_server(args: argparse.Namespace) -> int:
    import time

    from .common import EXIT_ERRORS, EXIT_OK, CliError, err, out

    try:
        if args.action == "start":
            idle = args.idle_timeout
            if idle is None:
                idle = AUTO_IDLE_MINUTES if args.autostarted else DEFAULT_IDLE_MINUTES
            if not idle >= 0:
                raise CliError(f"--idle-timeout {idle:g}: give 0 (never) or more minutes")
            if args.autostarted:
                start_quietly(idle)
            else:
                err(f"tileir: {start(idle)}")
            return EXIT_OK
        path = socket_path()
        if args.action == "stop":
            answer = ask("stop", path) if path else None
            if answer is None:
                err("tileir: no compile server is running")
                return EXIT_OK
            running = f", after its {answer['running']} running command(s)" if answer["running"] else ""
            err(f"tileir: the compile server (pid {answer['pid']}) stops{running}")
            return EXIT_OK
        answer = ask("status", path) if path else None
        if answer is None:
            out("no compile server is running (start one: tileir server start)\n")
            failed = _failure_note(path) if path else None
            if failed:
                out(f"  the last automatic start failed: {failed}\n")
            return EXIT_ERRORS
        idle = answer["idle_timeout"]
        stops = f"stops after {idle / 60:g} min idle" if idle else "never stops when idle"
        out(
            f"compile server: pid {answer['pid']}, up {time.time() - answer['started']:.0f} s, "
            f"{answer['served']} command(s) served, {answer['running']} running, "
            f"{'a' if answer.get('spare') else 'no'} warm spare worker, {stops}\n"
            f"  socket: {answer['socket']}\n"
            f"  python: {answer['python']} (environment {answer['prefix']}); "
            f"Triton {answer['triton'] or 'not installed'}; package {answer['package']}\n"
        )
        return EXIT_OK
    except ServerError as exc:
        raise CliError(str(exc), EXIT_ERRORS) from None
