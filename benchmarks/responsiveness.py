"""Keypress -> repaint latency of the real app, in a pseudo-terminal, while Inductor compiles and
when idle; and what the worker's lower CPU priority costs the compile.

The app runs as `python -m playground SNIPPET` at 80x24 with the real worker. Pane keys 1-9 are
written to the terminal one at a time (each after the previous repaint has ended and a short
pause, as a person presses them). Two latencies per key: until the first byte of the app's next
frame ("first byte"), and until the last byte it writes before it goes quiet for 30 ms ("frame
done"): a key can cost several frames (the app's tabs once drew three per key, the first of
them the old layout), and only the last shows the whole answer. Scenarios:

- compile: a six-layer MLP with backend inductor and --cold, rerun with `r` whenever a run
  ends, keys counted only while the summary bar says the run is in flight; once with the
  worker at its default nice level and once with COMPILE_PLAYGROUND_NICE=0.
- idle: the largest report of the gallery (lr_float_static: eight guard entries, 180 kB of JSON)
  after its run has ended.

Each run's duration (the summary's "done in X s") is collected per scenario, so the compile
time at the default nice level can be held against nice 0 under the same keypresses.

    python benchmarks/responsiveness.py [--keys 60] [--idle-keys 60] [--skip-nice0]

Beside each latency, the app's main thread's /proc schedstat says how much of it the app ran on
a core (Textual's work and ours) and how much it waited for one (the machine's load).

A key whose repaint coincides with a progress update is measured to the first of the two frames,
so the during-compile figures can only err on the low side by that; they are few (a handful of
progress events per run).
"""

from __future__ import annotations

import argparse
import fcntl
import os
import random
import re
import select
import shutil
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COLUMNS, ROWS = 80, 24
#: The gallery snippet with the largest report (measured with `check --json` over the gallery).
IDLE_SNIPPET = "lr_float_static"

MLP = '''
import torch

SETTINGS = {"backend": "inductor"}


class MLP(torch.nn.Module):
    """Six Linear+GELU layers: enough for Inductor to take a while, cold."""

    def __init__(self, width: int = 64, layers: int = 6) -> None:
        super().__init__()
        self.layers = torch.nn.ModuleList(torch.nn.Linear(width, width) for _ in range(layers))

    def forward(self, x):
        for layer in self.layers:
            x = torch.nn.functional.gelu(layer(x))
        return x


model = MLP()


def inputs():
    torch.manual_seed(0)
    return [torch.randn(32, 64), torch.randn(32, 64)]


def loss(out):
    return out.sum()
'''

_ESCAPE = re.compile(rb"\x1b\[[0-9;?<>=]*[ -/]*[@-~]|\x1b[()][0-9A-Za-z]|\x1b[=>]")
_DONE = re.compile(r"done in (\d+(?:\.\d+)?) s")
#: The summary bar's words for a run in flight (RunState.words), each as only it spells them.
_BUSY = (
    "compiling call",
    "rerunning…",
    "loading snippet…",
    "checking equivalence…",
    "checking gradients…",
    "timing…",
    "sent to the worker…",
    "starting torch…",
)


@dataclass
class Terminal:
    """The app in a pseudo-terminal; a thread records every chunk it writes, with its time."""

    process: subprocess.Popen[bytes]
    fd: int
    chunks: list[tuple[float, bytes]] = field(default_factory=list)
    #: The app's main thread's schedstat (ns on a core, ns waiting for one) when each chunk came.
    sched: list[tuple[int, int]] = field(default_factory=list)
    #: Per measured key: (ms the app's main thread ran, ms it waited for a core) until its frame.
    split: list[tuple[float, float]] = field(default_factory=list)
    #: Per measured key: ms until the last byte of its frames (see the module's docstring).
    done: list[float] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    closed: bool = False

    def read_forever(self) -> None:
        while True:
            try:
                ready, _, _ = select.select([self.fd], [], [], 0.5)
                if not ready:
                    if self.process.poll() is not None:
                        break
                    continue
                data = os.read(self.fd, 65536)
            except OSError:
                break
            if not data:
                break
            now = time.perf_counter()
            sched = self.schedstat()
            with self.lock:
                self.chunks.append((now, data))
                self.sched.append(sched)
        self.closed = True

    def schedstat(self) -> tuple[int, int]:
        """Linux's /proc/PID/schedstat of the app's main thread (Textual's event loop): ns run on
        a core and ns spent runnable, waiting for one. (0, 0) where it cannot be read."""
        try:
            run, wait, _ = Path(f"/proc/{self.process.pid}/schedstat").read_text().split()
            return int(run), int(wait)
        except (OSError, ValueError):
            return 0, 0

    def sched_at(self, index: int) -> tuple[int, int]:
        with self.lock:
            return self.sched[index]

    def count(self) -> int:
        with self.lock:
            return len(self.chunks)

    def text_since(self, start: int) -> str:
        with self.lock:
            data = b"".join(chunk for _, chunk in self.chunks[start:])
        return _ESCAPE.sub(b"", data).decode("utf-8", "replace")

    def first_after(self, start: int, timeout: float) -> float | None:
        """When the first chunk after index `start` arrived (None after `timeout` s)."""
        deadline = time.perf_counter() + timeout
        while time.perf_counter() < deadline:
            with self.lock:
                if len(self.chunks) > start:
                    return self.chunks[start][0]
            time.sleep(0.0005)
        return None

    def last_before_quiet(self, start: int, gap: float = 0.03, timeout: float = 2.0) -> float:
        """When the last chunk after index `start` arrived, once nothing came for `gap` s."""
        self.quiet(gap, timeout)
        with self.lock:
            return self.chunks[-1][0] if len(self.chunks) > start else 0.0

    def quiet(self, gap: float = 0.05, timeout: float = 5.0) -> None:
        """Wait until nothing was written for `gap` seconds."""
        deadline = time.perf_counter() + timeout
        while time.perf_counter() < deadline:
            with self.lock:
                last = self.chunks[-1][0] if self.chunks else 0.0
            if time.perf_counter() - last >= gap:
                return
            time.sleep(gap / 4)

    def press(self, key: str) -> None:
        os.write(self.fd, key.encode())


def start_app(snippet: Path, args: list[str], env: dict[str, str]) -> Terminal:
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLUMNS, 0, 0))
    process = subprocess.Popen(
        [sys.executable, "-m", "playground", str(snippet), *args],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        cwd=snippet.parent,
        env={**os.environ, "TERM": "xterm-256color", "COLUMNS": str(COLUMNS), "LINES": str(ROWS), **env},
        start_new_session=True,
    )
    os.close(slave)
    terminal = Terminal(process, master)
    threading.Thread(target=terminal.read_forever, daemon=True).start()
    return terminal


def stop_app(terminal: Terminal) -> None:
    try:
        terminal.press("q")
        terminal.process.wait(timeout=15)
    except (OSError, subprocess.TimeoutExpired):
        os.killpg(terminal.process.pid, signal.SIGKILL)
        terminal.process.wait()
    os.close(terminal.fd)


class Screen:
    """The run state, as last written to the summary bar (from the terminal's text stream)."""

    def __init__(self, terminal: Terminal) -> None:
        self.terminal = terminal
        self.seen = 0
        self.busy = True
        self.durations: list[float] = []

    def update(self) -> None:
        end = self.terminal.count()
        text = self.terminal.text_since(self.seen)
        self.seen = end
        done = [(m.start(), float(m.group(1))) for m in _DONE.finditer(text)]
        failed = text.rfind("error: ")
        busy = max((text.rfind(word) for word in _BUSY), default=-1)
        last_done = done[-1][0] if done else -1
        if max(last_done, failed) > busy:
            if self.busy and last_done > failed:
                # Once per run: the summary bar is redrawn with the same words on later frames.
                self.durations.append(done[-1][1])
            self.busy = False
        elif busy >= 0:
            self.busy = True

    def wait(self, busy: bool, timeout: float) -> bool:
        deadline = time.perf_counter() + timeout
        while time.perf_counter() < deadline:
            self.update()
            if self.busy == busy:
                return True
            time.sleep(0.05)
        return False


def measure_keys(terminal: Terminal, screen: Screen, count: int, *, while_busy: bool, rerun: bool) -> list[float]:
    """Latencies (ms) of `count` pane keys, each pressed once the previous repaint ended."""
    latencies: list[float] = []
    keys = "123456789"
    position = 0
    while len(latencies) < count:
        screen.update()
        if screen.busy != while_busy:
            if while_busy and rerun:
                terminal.press("r")  # another cold compile to press keys during
                screen.wait(True, 30)
                terminal.quiet()
                continue
            break
        terminal.quiet(gap=0.03)
        start = terminal.count()
        key = keys[position % len(keys)]
        position += 1
        before = terminal.schedstat()
        sent = time.perf_counter()
        terminal.press(key)
        painted = terminal.first_after(start, timeout=10)
        if painted is None:
            print(f"  no repaint within 10 s of key {key}", file=sys.stderr)
            continue
        done = terminal.last_before_quiet(start)
        screen.update()
        # Only keys pressed and answered within the phase count toward it.
        if screen.busy == while_busy:
            latencies.append((painted - sent) * 1000)
            terminal.done.append((done - sent) * 1000)
            run, wait = terminal.sched_at(start)
            terminal.split.append(((run - before[0]) / 1e6, (wait - before[1]) / 1e6))
        time.sleep(random.uniform(0.05, 0.15))
    return latencies


Split = list[tuple[float, float]]


def compile_scenario(folder: Path, keys: int, nice: str | None) -> tuple[list[float], list[float], Split, list[float]]:
    snippet = folder / "mlp6.py"
    snippet.write_text(MLP)
    env = {"COMPILE_PLAYGROUND_NICE": nice} if nice is not None else {}
    terminal = start_app(snippet, ["--backend", "inductor", "--cold"], env)
    screen = Screen(terminal)
    try:
        if not screen.wait(True, 60):
            raise SystemExit("the app never showed a run in flight")
        latencies = measure_keys(terminal, screen, keys, while_busy=True, rerun=True)
        screen.wait(False, 300)
        durations = list(screen.durations)
        # Runs during which keys were pressed: compare like with like.
        return latencies, durations, terminal.split, terminal.done
    finally:
        stop_app(terminal)


def idle_scenario(folder: Path, keys: int) -> tuple[list[float], Split, list[float]]:
    snippet = folder / f"{IDLE_SNIPPET}.py"
    shutil.copy(ROOT / "snippets" / f"{IDLE_SNIPPET}.py", snippet)
    terminal = start_app(snippet, [], {})
    screen = Screen(terminal)
    try:
        if not screen.wait(False, 300) or not screen.durations:
            raise SystemExit("the idle snippet's run never ended")
        terminal.quiet(gap=0.5)
        latencies = measure_keys(terminal, screen, keys, while_busy=False, rerun=False)
        return latencies, terminal.split, terminal.done
    finally:
        stop_app(terminal)


def summary(values: list[float]) -> str:
    if not values:
        return "no samples"
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return f"p50 {statistics.median(ordered):6.1f}  p95 {p95:6.1f}  max {ordered[-1]:6.1f}  (n={len(ordered)})"


def split_summary(split: Split) -> str:
    """Where a key's latency went: the app's own CPU (Textual's and ours) against waiting for a
    core, which is the machine's load, not the app."""
    if not split or not any(run or wait for run, wait in split):
        return "no schedstat"
    runs, waits = [run for run, _ in split], [wait for _, wait in split]
    return (
        f"on a core p50 {statistics.median(runs):5.1f} mean {statistics.fmean(runs):5.1f}; "
        f"waiting for a core p50 {statistics.median(waits):5.1f} mean {statistics.fmean(waits):5.1f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--keys", type=int, default=60, help="keys pressed during compiles, per nice level")
    parser.add_argument("--idle-keys", type=int, default=60)
    parser.add_argument("--skip-nice0", action="store_true", help="only the default nice level")
    args = parser.parse_args()
    random.seed(0)
    print(f"cores: {os.cpu_count()}; load average before: {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        during, runs, during_split, during_done = compile_scenario(folder, args.keys, None)
        skipped: tuple[list[float], list[float], Split, list[float]] = ([], [], [], [])
        during0, runs0, during0_split, during0_done = (
            skipped if args.skip_nice0 else compile_scenario(folder, args.keys, "0")
        )
        idle, idle_split, idle_done = idle_scenario(folder, args.idle_keys)
    print(f"\nkeypress -> repaint at {COLUMNS}x{ROWS}, ms (first byte of the frame, then frame done)")
    print(f"  during an Inductor compile (worker nice default): {summary(during)}")
    print(f"                                        frame done: {summary(during_done)}")
    if not args.skip_nice0:
        print(f"  during an Inductor compile (worker nice 0):       {summary(during0)}")
        print(f"                                        frame done: {summary(during0_done)}")
    print(f"  idle on {IDLE_SNIPPET}:                      {summary(idle)}")
    print(f"                                        frame done: {summary(idle_done)}")
    print("\nthe app's main thread from keypress to frame, ms")
    print(f"  during an Inductor compile (nice default): {split_summary(during_split)}")
    if not args.skip_nice0:
        print(f"  during an Inductor compile (nice 0):       {split_summary(during0_split)}")
    print(f"  idle on {IDLE_SNIPPET}:              {split_summary(idle_split)}")
    print("\nrun duration (cold inductor compile + checks, s) while keys were pressed")
    print(f"  worker nice default: {' '.join(f'{value:.1f}' for value in runs)}")
    if not args.skip_nice0:
        print(f"  worker nice 0:       {' '.join(f'{value:.1f}' for value in runs0)}")
        if runs and runs0:
            # The first run of each also warms the worker's Inductor: compare the reruns.
            ratio = statistics.median(runs[1:] or runs) / statistics.median(runs0[1:] or runs0)
            print(f"  median ratio default / nice 0: {ratio:.2f} (goal <= 1.10)")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
