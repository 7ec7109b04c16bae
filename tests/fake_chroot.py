"""A chroot whose root directory is not a mount point, as a plain ``debootstrap`` + ``chroot`` makes, for tests.

There, iproute2's ``ip -n NS``, ``tc -n NS`` and ``ip netns exec NS`` stop at once: they make a mount
namespace and first run ``mount --make-rslave /``, which fails (``Invalid argument``) where ``/`` is not a
mount point; Mininet's ``mnexec -n`` stops the same way (``remount: Invalid argument``).

:func:`run` makes that condition from this machine's own files, without a second system: in a mount
namespace of its own (``unshare --mount --propagation private``: nothing mounted there is seen outside),
a fresh directory that is not a mount point gets every top-level directory bound in (``/run`` excepted:
empty, as in a fresh chroot), and the command runs chrooted into it.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from collections.abc import Sequence
from pathlib import Path

NEEDS = ("unshare", "chroot", "mount")

NO_MOUNT_NAMESPACE = ("/ is not a mount point here (a chroot?), and Mininet's hosts need a mount namespace "
                      "(mnexec -n runs mount --make-rprivate /); bind-mount the chroot's directory onto itself "
                      "(mount --bind DIR DIR) before entering it")
"""The skip reason of a test that starts Mininet hosts where :func:`root_is_mount_point` is false."""

_SCRIPT = r"""
set -eu
R=$1; outer=$2; shift 2
[ "$(readlink /proc/self/ns/mnt)" != "$outer" ] || { echo "not in a mount namespace of its own" >&2; exit 97; }
top=/$(echo "$R" | cut -d/ -f2)
for src in "$top" /*; do        # the one holding R first, while nothing is mounted under R
    name=${src#/}
    case $name in run|lost+found) continue ;; esac
    if [ -L "$src" ]; then
        [ -L "$R/$name" ] || cp -P "$src" "$R/$name"     # bin -> usr/bin on a merged /usr
    elif [ -d "$src" ] && [ ! -d "$R/$name" ]; then
        mkdir "$R/$name" && mount --rbind "$src" "$R/$name"
    fi
done
mkdir -p "$R/run"
exec chroot "$R" "$@"
"""


def missing() -> list[str]:
    """The tools :func:`run` needs that are not on PATH."""
    return [t for t in NEEDS if shutil.which(t) is None]


def root_is_mount_point() -> bool:
    """Whether ``/`` is a mount point here (not so in a plain chroot)."""
    with open("/proc/self/mountinfo") as f:
        return any(line.split()[4] == "/" for line in f)


def run(root: Path, argv: Sequence[str], cwd: str | os.PathLike = "/", timeout: float | None = None
        ) -> subprocess.CompletedProcess:
    """Run ``argv`` in directory ``cwd``, chrooted into ``root`` (a new, empty directory, which is not a mount
    point) with this machine's directories bound in (each at its own path), in a mount namespace that ends
    with it; its output is captured as text. Past ``timeout`` seconds (a hang guard), everything in its
    process group is killed and :class:`subprocess.TimeoutExpired` raised."""
    root.mkdir()
    outer = os.readlink("/proc/self/ns/mnt")
    argv = ["unshare", "--mount", "--propagation", "private", "sh", "-c", _SCRIPT, "sh", str(root.resolve()), outer,
            "env", f"--chdir={cwd}", *argv]
    with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          start_new_session=True) as p:
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.communicate()
            raise
    return subprocess.CompletedProcess(argv, p.returncode, out, err)
