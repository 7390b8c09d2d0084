"""A minimal headless-Chromium driver over the DevTools protocol (test helper; needs `websocket-client`).

    with Browser.launch(executable) as browser:
        browser.navigate(url)
        browser.evaluate("document.title")
        browser.screenshot(path)

Events the page emits (console messages, exceptions, network requests) are collected in ``browser.events``.
"""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

import websocket

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--hide-scrollbars",
    "--remote-debugging-port=0",
)


class CDPError(RuntimeError):
    pass


class Browser:
    def __init__(self, process: subprocess.Popen, profile: str, socket: websocket.WebSocket) -> None:
        self.process = process
        self.profile = profile
        self.socket = socket
        self.events: list[dict[str, Any]] = []
        self._next_id = 0

    @classmethod
    def launch(cls, executable: str, timeout: float = 30.0) -> "Browser":
        profile = tempfile.mkdtemp(prefix="nm-chromium-")
        process = subprocess.Popen(
            [executable, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            port = cls._wait_for_port(Path(profile) / "DevToolsActivePort", process, timeout)
            socket = websocket.create_connection(cls._page_socket_url(port, timeout), timeout=timeout, suppress_origin=True)
        except BaseException:
            process.kill()
            process.wait(timeout=10)
            shutil.rmtree(profile, ignore_errors=True)
            raise
        browser = cls(process, profile, socket)
        for domain in ("Page", "Runtime", "Log", "Network"):
            browser.call(f"{domain}.enable")
        return browser

    @staticmethod
    def _wait_for_port(path: Path, process: subprocess.Popen, timeout: float) -> int:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise CDPError(f"chromium exited with {process.returncode} before opening its DevTools port")
            if path.exists():
                first = path.read_text().splitlines()[:1]
                if first and first[0].isdigit():
                    return int(first[0])
            time.sleep(0.05)
        raise CDPError("chromium did not open its DevTools port in time")

    @staticmethod
    def _page_socket_url(port: int, timeout: float) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=timeout) as response:
                targets = json.load(response)
            pages = [t for t in targets if t.get("type") == "page" and t.get("webSocketDebuggerUrl")]
            if pages:
                return pages[0]["webSocketDebuggerUrl"]
            time.sleep(0.05)
        raise CDPError("chromium opened no page target")

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        self._next_id += 1
        message_id = self._next_id
        self.socket.send(json.dumps({"id": message_id, "method": method, "params": params}))
        while True:
            message = json.loads(self.socket.recv())
            if message.get("id") == message_id:
                if "error" in message:
                    raise CDPError(f"{method}: {message['error']}")
                return message.get("result", {})
            if "method" in message:
                self.events.append(message)

    def wait_for_event(self, method: str, timeout: float = 30.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        for event in self.events:
            if event["method"] == method:
                return event
        while time.monotonic() < deadline:
            self.socket.settimeout(max(deadline - time.monotonic(), 0.01))
            message = json.loads(self.socket.recv())
            if "method" in message:
                self.events.append(message)
                if message["method"] == method:
                    return message
        raise CDPError(f"no {method} within {timeout} s")

    def navigate(self, url: str) -> None:
        self.events.clear()
        self.call("Page.navigate", url=url)
        self.wait_for_event("Page.loadEventFired")

    def evaluate(self, expression: str) -> Any:
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise CDPError(f"{expression!r} raised: {result['exceptionDetails']}")
        return result["result"].get("value")

    def type_text(self, selector: str, text: str) -> None:
        """Focus ``selector`` and type ``text`` as keyboard input (fires real input events)."""
        self.evaluate(f"document.querySelector({json.dumps(selector)}).focus()")
        self.call("Input.insertText", text=text)

    def click(self, selector: str) -> None:
        """A real mouse click in the middle of the element (scrolled into view first)."""
        box = self.evaluate(
            f"(() => {{ const el = document.querySelector({json.dumps(selector)}); el.scrollIntoView({{block: 'center'}});"
            " const r = el.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()"
        )
        for kind in ("mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", type=kind, x=box[0], y=box[1], button="left", clickCount=1)

    def console_errors(self) -> list[str]:
        found = []
        for event in self.events:
            params = event.get("params", {})
            if event["method"] == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                found.append(" ".join(str(arg.get("value", arg.get("description"))) for arg in params.get("args", [])))
            elif event["method"] == "Runtime.exceptionThrown":
                details = params.get("exceptionDetails", {})
                found.append(details.get("exception", {}).get("description") or details.get("text", "exception"))
            elif event["method"] == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
                found.append(params["entry"].get("text", ""))
        return found

    def requested_urls(self) -> list[str]:
        return [e["params"]["request"]["url"] for e in self.events if e["method"] == "Network.requestWillBeSent"]

    def screenshot(self, path: Path, width: int = 1400) -> Path:
        """Full-page PNG at ``width`` CSS pixels."""
        height = int(self.evaluate("Math.ceil(document.documentElement.scrollHeight)"))
        self.call("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=False)
        data = self.call("Page.captureScreenshot", format="png", captureBeyondViewport=True)["data"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data))
        return path

    def close(self) -> None:
        try:
            self.socket.close()
        finally:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
            shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self) -> "Browser":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
