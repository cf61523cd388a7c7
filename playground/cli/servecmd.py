"""`compile-playground serve`: the app, or a follower, in a browser through textual-serve.

Each browser tab gets its own process (textual-serve starts the command per connection). The
server listens on 127.0.0.1 unless told otherwise, refuses to listen anywhere else without
--allow-remote (reach it with `ssh -L 8000:127.0.0.1:8000 server`), refuses requests from
other addresses likewise, and wants a secret token: in the URL it prints for the page, then in
an HttpOnly, SameSite=Strict cookie for the WebSocket that carries the app (so another site's
page cannot open one). textual-serve is an optional extra: `pip install compile-playground[serve]`.
"""

from __future__ import annotations

import argparse
import hmac
import ipaddress
import secrets
import shlex
import sys
from collections.abc import Awaitable, Callable
from typing import Any

#: The cookie the page's WebSocket carries the token in.
COOKIE = "compile_playground_token"


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


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="compile-playground serve",
        description="The playground (or a follower) in a browser, one process per tab.",
    )
    what = p.add_mutually_exclusive_group()
    what.add_argument("snippet", nargs="?", help="the snippet the app opens (default: a copy of the bundled one)")
    what.add_argument("--follow", metavar="SESSION", help="serve a follower of this session instead of the app")
    p.add_argument("--host", default="127.0.0.1", help="the address to listen on (127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="the port (8000)")
    p.add_argument(
        "--allow-remote",
        action="store_true",
        help="listen on, and answer, addresses other than this machine's (the token still applies)",
    )
    p.add_argument("--token", help=argparse.SUPPRESS)  # tests: a known token
    return p


def app_command(args: argparse.Namespace) -> str:
    """The shell command textual-serve starts for each browser tab."""
    argv = [sys.executable, "-m", "playground"]
    if args.follow:
        argv += ["follow", args.follow]
    elif args.snippet:
        argv.append(args.snippet)
    return shlex.join(argv)


def make_server(command: str, *, host: str, port: int, token: str, allow_remote: bool) -> Any:
    """A textual-serve Server for `command`, with the token and address checks in front."""
    from aiohttp import web
    from textual_serve.server import Server

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
        response = await handler(request)
        if query_token and request.path == "/":
            response.set_cookie(COOKIE, token, httponly=True, samesite="Strict", path="/")
        return response

    class GuardedServer(Server):
        async def _make_app(self) -> web.Application:
            app = await super()._make_app()
            app.middlewares.append(guard)
            return app

    shown = f"[{host}]" if ":" in host else host
    return GuardedServer(command, host=host, port=port, title="compile-playground", public_url=f"http://{shown}:{port}")


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
    server = make_server(app_command(args), host=args.host, port=args.port, token=token, allow_remote=args.allow_remote)
    print(f"open {server.public_url}/?token={token}", flush=True)
    server.serve()
    return 0
