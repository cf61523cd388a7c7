"""A workshop on this machine: one presenter and 1, 5 and 10 followers, side by side.

- presenter: `compile-playground watch SNIPPET --present DIR`, a real torch worker; the benchmark
  saves the snippet (atomically, as editors do) and the presenter publishes each complete run.
- followers: `compile-playground follow DIR`, each in its own pseudo-terminal at 80x24, as an
  attendee's SSH session would run it. A follower's screen is the bytes it writes to its
  terminal: the delay is from the run's publication (the time in its run file) to the moment
  its "run #N" reaches the follower's terminal.
- memory per follower: PSS (/proc/PID/smaps_rollup), which shares the pages of the Python and
  Textual files that every follower maps between them, as the kernel does.
- an attendee's own playground, idle, with the limits a host would set (threads, memory cap,
  no prefault): PSS of the app and each of its worker processes; with `--attendees`, several
  at once, as a room's server holds them (torch's library pages are shared between them).

    python benchmarks/workshop.py [--followers 1,5,10] [--saves 3] [--attendees 1,3]
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import pty
import re
import select
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SNIPPET = """
import torch

SETTINGS = {{"backend": "eager"}}

def fn(x):
    y = torch.sin(x) * {n}
    if y.sum() > 0:
        return y * 2
    return y - 1

def inputs():
    torch.manual_seed(0)
    return [(torch.randn(64),), (torch.randn(64),)]
"""
#: What a host would set for a room (docs/workshop.md).
HOST_LIMITS = {
    "COMPILE_PLAYGROUND_THREADS": "1",
    "COMPILE_PLAYGROUND_RUN_MEMORY_MIB": "2048",
    "COMPILE_PLAYGROUND_PREFAULT_MIB": "0",
    "COMPILE_PLAYGROUND_SPARE": "0",
}
_ESCAPES = re.compile(rb"\x1b\[[0-9;?<>=]*[ -/]*[@-~]|\x1b[()][A-Za-z0-9]|\x1b[=>78]|\x1b\][^\x07]*\x07")


def env(extra: dict[str, str] | None = None) -> dict[str, str]:
    out = dict(os.environ, TERM="xterm-256color", PYTHONPATH=str(ROOT))
    out.update(extra or {})
    return out


class Terminal:
    """A command in its own pseudo-terminal, its output drained and kept (escapes removed)."""

    def __init__(self, argv: list[str], cwd: Path, extra_env: dict[str, str] | None = None) -> None:
        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
        self.proc = subprocess.Popen(
            argv, cwd=cwd, env=env(extra_env), stdin=slave, stdout=slave, stderr=slave, start_new_session=True
        )
        os.close(slave)
        self.fd = master
        self.text = b""
        #: (time the bytes arrived, the text so far's length): when each piece landed.
        self.seen: dict[bytes, float] = {}

    def feed(self, data: bytes, at: float, needles: list[bytes]) -> None:
        self.text = (self.text + _ESCAPES.sub(b"", data))[-20000:]
        for needle in needles:
            if needle not in self.seen and needle in self.text:
                self.seen[needle] = at

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)
        os.close(self.fd)


class Pump(threading.Thread):
    """Reads every terminal's output as it comes, so no app ever blocks on a full pty."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.terminals: list[Terminal] = []
        self.needles: list[bytes] = []
        self.lock = threading.Lock()
        self.running = True

    def run(self) -> None:
        while self.running:
            with self.lock:
                fds = {t.fd: t for t in self.terminals}
            if not fds:
                time.sleep(0.01)
                continue
            ready, _, _ = select.select(list(fds), [], [], 0.05)
            at = time.time()
            for fd in ready:
                try:
                    data = os.read(fd, 65536)
                except OSError:
                    data = b""
                if data:
                    with self.lock:
                        fds[fd].feed(data, at, self.needles)


def pss_mib(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                ppid = int(Path(f"/proc/{name}/stat").read_text().rpartition(")")[2].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            children.setdefault(ppid, []).append(int(name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def save(path: Path, n: int) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(SNIPPET.format(n=n))
    os.replace(tmp, path)


def wait(condition, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return False


def newest_run(session: Path) -> tuple[int, float]:
    try:
        state = json.loads((session / "presenter.json").read_text())
    except (OSError, ValueError):
        return 0, 0.0
    number = int(state.get("run") or 0)
    if not number:
        return 0, 0.0
    run = json.loads((session / "runs" / f"{number:06d}.json").read_text())
    return number, float(run["at"])


def room(count: int, saves: int, work: Path, pump: Pump) -> dict[str, object]:
    """One presenter and `count` followers: memory per follower and the delays of `saves` runs."""
    session = work / f"session-{count}"
    snippet = work / f"demo-{count}.py"
    save(snippet, 1)
    presenter = subprocess.Popen(
        [sys.executable, "-m", "playground", "watch", str(snippet), "--present", str(session), "--no-timing"],
        cwd=work,
        env=env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    followers: list[Terminal] = []
    try:
        if not wait(lambda: newest_run(session)[0] >= 1, 180):
            raise SystemExit("the presenter published nothing in 180 s")
        with pump.lock:
            pump.needles = [f"run #{n} of".encode() for n in range(1, saves + 3)]
        for _ in range(count):
            follower = Terminal([sys.executable, "-m", "playground", "follow", str(session)], work)
            followers.append(follower)
            with pump.lock:
                pump.terminals.append(follower)
        if not wait(lambda: all(b"run #1 of" in f.seen for f in followers), 120):
            raise SystemExit("not every follower caught up in 120 s")
        time.sleep(1.0)
        delays: list[float] = []
        for n in range(2, saves + 2):
            save(snippet, n)
            if not wait(lambda n=n: newest_run(session)[0] >= n, 120):
                raise SystemExit(f"run {n} was not published")
            number, at = newest_run(session)
            needle = f"run #{number} of".encode()
            wait(lambda needle=needle: all(needle in f.seen for f in followers), 20)
            delays += [f.seen[needle] - at for f in followers if needle in f.seen]
            time.sleep(1.0)
        time.sleep(1.0)
        pss = [pss_mib(f.proc.pid) for f in followers]
        return {
            "followers": count,
            "pss_mib_median": statistics.median(pss),
            "pss_mib_max": max(pss),
            "delay_ms_median": 1000 * statistics.median(delays),
            "delay_ms_max": 1000 * max(delays),
            "delays": len(delays),
        }
    finally:
        with pump.lock:
            pump.terminals = [t for t in pump.terminals if t not in followers]
        for follower in followers:
            follower.stop()
        os.killpg(presenter.pid, signal.SIGTERM)
        presenter.wait(30)


def attendees(count: int, work: Path, pump: Pump, limits: dict[str, str]) -> tuple[list[dict[str, float]], float]:
    """`count` attendees' own playgrounds on this machine at once, idle after their first run,
    with `limits` set: PSS by process for each, and the slowest start to a first run's result
    on screen. PSS shares each page among the processes that map it, the pages of torch's
    libraries among every session's workers too: the sessions' sums add up to what the room
    takes."""
    apps = []
    started = time.time()
    try:
        for number in range(count):
            snippet = work / f"mine-{number}.py"
            save(snippet, 1)
            app = Terminal([sys.executable, "-m", "playground", str(snippet)], work, limits)
            apps.append(app)
            with pump.lock:
                pump.needles = [b"done in"]
                pump.terminals.append(app)
        if not wait(lambda: all(b"done in" in app.seen for app in apps), 120 + 120 * count):
            raise SystemExit("an attendee's playground never finished its first run")
        time.sleep(5.0)  # idle: a spare child (if any) forked and warmed
        first_run_s = max(app.seen[b"done in"] for app in apps) - started
        sessions = []
        for app in apps:
            sizes = {"app": pss_mib(app.proc.pid)}
            for number, pid in enumerate(descendants(app.proc.pid)):
                cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                role = "worker template" if "playground.worker" in cmd and number == 0 else "worker child"
                sizes[f"{role} ({pid})"] = pss_mib(pid)
            sizes["total"] = sum(sizes.values())
            sessions.append(sizes)
        return sessions, first_run_s
    finally:
        with pump.lock:
            pump.terminals = [t for t in pump.terminals if t not in apps]
        for app in apps:
            app.stop()


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--followers", default="1,5,10", help="room sizes, comma-separated (1,5,10; '' for none)")
    p.add_argument("--saves", type=int, default=3, help="runs the presenter makes per room (3)")
    p.add_argument("--no-attendee", dest="attendee", action="store_false", help="skip the attendee's playground")
    p.add_argument(
        "--attendees",
        default="1",
        help="attendees' own playgrounds at once, comma-separated room sizes (1; e.g. 1,3): each with the host's limits",
    )
    p.add_argument(
        "--json", metavar="FILE", help="also write the figures to FILE as JSON (benchmarks/speed.py reads it)"
    )
    args = p.parse_args()
    summary: dict[str, object] = {"load_start": os.getloadavg(), "rooms": [], "attendee": {}, "attendees": {}}
    pump = Pump()
    pump.start()
    with tempfile.TemporaryDirectory(prefix="workshop-bench-") as tmp:
        work = Path(tmp)
        print(
            f"{'followers':>9}  {'PSS/follower MiB (median, max)':>31}  {'delay to screen ms (median, max)':>33}  runs"
        )
        for count in (int(c) for c in args.followers.split(",") if c.strip()):
            r = room(count, args.saves, work, pump)
            summary["rooms"].append(r)
            print(
                f"{r['followers']:>9}  {r['pss_mib_median']:>20.1f}, {r['pss_mib_max']:>8.1f}  "
                f"{r['delay_ms_median']:>22.0f}, {r['delay_ms_max']:>8.0f}  {r['delays']}",
                flush=True,
            )
        if args.attendee:
            for label, limits in (
                ("defaults", {}),
                ("host limits", HOST_LIMITS),
                ("host limits, no warm-up", {**HOST_LIMITS, "COMPILE_PLAYGROUND_WARMUP": "0"}),
            ):
                words = " ".join(f"{k}={v}" for k, v in limits.items()) or "the defaults"
                (sizes,), first_run_s = attendees(1, work, pump, limits)
                summary["attendee"][label] = {"sizes": sizes, "first_run_s": first_run_s}
                print(f"\nan attendee's own playground, idle, with {words}:")
                print(f"  (start to the first run's result on screen: {first_run_s:.1f} s)")
                for role, mib in sizes.items():
                    print(f"  {role:<28} {mib:8.1f} MiB PSS", flush=True)
        for count in (int(c) for c in args.attendees.split(",") if c.strip()):
            if count < 2:
                continue  # one attendee is measured above
            sessions, first_run_s = attendees(count, work, pump, HOST_LIMITS)
            totals = [s["total"] for s in sessions]
            summary["attendees"][str(count)] = {"total_mib": sum(totals), "per_session_mib": sum(totals) / count}
            print(
                f"\n{count} attendees' playgrounds at once, idle, with the host's limits: "
                f"{sum(totals):.1f} MiB PSS in all, {sum(totals) / count:.1f} per session "
                f"(sessions {min(totals):.1f}-{max(totals):.1f}; the slowest first run {first_run_s:.1f} s)",
                flush=True,
            )
    pump.running = False
    if args.json:
        summary["load_end"] = os.getloadavg()
        Path(args.json).write_text(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
