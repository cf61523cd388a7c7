"""`compile-playground serve`: the app, or a follower, in a browser through textual-serve.

Each browser tab gets its own process (textual-serve starts the command per connection). The
server listens on 127.0.0.1 unless told otherwise, refuses to listen anywhere else without
--allow-remote (reach it with `ssh -L 8000:127.0.0.1:8000 server`), refuses requests from
other addresses likewise, and wants a secret token: in the URL it prints for the page, then in
an HttpOnly, SameSite=Strict cookie for the WebSocket that carries the app. The WebSocket is
taken only from the served page's own origin (another site's page, or another port on this
machine, cannot drive it even where a browser sends the cookie), and only up to a small number at
once: each one starts a process (`serve SNIPPET` a torch worker). The page is served whole from
here (no font CDN: a workshop room is often offline), requests are not logged (the page's URL
holds the token), and an address that cannot be listened on is one line on stderr.
textual-serve is an optional extra: `pip install compile-playground[serve]`.
"""

from __future__ import annotations

import argparse
import asyncio
import hmac
import ipaddress
import os
import re
import secrets
import shlex
import signal
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from playground.cli.counts import whole_number
from playground.engine.textsafe import one_line

#: The cookie the page's WebSocket carries the token in.
COOKIE = "compile_playground_token"
#: Browser tabs served at once unless --max-connections says otherwise: each is a process (a
#: follower about 33 MiB, the app a torch worker of several hundred).
MAX_CONNECTIONS = 4
#: textual-serve's page asks a font CDN for Roboto Mono, which it also ships: the page takes
#: the shipped file instead.
_CDN_LINK = re.compile(r"<link[^>]*fonts\.googleapis\.com[^>]*>", re.S)
_LOCAL_FONT = """<style>
      @font-face {
        font-family: "Roboto Mono";
        src: url("{{ config.static.url }}fonts/RobotoMono-VariableFont_wght.ttf") format("truetype");
      }
    </style>"""


def is_loopback(host: str) -> bool:
    """Whether `host` (an address or "localhost") is this machine only."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]").split("%")[0]).is_loopback
    except ValueError:
        return False


def refusal(*, token: str, allow_remote: bool, path: str, remote: str | None, query_token: str, cookie: str) -> str:
    """Why a request is refused ("" to let it through): from another machine without
    --allow-remote, or without the token (in the query or, for the WebSocket, the cookie).
    The page's static files (scripts, fonts) hold nothing of ours and need only the address."""
    if not allow_remote and not is_loopback(remote or ""):
        return f"refused: requests from {remote} are not served (only this machine's, unless --allow-remote)"
    if path.startswith("/static/"):
        return ""
    given = query_token or cookie
    if not given or not hmac.compare_digest(given.encode(), token.encode()):
        return "refused: this address needs the token printed by `compile-playground serve`"
    return ""


def _origin(url: str) -> tuple[str, str, int | None] | None:
    """(scheme, host, port) of `url`, the port spelled out; None for what is no origin."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port or {"http": 80, "https": 443}.get(parts.scheme.lower())
    except ValueError:
        return None
    if not parts.scheme or not parts.hostname:
        return None
    return parts.scheme.lower(), parts.hostname.lower(), port


def origin_refusal(origin: str | None, served: list[str]) -> str:
    """Why a WebSocket asked for from `origin` (the browser's Origin header) is refused ("" to
    let it through): only a page of a served origin (same scheme, host and port) may open one,
    so another site's page (cross-site WebSocket hijacking) or a page on another port of this
    machine cannot drive the playground with the attendee's cookie."""
    if not origin:
        return "refused: a WebSocket without an Origin (not from the served page)"
    asked = _origin(origin)
    if asked is None or asked not in {_origin(url) for url in served}:
        return f"refused: a WebSocket from {one_line(origin)[:120]}, not from the served page ({served[0]})"
    return ""


def port_arg(text: str) -> int:
    port = whole_number(text)
    if port is None:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number")
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{port} is not a port (1 to 65535)")
    return port


def count_arg(text: str) -> int:
    count = whole_number(text)
    if count is None:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number")
    if not 1 <= count <= 1000:
        raise argparse.ArgumentTypeError(f"{count}: from 1 to 1000")
    return count


def offline_page(templates: Path) -> str:
    """textual-serve's page template with its font taken from the files served beside it."""
    page = (templates / "app_index.html").read_text(encoding="utf-8")
    return _CDN_LINK.sub(_LOCAL_FONT, page)


def _log(words: str) -> None:
    print(f"compile-playground serve: {words}", file=sys.stderr, flush=True)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:
        """One line, as serve's other refusals (the usage is `--help`'s)."""
        self.exit(2, f"{self.prog}: {one_line(message)}\n")


def _parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="compile-playground serve",
        description="The playground (or a follower) in a browser, one process per tab.",
    )
    what = p.add_mutually_exclusive_group()
    what.add_argument("snippet", nargs="?", help="the snippet the app opens (default: a copy of the bundled one)")
    what.add_argument("--follow", metavar="SESSION", help="serve a follower of this session instead of the app")
    p.add_argument("--host", default="127.0.0.1", help="the address to listen on (127.0.0.1)")
    p.add_argument("--port", type=port_arg, default=8000, help="the port (8000)")
    p.add_argument(
        "--max-connections",
        type=count_arg,
        default=MAX_CONNECTIONS,
        metavar="N",
        help=f"browser tabs served at once, each its own process ({MAX_CONNECTIONS})",
    )
    p.add_argument(
        "--allow-remote",
        action="store_true",
        help="listen on, and answer, addresses other than this machine's (the token still applies)",
    )
    p.add_argument("--token", help=argparse.SUPPRESS)  # tests: a known token
    return p


def app_command(args: argparse.Namespace) -> str:
    """The shell command textual-serve starts for each browser tab. Paths are absolute, so they
    start with `/`: a file named `check` or a folder named `-x` is never read as a command or
    an option."""
    argv = [sys.executable, "-m", "playground"]
    if args.follow:
        argv += ["follow", os.path.abspath(args.follow)]
    elif args.snippet:
        argv.append(os.path.abspath(args.snippet))
    return shlex.join(argv)


def make_server(
    command: str,
    *,
    host: str,
    port: int,
    token: str,
    allow_remote: bool,
    max_connections: int = MAX_CONNECTIONS,
) -> Any:
    """A textual-serve Server for `command`, with the token, address, Origin and connection
    checks in front, and its page made whole without a CDN."""
    import aiohttp_jinja2
    import jinja2
    from aiohttp import web
    from textual_serve.server import Server

    shown = f"[{host}]" if ":" in host else host
    public_url = f"http://{shown}:{port}"
    sockets = {"open": 0}

    @web.middleware
    async def guard(request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]) -> Any:
        query_token = request.query.get("token", "")
        why = refusal(
            token=token,
            allow_remote=allow_remote,
            path=request.path,
            remote=request.remote,
            query_token=query_token,
            cookie=request.cookies.get(COOKIE, ""),
        )
        if why:
            return web.Response(status=403, text=why)
        if request.path == "/ws":
            # Under --allow-remote the page is reached by whatever name the host has there.
            served = [public_url, f"http://{request.host}"] if allow_remote else [public_url]
            why = origin_refusal(request.headers.get("Origin"), served)
            if why:
                _log(why)
                return web.Response(status=403, text=why)
            if sockets["open"] >= max_connections:
                why = f"refused: {sockets['open']} tabs are served already (--max-connections {max_connections})"
                _log(why)
                return web.Response(status=503, text=why)
            sockets["open"] += 1
            try:
                return await handler(request)
            finally:
                sockets["open"] -= 1
        response = await handler(request)
        if query_token and request.path == "/":
            response.set_cookie(COOKIE, token, httponly=True, samesite="Strict", path="/")
        return response

    class GuardedServer(Server):
        async def _make_app(self) -> web.Application:
            app = await super()._make_app()
            app.middlewares.append(guard)
            page = offline_page(Path(self.templates_path))
            aiohttp_jinja2.setup(app, loader=jinja2.DictLoader({"app_index.html": page}))
            return app

        async def on_startup(self, app: web.Application) -> None:
            """Quiet: `serve` says where the page is once it listens (textual-serve's banner
            would come before a failed bind)."""

    return GuardedServer(command, host=host, port=port, title="compile-playground", public_url=public_url)


def run_server(server: Any, ready: str) -> int:
    """Listen, then print `ready` (the page's URL) and serve until SIGINT, SIGTERM or SIGHUP;
    2 with one line on stderr when the address cannot be listened on (in use, not this
    machine's, no permission). No access log: every page load's URL holds the token."""
    from aiohttp import web

    server.initialize_logging()

    async def main() -> int:
        runner = web.AppRunner(await server._make_app(), access_log=None, handle_signals=False, shutdown_timeout=5)
        await runner.setup()
        try:
            try:
                await web.TCPSite(runner, server.host, server.port).start()
            except OSError as exc:
                _log(f"cannot listen on {server.host}:{server.port}: {exc.strerror or exc}")
                return 2
            print(ready, flush=True)
            stop = asyncio.Event()
            loop = asyncio.get_running_loop()
            for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
                loop.add_signal_handler(signum, stop.set)
            await stop.wait()
            return 0
        finally:
            await runner.cleanup()

    return asyncio.run(main())


def serve_main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    if not is_loopback(args.host) and not args.allow_remote:
        print(
            f"compile-playground serve: {args.host} is not this machine only; give --allow-remote to listen there "
            "(anyone who can reach it and has the token drives a playground as you), or reach 127.0.0.1 over "
            "`ssh -L`",
            file=sys.stderr,
        )
        return 2
    try:
        import textual_serve  # noqa: F401
    except ImportError:
        print(
            "compile-playground serve: textual-serve is not installed: pip install 'compile-playground[serve]'",
            file=sys.stderr,
        )
        return 2
    token = args.token or secrets.token_urlsafe(24)
    server = make_server(
        app_command(args),
        host=args.host,
        port=args.port,
        token=token,
        allow_remote=args.allow_remote,
        max_connections=args.max_connections,
    )
    return run_server(server, f"open {server.public_url}/?token={token}")
