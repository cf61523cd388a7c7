"""`compile-playground serve` in a real headless Chromium (Debian's package; `.ci/run` installs it):
the page loads a follower, a key press changes the pane it shows, `p` forks, and requests without the token
(or, unit-tested, from another machine) are refused; a non-loopback bind needs --allow-remote.

The browser is driven over its DevTools protocol with aiohttp (textual-serve's own dependency).
xterm.js draws on a canvas, so what the screen shows is read from the bytes the app sends the
page: a hook on the page's WebSocket, installed before any of its scripts run, keeps them.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from playground.cli.servecmd import COOKIE, is_loopback, origin_refusal, refusal
from playground.engine.report import Report
from playground.engine.session import SessionWriter
from playground.engine.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "test-token-0123456789"
#: Shown only by the Breaks pane (the Source pane shows a break's reason, not its hints).
HINT = "zebra-hint-only-in-the-breaks-pane"

HOOK = """
window.__frames = [];
const Native = window.WebSocket;
function Hooked(url, protocols) {
  const ws = protocols === undefined ? new Native(url) : new Native(url, protocols);
  ws.addEventListener("message", (event) => {
    const data = event.data;
    if (typeof data === "string") window.__frames.push(data);
    else if (data instanceof ArrayBuffer) window.__frames.push(new TextDecoder().decode(data));
    else if (data instanceof Blob) data.arrayBuffer().then((b) => window.__frames.push(new TextDecoder().decode(b)));
  });
  return ws;
}
Hooked.prototype = Native.prototype;
Object.assign(Hooked, {CONNECTING: 0, OPEN: 1, CLOSING: 2, CLOSED: 3});
window.WebSocket = Hooked;
"""
_ESCAPES = re.compile(r"\x1b\[[0-9;?<>=]*[ -/]*[@-~]|\x1b[()][A-Za-z0-9]|\x1b[=>78]")


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


def textual_serve_missing() -> str:
    try:
        import aiohttp  # noqa: F401
        import textual_serve  # noqa: F401
    except ImportError as exc:
        return str(exc)
    return ""


needs_browser = pytest.mark.skipif(
    not chromium() or bool(textual_serve_missing()),
    reason="NOT TESTED: `serve` in a browser needs Debian's chromium (apt-get install chromium, as .ci/run "
    f"does) and textual-serve (pip install -e '.[serve]'); missing: "
    f"{'chromium ' if not chromium() else ''}{textual_serve_missing()}",
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start_browser(debug_port: int, profile: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [
            chromium(),
            "--headless=new",
            "--no-sandbox",  # root in CI containers
            "--disable-gpu",
            "--no-first-run",
            f"--remote-debugging-port={debug_port}",
            f"--user-data-dir={profile}",
            "--window-size=900,700",  # the 80-column layout: no side panes
            "about:blank",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def wait_port(port: int, proc: subprocess.Popen, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"exited {proc.returncode}: {proc.stdout.read() if proc.stdout else ''}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise AssertionError(f"nothing listens on {port}")


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


class DevTools:
    """A page of a headless Chromium, driven over the DevTools protocol."""

    def __init__(self, ws) -> None:
        self.ws = ws
        self.next_id = 0
        #: The protocol's events (Network.requestWillBeSent...), kept as they arrive.
        self.events: list[dict] = []

    async def call(self, method: str, **params):
        self.next_id += 1
        ident = self.next_id
        await self.ws.send_json({"id": ident, "method": method, "params": params})
        while True:
            message = await asyncio.wait_for(self.ws.receive_json(), 30)
            if "method" in message:
                self.events.append(message)
            if message.get("id") == ident:
                assert "error" not in message, message
                return message.get("result", {})

    async def evaluate(self, expression: str):
        result = await self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        return result.get("result", {}).get("value")

    async def screen_text(self) -> str:
        return _ESCAPES.sub("", await self.evaluate("window.__frames ? window.__frames.join('') : ''") or "")

    async def wait_text(self, needle: str, timeout: float = 60) -> str:
        deadline = time.monotonic() + timeout
        text = ""
        while time.monotonic() < deadline:
            text = await self.screen_text()
            if needle in text:
                return text
            await asyncio.sleep(0.2)
        raise AssertionError(f"{needle!r} never shown; the page got: {text[-2000:]!r}")

    async def press(self, key: str) -> None:
        code = f"Digit{key}" if key.isdigit() else f"Key{key.upper()}"
        common = {"key": key, "code": code, "windowsVirtualKeyCode": ord(key.upper())}
        await self.call("Input.dispatchKeyEvent", type="keyDown", text=key, **common)
        await self.call("Input.dispatchKeyEvent", type="keyUp", **common)


@pytest.fixture
def session(tmp_path: Path) -> Path:
    folder = tmp_path / "session"
    report = Report.from_dict(
        {
            "settings": {"backend": "eager"},
            "stage": "complete",
            "graph_count": 2,
            "graph_break_count": 1,
            "graph_breaks": [{"reason": "Data-dependent branching", "hint": HINT, "line": 3, "count": 1}],
        }
    )
    writer = SessionWriter(folder)
    writer.publish(report, "import torch\n\nif x.sum() > 0:\n    pass\n", Settings(backend="eager"), "demo.py")
    return folder


@needs_browser
async def test_serve_in_headless_chromium(session: Path, tmp_path: Path):
    import aiohttp

    port, debug_port = free_port(), free_port()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    server = subprocess.Popen(
        [sys.executable, "-m", "playground", "serve", "--follow", str(session), "--port", str(port), "--token", TOKEN],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    browser = None
    try:
        wait_port(port, server)
        base = f"http://127.0.0.1:{port}"
        async with aiohttp.ClientSession() as http:
            # Without the token: neither the page nor the WebSocket that carries the app.
            async with http.get(f"{base}/") as response:
                assert response.status == 403 and "token" in await response.text()
            async with http.get(f"{base}/?token=wrong") as response:
                assert response.status == 403
            with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                await http.ws_connect(f"{base}/ws")
            assert refused.value.status == 403

            # Chromium sometimes exits at once on a loaded machine (seen in CI: exit 0 before
            # it listened): one more start, on a fresh debugging port, before failing.
            for attempt in range(2):
                browser = _start_browser(debug_port, tmp_path / f"chromium-profile-{attempt}")
                try:
                    wait_port(debug_port, browser)
                    break
                except AssertionError:
                    browser.kill()
                    browser.wait()
                    if attempt:
                        raise
                    debug_port = free_port()
            async with http.get(f"http://127.0.0.1:{debug_port}/json/list") as response:
                pages = [t for t in await response.json() if t.get("type") == "page"]
            async with http.ws_connect(pages[0]["webSocketDebuggerUrl"], max_msg_size=0) as ws:
                page = DevTools(ws)
                await page.call("Page.enable")
                await page.call("Runtime.enable")
                await page.call("Network.enable")
                await page.call("Page.addScriptToEvaluateOnNewDocument", source=HOOK)

                # The page without the token: refused in the browser too.
                await page.call("Page.navigate", url=f"{base}/")
                await asyncio.sleep(1)
                assert "token" in (await page.evaluate("document.body.innerText") or "")

                await page.call("Page.navigate", url=f"{base}/?token={TOKEN}")
                text = await page.wait_text("following run #1 of 1")
                assert "graphs 2  breaks 1" in text
                assert HINT not in text  # the Source pane is shown first
                await page.evaluate("document.querySelector('.xterm-helper-textarea').focus()")
                await page.press("2")
                await page.wait_text(HINT)
                # A fork in the browser writes the copy and keeps following (no terminal to hand over).
                await page.press("p")
                await page.wait_text("your copy of run #1")
                assert (tmp_path / "demo-run1.py").read_text().startswith("import torch")
                cookies = await page.call("Network.getCookies", urls=[base])
                assert [c["httpOnly"] for c in cookies["cookies"] if c["name"] == COOKIE] == [True]
                # A workshop room is often offline: the page asks nothing of another host (the
                # font CDN it once asked for its stylesheet), and its font is the shipped one.
                asked = [
                    e["params"]["request"]["url"] for e in page.events if e["method"] == "Network.requestWillBeSent"
                ]
                assert any("RobotoMono" in url for url in asked), asked
                assert [url for url in asked if not url.startswith((base, "ws://127.0.0.1", "data:", "about:"))] == []
    finally:
        if browser is not None:
            stop(browser)
        stop(server)
    # Page loads are not logged: the only line that holds the token is the one serve printed.
    out = server.stdout.read()
    assert out.count("token=") == 1 and "GET /" not in out, out[-2000:]


def start_serve(session: Path, cwd: Path, *extra: str) -> tuple[subprocess.Popen, int]:
    port = free_port()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    argv = [sys.executable, "-m", "playground", "serve", "--follow", str(session), "--port", str(port)]
    server = subprocess.Popen(
        [*argv, "--token", TOKEN, *extra], cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    wait_port(port, server)
    return server, port


@pytest.mark.skipif(
    bool(textual_serve_missing()), reason="NOT TESTED: `serve` needs textual-serve (pip install -e '.[serve]')"
)
async def test_the_websocket_takes_only_the_served_origin_and_a_few_tabs(session: Path, tmp_path: Path):
    """Cross-site WebSocket hijacking: a page of another site (or another port of this machine)
    that the attendee opens gets the cookie sent along in some browsers; the served origin is
    the only one taken, and a refusal is logged. At most --max-connections tabs at once (each is
    a process: `serve SNIPPET` a torch worker)."""
    import aiohttp

    server, port = start_serve(session, tmp_path, "--max-connections", "2")
    base, cookie = f"http://127.0.0.1:{port}", {"Cookie": f"{COOKIE}={TOKEN}"}
    try:
        async with aiohttp.ClientSession() as http:
            for origin in ("http://evil.example", f"http://127.0.0.1:{free_port()}", f"https://127.0.0.1:{port}", None):
                headers = cookie | ({"Origin": origin} if origin else {})
                with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                    await http.ws_connect(f"{base}/ws", headers=headers)
                assert refused.value.status == 403, origin
            served = cookie | {"Origin": base}
            first = await http.ws_connect(f"{base}/ws", headers=served)
            second = await http.ws_connect(f"{base}/ws", headers=served)
            message = await asyncio.wait_for(first.receive(), 60)  # the follower's first frame
            assert message.type in (aiohttp.WSMsgType.TEXT, aiohttp.WSMsgType.BINARY)
            with pytest.raises(aiohttp.WSServerHandshakeError) as full:
                await http.ws_connect(f"{base}/ws", headers=served)
            assert full.value.status == 503
            await first.close()
            for _ in range(50):  # the closed tab's place is free again
                try:
                    third = await http.ws_connect(f"{base}/ws", headers=served)
                    break
                except aiohttp.WSServerHandshakeError:
                    await asyncio.sleep(0.1)
            else:
                raise AssertionError("a closed tab's place was never freed")
            await third.close()
            await second.close()
            async with http.get(f"{base}/?token={TOKEN}") as response:
                page = await response.text()
            assert response.status == 200 and "fonts.googleapis" not in page and "RobotoMono" in page
    finally:
        stop(server)
    out, err = server.communicate(timeout=30)
    assert "refused: a WebSocket from http://evil.example" in err
    assert "refused: a WebSocket without an Origin" in err
    assert "--max-connections 2" in err
    assert out.count("token=") == 1 and "GET /" not in out, out[-2000:]


@pytest.mark.skipif(
    bool(textual_serve_missing()), reason="NOT TESTED: `serve` needs textual-serve (pip install -e '.[serve]')"
)
@pytest.mark.parametrize("port", ["-1", "65536", "0", "busy"])
def test_a_port_that_cannot_be_listened_on_is_one_line(port: str, session: Path, tmp_path: Path):
    holder = None
    if port == "busy":
        holder = socket.socket()
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = str(holder.getsockname()[1])
    try:
        done = subprocess.run(
            [sys.executable, "-m", "playground", "serve", "--follow", str(session), "--port", port],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        if holder is not None:
            holder.close()
    assert done.returncode == 2
    assert "open http" not in done.stdout and "token" not in done.stdout, done.stdout
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr, done.stderr
    assert port in done.stderr


def test_serve_refuses_another_interface_without_allow_remote():
    done = subprocess.run(
        [sys.executable, "-m", "playground", "serve", "--host", "0.0.0.0", "--port", str(free_port())],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and "--allow-remote" in done.stderr


def test_requests_from_another_machine_or_without_the_token_are_refused():
    ok = {"token": TOKEN, "allow_remote": False, "path": "/", "remote": "127.0.0.1", "query_token": TOKEN, "cookie": ""}
    assert refusal(**ok) == ""
    assert refusal(**(ok | {"remote": "::1"})) == ""
    assert "only this machine" in refusal(**(ok | {"remote": "192.168.1.20"}))
    assert refusal(**(ok | {"remote": "192.168.1.20", "allow_remote": True})) == ""
    assert "token" in refusal(**(ok | {"query_token": ""}))
    assert "token" in refusal(**(ok | {"query_token": TOKEN[:-1]}))
    assert refusal(**(ok | {"path": "/ws", "query_token": "", "cookie": TOKEN})) == ""
    assert refusal(**(ok | {"path": "/static/js/textual.js", "query_token": ""})) == ""
    assert "only this machine" in refusal(**(ok | {"path": "/static/js/textual.js", "remote": "10.0.0.1"}))
    assert [is_loopback(h) for h in ("127.0.0.1", "127.1.2.3", "::1", "localhost", "0.0.0.0", "10.0.0.1")] == [
        True,
        True,
        True,
        True,
        False,
        False,
    ]


def test_the_served_origin_is_scheme_host_and_port():
    served = ["http://127.0.0.1:8000"]
    assert origin_refusal("http://127.0.0.1:8000", served) == ""
    assert origin_refusal("HTTP://127.0.0.1:8000/", served) == ""
    for other in (
        "http://127.0.0.1:8001",
        "https://127.0.0.1:8000",
        "http://localhost:8000",
        "http://evil.example",
        "null",
        "",
        None,
        "http://127.0.0.1:8000@evil.example",
        "http://127.0.0.1:99999",
    ):
        assert origin_refusal(other, served).startswith("refused"), other
    assert "\x1b" not in origin_refusal("http://e\x1b]0;x\x07", served)
