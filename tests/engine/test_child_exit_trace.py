"""A child of the template that ends with code 70 (an exception of the playground's own
escaped it) leaves its traceback on the worker's stderr, which the client keeps: never a bare
exit code. Forked here, as the template forks it, with what it inherits broken on purpose."""

from __future__ import annotations

import os
from types import SimpleNamespace

from playground.worker.process.child import run_child


def test_a_child_that_fails_in_our_code_says_why_on_the_crash_log() -> None:
    read_fd, write_fd = os.pipe()
    crash_log = os.fdopen(write_fd, "w")
    # No template_fds and no channel: _become_child's own code raises AttributeError.
    inherited = SimpleNamespace(crash_log=crash_log)
    pid = os.fork()
    if pid == 0:  # the child never returns from run_child
        os.close(read_fd)
        run_child(inherited, None, os.getppid())  # type: ignore[arg-type]
    crash_log.close()
    _, status = os.waitpid(pid, 0)
    said = b""
    while chunk := os.read(read_fd, 65536):
        said += chunk
    os.close(read_fd)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 70
    text = said.decode()
    assert f"process {pid} failed in the playground's own code" in text
    assert "Traceback (most recent call last):" in text and "AttributeError" in text
