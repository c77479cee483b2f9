"""Checks a running `spectrum run --http` from the outside, as a browser and an OSCQuery client
would. Run by Tests/SpectrumCLITests/WebViewTests.swift (inside a private network namespace)
with the venv of scripts/web-test-env.

  web_check.py view URL --tone-hz F --shots DIR
      headless Chromium over the DevTools protocol: the six modes (and surface+) switched with
      the keys and a button, a screenshot of each with frames and without (the page's
      WebSocket never connecting); each differs from the empty page and from the others; in bars mode the tallest
      column is the tone's band; every request the page made went to the server.
  web_check.py view-input URL --input NAME --tone-hz F --first-tone-hz F0 --shots DIR
      with named inputs: the page at ?input=NAME shows its selector on NAME and the bars' tallest
      column at NAME's tone (F); at ?input=no-such-input it says the name is unknown and shows
      the first input (tallest column at F0); picking the first input in the selector puts
      ?input=FIRST in the URL and its tone becomes the tallest column.
  web_check.py oscquery URL --name NAME --control-port P --spectrum BINARY
      python-oscquery reads HOST_INFO and nodes (service info built by hand for 127.0.0.1),
      the whole tree holds every address of `spectrum osc-spec` (outputs read-only, controls
      read-write), unknown paths are 404, and a websockets client LISTENs to the bands and
      receives binary OSC at the frame rate until it IGNOREs them.

Prints one line per check; exits 1 on the first failure.
"""

import argparse
import base64
import io
import json
import os
import re
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

import warnings

import websockets.sync.client

# websockets 17 warns about connect() outside a with-block; the DevTools socket lives as long as the browser.
warnings.filterwarnings("ignore", category=DeprecationWarning)


def fail(message):
    print("FAIL: " + message, flush=True)
    sys.exit(1)


def ok(message):
    print("ok: " + message, flush=True)


def wait_for_server(base, seconds=30):
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(base + "?HOST_INFO", timeout=2) as response:
                if response.status == 200:
                    return json.load(response)
        except (urllib.error.URLError, ConnectionError, OSError):
            time.sleep(0.2)
    fail(f"no answer from {base}?HOST_INFO within {seconds} s")


# MARK: - Chromium over the DevTools protocol


class Browser:
    """Headless Chromium with its own profile, driven over one page's DevTools WebSocket."""

    def __init__(self, width=1280, height=800):
        self.profile = tempfile.mkdtemp(prefix="spectrum-chromium-")
        binary = shutil.which("chromium") or shutil.which("chromium-browser")
        if not binary:
            fail("chromium is not installed (scripts/install-deps installs it)")
        self.process = subprocess.Popen(
            [binary, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--no-default-browser-check",
             "--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-extensions",
             "--disable-default-apps", "--metrics-recording-only", "--hide-scrollbars", "--mute-audio",
             f"--window-size={width},{height}", f"--user-data-dir={self.profile}", "--remote-debugging-port=0", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port_file = os.path.join(self.profile, "DevToolsActivePort")
        deadline = time.time() + 30
        while not os.path.exists(port_file) or not open(port_file).read().strip():
            if time.time() > deadline or self.process.poll() is not None:
                self.close()
                fail("chromium did not open its DevTools port")
            time.sleep(0.1)
        port = open(port_file).read().split()[0]
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as response:
            pages = [target for target in json.load(response) if target["type"] == "page"]
        self.socket = websockets.sync.client.connect(pages[0]["webSocketDebuggerUrl"], max_size=64 * 1024 * 1024)
        self.next_id = 0
        self.events = []
        self.call("Page.enable")
        self.call("Network.enable")
        self.call("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=False)

    def call(self, method, **params):
        self.next_id += 1
        self.socket.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            message = json.loads(self.socket.recv(timeout=60))
            if message.get("id") == self.next_id:
                if "error" in message:
                    fail(f"{method}: {message['error']}")
                return message.get("result", {})
            self.events.append(message)

    def pump(self, seconds):
        """Lets the page run for `seconds` of real time, collecting events."""
        deadline = time.time() + seconds
        while time.time() < deadline:
            try:
                self.events.append(json.loads(self.socket.recv(timeout=max(0.01, deadline - time.time()))))
            except TimeoutError:
                break

    def evaluate(self, expression):
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            fail(f"page script failed: {expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def frames_seen(self, seconds=10):
        """The page's frame count, once its script has run (right after a navigation it has not yet)."""
        deadline = time.time() + seconds
        while True:
            count = self.evaluate("typeof framesSeen === 'undefined' ? null : framesSeen")
            if count is not None:
                return count
            if time.time() > deadline:
                fail(f"the page's script did not run within {seconds} s")
            self.pump(0.1)

    def screenshot(self, path):
        data = base64.b64decode(self.call("Page.captureScreenshot", format="png")["data"])
        with open(path, "wb") as file:
            file.write(data)
        return data

    def key(self, character):
        for kind in ("keyDown", "keyUp"):
            self.call("Input.dispatchKeyEvent", type=kind, key=character, text=character if kind == "keyDown" else "",
                      code="Digit" + character, windowsVirtualKeyCode=ord(character))

    def requested_urls(self):
        urls = []
        for event in self.events:
            method = event.get("method")
            if method == "Network.requestWillBeSent":
                urls.append(event["params"]["request"]["url"])
            elif method == "Network.webSocketCreated":
                urls.append(event["params"]["url"])
        return urls

    def close(self):
        try:
            self.socket.close()
        except Exception:
            pass
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
        shutil.rmtree(self.profile, ignore_errors=True)


def image(data):
    from PIL import Image
    return Image.open(io.BytesIO(data)).convert("RGB")


def difference(first, second):
    """Fraction of pixels that differ by more than 24 levels in some channel."""
    from PIL import ImageChops
    delta = ImageChops.difference(image(first), image(second)).convert("L").point(lambda v: 255 if v > 24 else 0)
    histogram = delta.histogram()
    return histogram[255] / (delta.width * delta.height)


MODES = [("1", "bars"), ("2", "curve"), ("3", "circular"), ("4", "spectrogram"), ("5", "surface"), ("5", "surface+"), ("6", "waveform")]


def check_view(arguments):
    base = arguments.url
    wait_for_server(base)
    with urllib.request.urlopen(urllib.request.Request(base, headers={"Accept": "text/html"}), timeout=10) as response:
        html = response.read().decode()
    external = sorted(set(re.findall(r"(?:https?|wss?)://[^\s\"'<>)]+", html)))
    if external:
        fail(f"the page names outside addresses: {external}")
    if re.search(r"<(script|link|img|iframe)[^>]+(src|href)=", html):
        fail("the page loads a resource (src/href): it must be self-contained")
    ok(f"the page is self-contained ({len(html)} bytes, no src/href, no absolute URL)")

    os.makedirs(arguments.shots, exist_ok=True)
    browser = Browser()
    try:
        # The empty page: the same page whose WebSocket never connects (DevTools' URL blocking
        # does not apply to WebSockets, so the constructor is replaced before the page loads).
        stub = browser.call("Page.addScriptToEvaluateOnNewDocument",
                            source="window.WebSocket = class { constructor() {} send() {} close() {} };")
        empty = {}
        for key, mode in MODES:
            browser.call("Page.navigate", url=base + "#" + mode)
            browser.pump(1.0)
            empty[mode] = browser.screenshot(os.path.join(arguments.shots, f"empty-{mode.replace('+', '-plus')}.png"))
        if browser.frames_seen() != 0:
            fail("the empty page received frames: the stub did not hold its WebSocket back")
        browser.call("Page.removeScriptToEvaluateOnNewDocument", identifier=stub["identifier"])

        browser.call("Page.navigate", url="about:blank")
        browser.call("Page.navigate", url=base)
        deadline = time.time() + 20
        while browser.frames_seen() < 60:
            if time.time() > deadline:
                fail(f"the page received {browser.frames_seen()} frames in 20 s")
            browser.pump(0.2)
        ok("the page receives frames over its WebSocket")

        shots = {}
        for key, mode in MODES:
            if mode == "curve":
                browser.evaluate("document.querySelector('button[data-mode=\"curve\"]').click()")
            else:
                browser.key(key)
            browser.pump(2.5 if mode in ("spectrogram", "surface") else 1.2)
            shown = browser.evaluate("mode")
            if shown != mode:
                fail(f"after key {key} the page shows {shown}, expected {mode}")
            shots[mode] = browser.screenshot(os.path.join(arguments.shots, f"{mode.replace('+', '-plus')}.png"))
        ok("keys 1–6 (5 twice for surface+) and a button switch the modes")

        for mode in shots:
            changed = difference(shots[mode], empty[mode])
            if changed < 0.005:
                fail(f"{mode}: the screenshot differs from the empty page in only {changed:.2%} of its pixels")
        ok("every mode differs from the empty page: " + ", ".join(f"{m} {difference(shots[m], empty[m]):.1%}" for m in shots))
        names = list(shots)
        for i, first in enumerate(names):
            for second in names[i + 1:]:
                changed = difference(shots[first], shots[second])
                if changed < 0.005:
                    fail(f"{first} and {second} differ in only {changed:.2%} of their pixels")
        ok("every mode differs from every other")

        # Bars: the tallest column is the tone's band.
        browser.key("1")
        browser.pump(1.5)
        tallest_bar_is_the_tone(browser, arguments, os.path.join(arguments.shots, "bars-check.png"))

        urls = browser.requested_urls()
        origin = base.rstrip("/")
        websocket_origin = "ws" + origin[len("http"):]
        outside = [url for url in urls if not (url.startswith(origin + "/") or url == origin or url.startswith(websocket_origin + "/"))]
        if outside:
            fail(f"the page requested outside the server: {sorted(set(outside))}")
        if not any(url.startswith(websocket_origin + "/view") for url in urls):
            fail(f"no WebSocket to {websocket_origin}/view among the requests: {urls}")
        ok(f"all {len(urls)} requests of the page went to the server")
    finally:
        browser.close()


def tallest_bar_is_the_tone(browser, arguments, shot_path):
    """Fails unless the bars view's tallest column (read from a screenshot) is the band of --tone-hz."""
    layout = browser.evaluate("""(() => { const r = canvas.getBoundingClientRect(), a = plotArea();
            return {left: r.left, top: r.top, dpr: dpr, x: a.x, y: a.y, w: a.w, h: a.h, bands: bandCount, centres: centres}; })()""")
    bars = image(browser.screenshot(shot_path))
    scale = 1 / layout["dpr"]
    heights = []
    for band in range(layout["bands"]):
        x = int(layout["left"] + (layout["x"] + (band + 0.45) * layout["w"] / layout["bands"]) * scale)
        bottom = int(layout["top"] + (layout["y"] + layout["h"]) * scale) - 2
        top = int(layout["top"] + layout["y"] * scale)
        height = 0
        for y in range(bottom, top, -1):
            r, g, b = bars.getpixel((x, y))
            if max(r, g, b) - min(r, g, b) > 40:  # coloured bar, not the black background or a white peak mark
                height = bottom - y
        heights.append(height)
    tallest = max(range(len(heights)), key=lambda band: heights[band])
    expected = min(range(len(layout["centres"])), key=lambda band: abs(layout["centres"][band] - arguments.tone_hz))
    if abs(tallest - expected) > 2:
        fail(f"bars: the tallest column is band {tallest} ({layout['centres'][tallest]:.0f} Hz, {heights[tallest]} px), the tone's is {expected}")
    ok(f"bars: the tallest column is band {tallest} ({heights[tallest]} px), the {arguments.tone_hz:.0f} Hz tone's band is {expected}")


def check_view_input(arguments):
    """The page with ?input=NAME shows that input (its selector on NAME, the bars' tallest column
    at that input's tone, --tone-hz); with a name not there it says so and shows the first input."""
    base = arguments.url
    wait_for_server(base)
    os.makedirs(arguments.shots, exist_ok=True)
    browser = Browser()
    try:
        for name, tone_hz in ((arguments.input, arguments.tone_hz), ("no-such-input", arguments.first_tone_hz)):
            browser.call("Page.navigate", url="about:blank")
            browser.call("Page.navigate", url=base + "?input=" + name + "#bars")
            deadline = time.time() + 20
            while browser.frames_seen() < 60:
                if time.time() > deadline:
                    fail(f"?input={name}: the page received {browser.frames_seen()} frames in 20 s")
                browser.pump(0.2)
            browser.pump(1.0)
            selector = browser.evaluate("""(() => { const s = document.getElementById("input");
                return {hidden: s.hidden, value: s.value, options: [...s.options].map((o) => o.value),
                        note: document.getElementById("inputnote").textContent}; })()""")
            if selector["hidden"] or arguments.input not in selector["options"]:
                fail(f"?input={name}: the selector is {selector}")
            if name == arguments.input and (selector["value"] != name or selector["note"]):
                fail(f"?input={name}: the selector is {selector}")
            if name != arguments.input and ("no input" not in selector["note"] or selector["value"] != selector["options"][0]):
                fail(f"?input={name}: the page does not say the name is unknown or does not show the first input: {selector}")
            ok(f"?input={name}: the selector shows {selector['value']} of {selector['options']}" + (f", the page says {selector['note']!r}" if selector["note"] else ""))
            arguments.tone_hz = tone_hz
            tallest_bar_is_the_tone(browser, arguments, os.path.join(arguments.shots, f"bars-input-{name}.png"))
            if name == arguments.input:
                # Picking the first input in the selector: the URL follows and its frames come.
                browser.evaluate("""(() => { const s = document.getElementById("input");
                    s.value = s.options[0].value; s.dispatchEvent(new Event("change")); })()""")
                browser.pump(2.0)
                search = browser.evaluate("location.search")
                first = selector["options"][0]
                if search != "?input=" + first:
                    fail(f"after picking {first} in the selector the URL's query is {search!r}")
                ok(f"picking {first} in the selector: the URL's query is {search}")
                arguments.tone_hz = arguments.first_tone_hz
                tallest_bar_is_the_tone(browser, arguments, os.path.join(arguments.shots, f"bars-picked-{first}.png"))
    finally:
        browser.close()


# MARK: - OSCQuery


def osc_message(data):
    """(address, type tags, arguments) of one binary OSC message (f, i, s)."""
    def string(offset):
        end = data.index(b"\0", offset)
        return data[offset:end].decode(), (end + 4) & ~3
    address, offset = string(0)
    tags, offset = string(offset)
    values = []
    for tag in tags[1:]:
        if tag == "f":
            values.append(struct.unpack(">f", data[offset:offset + 4])[0]); offset += 4
        elif tag == "i":
            values.append(struct.unpack(">i", data[offset:offset + 4])[0]); offset += 4
        elif tag == "s":
            value, offset = string(offset); values.append(value)
    return address, tags, values


def check_oscquery(arguments):
    from pythonoscquery.osc_query_client import OSCQueryClient
    from zeroconf import ServiceInfo

    base = arguments.url
    wait_for_server(base)
    port = int(base.rstrip("/").rsplit(":", 1)[1])
    # Built by hand for 127.0.0.1 (mDNS discovery has its own check, mdns_check.py).
    info = ServiceInfo("_oscjson._tcp.local.", "spectrum._oscjson._tcp.local.", addresses=[socket.inet_aton("127.0.0.1")], port=port)
    client = OSCQueryClient(info)
    host = client.get_host_info()
    if host is None or host.name != arguments.name:
        fail(f"HOST_INFO NAME: expected {arguments.name}, got {host and host.name}")
    if host.extensions.get("LISTEN") is not True or host.osc_transport != "UDP":
        fail(f"HOST_INFO: expected LISTEN true and OSC_TRANSPORT UDP, got {host}")
    if host.osc_port != arguments.control_port or host.osc_ip != "127.0.0.1":
        fail(f"HOST_INFO: expected OSC 127.0.0.1:{arguments.control_port} (the control input), got {host.osc_ip}:{host.osc_port}")
    ok(f"python-oscquery reads HOST_INFO: {host}")

    for path, count in (("/spectrum/bands", 128), ("/spectrum/groups", 8), ("/spectrum/tempo", 2), ("/spectrum/level/db", 2)):
        # A leaf has a VALUE once frames flow, which a loaded machine may delay: poll, up to 15 s.
        deadline = time.time() + 15
        while True:
            node = client.query_node(path)
            if (node is not None and len(node.value or []) == count) or time.time() > deadline:
                break
            time.sleep(0.2)
        if node is None or node.full_path != path or int(node.access) != 1 or len(node.value or []) != count:
            fail(f"python-oscquery {path}: expected a read-only node with {count} values, got {node!r}")
    ok("python-oscquery reads /spectrum/bands (128 values), /groups, /tempo and /level/db as read-only nodes")
    if client.query_node("/spectrum/no-such-address") is not None:
        fail("python-oscquery: an unknown path gave a node")

    for path in ("/spectrum/no-such-address", "/nothing", "/spectrum/bands/more"):
        try:
            urllib.request.urlopen(base.rstrip("/") + path, timeout=5)
            fail(f"{path}: expected 404, got 200")
        except urllib.error.HTTPError as error:
            if error.code != 404:
                fail(f"{path}: expected 404, got {error.code}")
    ok("unknown paths are 404")

    # The whole tree against the table `spectrum osc-spec` prints.
    table = subprocess.run([arguments.spectrum, "osc-spec"], check=True, capture_output=True, text=True).stdout
    addresses = re.findall(r"^\| `(/[^`]+)` \| `([^`]+)`", table, re.M)
    with urllib.request.urlopen(base, timeout=10) as response:
        tree = json.load(response)

    def find(node, path):
        for part in path.strip("/").split("/"):
            node = node.get("CONTENTS", {}).get(part)
            if node is None:
                return None
        return node

    for address, display_types in addresses:
        node = find(tree, address)
        expected_count = sum(int(run.split("×")[1]) if "×" in run else len(run) for run in display_types.split())
        if node is None or node.get("FULL_PATH") != address or node.get("ACCESS") != 1:
            fail(f"tree: {address} missing or not read-only: {node and {k: v for k, v in node.items() if k != 'CONTENTS'}}")
        if len(node.get("TYPE", "")) != expected_count or len(node.get("RANGE", [])) != expected_count or not node.get("DESCRIPTION"):
            fail(f"tree: {address}: TYPE/RANGE/DESCRIPTION do not match the table ({display_types})")
    controls = {"relearn": 2, "tap": 2, "reference": 3, "lead_ms": 3, "bpm_range": 3, "preset": 3, "blackout": 3}
    for name, access in controls.items():
        node = find(tree, "/spectrum/control/" + name)
        if node is None or node.get("ACCESS") != access:
            fail(f"tree: /spectrum/control/{name}: expected ACCESS {access}, got {node}")
    reference = find(tree, "/spectrum/control/reference")
    if reference["RANGE"] != [{"MIN": 415, "MAX": 466}] or reference["TYPE"] != "f":
        fail(f"tree: /spectrum/control/reference: {reference}")
    bands = find(tree, "/spectrum/bands")
    if bands["RANGE"][0] != {"MIN": 0, "MAX": 1} or len(bands.get("VALUE", [])) != 128:
        fail(f"tree: /spectrum/bands RANGE/VALUE: {bands['RANGE'][0]}, {len(bands.get('VALUE', []))} values")
    ok(f"the tree holds all {len(addresses)} addresses of `spectrum osc-spec` (read-only, TYPE, RANGE, DESCRIPTION, VALUE) and 7 control addresses (read-write)")

    # LISTEN / IGNORE over the WebSocket.
    websocket_url = "ws" + base[len("http"):]
    with websockets.sync.client.connect(websocket_url, max_size=1 << 20) as listener:
        listener.send(json.dumps({"COMMAND": "LISTEN", "DATA": "/spectrum/bands"}))
        first = None
        count = 0
        start = time.time()
        while time.time() - start < 4.0:
            try:
                message = listener.recv(timeout=1.0)
            except TimeoutError:
                continue
            if isinstance(message, str):
                continue
            address, tags, values = osc_message(message)
            if address != "/spectrum/bands" or tags != "," + "f" * 128 or not all(0 <= v <= 1 for v in values):
                fail(f"LISTEN: unexpected message {address} {tags[:8]}… {len(values)} values")
            if first is None:
                first = time.time()
            count += 1
        if first is None:
            fail("LISTEN /spectrum/bands: no message in 4 s")
        rate = (count - 1) / (time.time() - first)
        if rate < 0.6 * arguments.rate_hz:
            fail(f"LISTEN /spectrum/bands: {rate:.1f} messages per second, expected about {arguments.rate_hz}")
        ok(f"LISTEN /spectrum/bands: {count} binary OSC messages, {rate:.1f} per second (frame rate {arguments.rate_hz} Hz)")
        listener.send(json.dumps({"COMMAND": "IGNORE", "DATA": "/spectrum/bands"}))
        time.sleep(0.5)
        while True:  # drain what was under way
            try:
                listener.recv(timeout=0.2)
            except TimeoutError:
                break
        late = 0
        end = time.time() + 1.0
        while time.time() < end:
            try:
                listener.recv(timeout=0.2)
                late += 1
            except TimeoutError:
                pass
        if late:
            fail(f"IGNORE: {late} messages still came in the second after it")
        ok("IGNORE stops the stream")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("check", choices=["view", "view-input", "oscquery"])
    parser.add_argument("url")
    parser.add_argument("--tone-hz", type=float, default=1000)
    parser.add_argument("--shots", default="web-shots")
    parser.add_argument("--name", default="spectrum")
    parser.add_argument("--control-port", type=int, default=0)
    parser.add_argument("--rate-hz", type=float, default=60)
    parser.add_argument("--spectrum", default="spectrum")
    parser.add_argument("--input", help="view-input: the named input to ask for (its tone is --tone-hz)")
    parser.add_argument("--first-tone-hz", type=float, help="view-input: the first input's tone")
    arguments = parser.parse_args()
    if not arguments.url.endswith("/"):
        arguments.url += "/"
    {"view": check_view, "view-input": check_view_input, "oscquery": check_oscquery}[arguments.check](arguments)


if __name__ == "__main__":
    main()
