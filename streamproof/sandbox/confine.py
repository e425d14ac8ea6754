"""What the sandboxed program may not do to streamproof: start a new session, or signal (or
trace) the ``streamproof`` process that watches it.

:func:`confine` installs a seccomp filter (Linux, x86-64) in the sandbox's child before any
user code runs; it is inherited by every process the program starts. It makes these system
calls fail with ``EPERM`` (the program sees a ``PermissionError``):

* ``setsid`` - so every process the program starts stays in the child's session, and the
  parent finds and kills all of them at the end (:mod:`streamproof.sandbox.session`), however
  they were started (``os.fork``, ``subprocess.Popen(start_new_session=True)``, a daemon);
  ``setpgid`` stays allowed (Spark's Python daemon uses it), a process group never leaves its
  session;
* ``kill`` of the watching process, of its process group or of every process (``-1``);
  ``tkill``, ``tgkill``, ``rt_sigqueueinfo``, ``rt_tgsigqueueinfo`` and ``pidfd_open`` aimed at
  the watching process; and ``ptrace`` - so the program can neither stop (``SIGSTOP``) nor kill
  the process that enforces its limits;
* ``prctl(PR_SET_PDEATHSIG, ...)`` - the child dies with its parent (set before the filter), and
  the program cannot clear that;
* every x32-ABI system call (none is needed; they would bypass the numbers above).

On another architecture, or where the kernel refuses the filter, nothing is installed and
:func:`confine` says so (the parent still kills the child's process group and session).
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import struct

_LD_ABS_W = 0x20
_JEQ_K = 0x15
_JGE_K = 0x35
_RET_K = 0x06
_ALLOW = 0x7FFF0000
_DENY = 0x00050000 | errno.EPERM  # SECCOMP_RET_ERRNO | EPERM
_ARCH_X86_64 = 0xC000003E
_X32_BIT = 0x40000000
_NR = {"setsid": 112, "ptrace": 101, "prctl": 157, "kill": 62, "tkill": 200, "tgkill": 234, "rt_sigqueueinfo": 129,
       "rt_tgsigqueueinfo": 297, "pidfd_open": 434}
_PR_SET_PDEATHSIG = 1
_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2


def _program(watcher: int, watcher_group: int) -> list[tuple[int, int, int, int]]:
    """The BPF program (code, jump if true, jump if false, k); jumps are relative."""
    aimed = [watcher & 0xFFFFFFFF]
    kill_targets = aimed + [(-watcher_group) & 0xFFFFFFFF, 0xFFFFFFFF]
    body: list[tuple[int, int, int, int]] = []
    # layout: header, per-syscall dispatch, ALLOW, then the argument checks, DENY at the end
    dispatch: list[tuple[str, list[int] | None]] = [
        ("setsid", None), ("ptrace", None), ("prctl", [_PR_SET_PDEATHSIG]), ("kill", kill_targets)] + [
        (name, aimed) for name in ("tkill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo", "pidfd_open")]
    checks: list[list[int]] = [aim for _, aim in dispatch if aim is not None]
    header = 4
    dispatch_len = len(dispatch)
    allow_at = header + dispatch_len
    check_at: list[int] = []
    position = allow_at + 1
    for targets in checks:
        check_at.append(position)
        position += 1 + len(targets)
    deny_at = position
    allow_end = deny_at + 1

    def jump(frm: int, to: int) -> int:
        return to - frm - 1

    body.append((_LD_ABS_W, 0, 0, 4))                                     # 0: arch
    body.append((_JEQ_K, 0, jump(1, allow_end), _ARCH_X86_64))              # 1: other arch: allow
    body.append((_LD_ABS_W, 0, 0, 0))                                     # 2: syscall number
    body.append((_JGE_K, jump(3, deny_at), 0, _X32_BIT))                    # 3: x32: deny
    k = 0
    for index, (name, checked) in enumerate(dispatch):
        at = header + index
        to = deny_at if checked is None else check_at[k]
        if checked is not None:
            k += 1
        body.append((_JEQ_K, jump(at, to), 0, _NR[name]))
    body.append((_RET_K, 0, 0, _ALLOW))                                   # allow_at
    for start, values in zip(check_at, checks):
        body.append((_LD_ABS_W, 0, 0, 16))                                # low word of args[0]
        for offset, target in enumerate(values):
            at = start + 1 + offset
            last = offset == len(values) - 1
            body.append((_JEQ_K, jump(at, deny_at), jump(at, allow_end) if last else 0, target))
    body.append((_RET_K, 0, 0, _DENY))                                    # deny_at
    body.append((_RET_K, 0, 0, _ALLOW))                                   # allow_end
    return body


def confine() -> str | None:
    """Install the filter in this process (module docstring); None when installed, else why
    not."""
    if platform.system() != "Linux" or platform.machine() != "x86_64":
        return f"no seccomp filter on {platform.system()} {platform.machine()}"
    watcher = os.getppid()
    try:
        group = os.getpgid(watcher)
    except OSError:
        group = watcher
    program = _program(watcher, group)
    raw = b"".join(struct.pack("<HBBI", code, jt, jf, k) for code, jt, jf, k in program)
    buffer = ctypes.create_string_buffer(raw, len(raw))

    class _Fprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    fprog = _Fprog(len(program), ctypes.cast(buffer, ctypes.c_void_p))
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        return f"prctl(PR_SET_NO_NEW_PRIVS) failed: {os.strerror(ctypes.get_errno())}"
    if libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        return f"prctl(PR_SET_SECCOMP) failed: {os.strerror(ctypes.get_errno())}"
    return None
