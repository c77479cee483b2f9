"""Finds a running `spectrum run --http 0.0.0.0:PORT` over mDNS as OSCQuery clients do, then
sees the announcement go when spectrum stops. Run by
Tests/SpectrumCLITests/ServiceAnnouncementTests.swift inside the private network of
SpectrumTestSupport's PrivateAvahi (with its DBUS_SYSTEM_BUS_ADDRESS), in the venv of
scripts/web-test-env.

  mdns_check.py --name NAME --port PORT [--timeout S]
      1. python-oscquery's OSCQueryBrowser (python-zeroconf) discovers `_oscjson._tcp`; its
         find_service_by_name(NAME) asks each service's HOST_INFO over HTTP at the resolved
         address; the service found is called NAME, on PORT, and its HOST_INFO NAME is NAME.
      2. `avahi-browse -rpt _oscjson._tcp` resolves NAME to PORT on every interface, and
         `GET /?HOST_INFO` at each resolved address answers NAME.
      Then it prints "found" and waits for a line on standard input (the test stops spectrum):
      3. the browser sees the service removed (the daemon's goodbye packets) and avahi-browse no
         longer lists it.

Prints one line per check ("ok: …"); exits 1 on the first failure.
"""

import argparse
import json
import os
import subprocess
import sys
import time
import urllib.request

from pythonoscquery.osc_query_browser import OSCQueryBrowser
from pythonoscquery.osc_query_client import OSCQueryClient

SERVICE_TYPE = "_oscjson._tcp"
# The private network has no proxy: requests (python-oscquery) and urllib must go direct.
os.environ["NO_PROXY"] = os.environ["no_proxy"] = "*"


def fail(message):
    print(f"FAIL: {message}", flush=True)
    os._exit(1)  # not sys.exit: interpreter shutdown can wait on zeroconf's threads


def ok(message):
    print(f"ok: {message}", flush=True)


def wait_for(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    fail(f"{what} within {timeout} s")


def avahi_entries(name):
    """Resolved `=` lines of avahi-browse -rpt for `name`: (interface, address, port, txt)."""
    result = subprocess.run(["avahi-browse", "-rpt", SERVICE_TYPE], capture_output=True, text=True, timeout=30)
    if result.returncode != 0:
        fail(f"avahi-browse exited {result.returncode}: {result.stderr.strip()}")
    entries = []
    for line in result.stdout.splitlines():
        fields = line.split(";")
        # =;iface;proto;name;type;domain;host;address;port;txt  (the name escapes a space as \032)
        if fields[0] == "=" and fields[3].replace("\\032", " ") == name:
            entries.append((fields[1], fields[7], int(fields[8]), fields[9]))
    return entries


def host_info_name(address, port):
    with urllib.request.urlopen(f"http://{address}:{port}/?HOST_INFO", timeout=5) as response:
        return json.loads(response.read())["NAME"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--name", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--timeout", type=float, default=20)
    arguments = parser.parse_args()
    name, port = arguments.name, arguments.port

    browser = OSCQueryBrowser()

    def found():
        try:
            return browser.find_service_by_name(name)
        except Exception:  # a service not resolved yet (None) or HOST_INFO not answering
            return None

    service = wait_for(found, arguments.timeout,
                       f"OSCQueryBrowser did not find a service whose HOST_INFO is called {name}")
    if service.port != port:
        fail(f"OSCQueryBrowser resolved port {service.port}, the web server listens on {port}")
    if service.name != f"{name}.{SERVICE_TYPE}.local.":
        fail(f"OSCQueryBrowser's service is called {service.name!r}, expected {name}.{SERVICE_TYPE}.local.")
    client = OSCQueryClient(service)
    address = client._get_ip_str()
    if client.get_host_info().name != name:
        fail(f"HOST_INFO at {address}:{service.port} is called {client.get_host_info().name!r}")
    ok(f"OSCQueryBrowser found {service.name} at {address}:{service.port}; its HOST_INFO NAME is {name}")

    entries = wait_for(lambda: avahi_entries(name), arguments.timeout, f"avahi-browse did not resolve {name}")
    for interface, address, resolved_port, txt in entries:
        if resolved_port != port:
            fail(f"avahi-browse resolved {name} on {interface} to port {resolved_port}, expected {port}")
        if host_info_name(address, resolved_port) != name:
            fail(f"HOST_INFO at {address}:{resolved_port} does not answer NAME {name}")
    ok(f"avahi-browse resolved {name} to port {port} at " + ", ".join(f"{a} ({i})" for i, a, _, _ in entries)
       + "; HOST_INFO answers at each")

    print("found", flush=True)
    sys.stdin.readline()
    wait_for(lambda: all(svc.name != service.name for svc in browser.get_discovered_oscquery()), arguments.timeout,
             "OSCQueryBrowser still lists the service after spectrum stopped")
    ok("OSCQueryBrowser saw the service removed after spectrum stopped")
    wait_for(lambda: not avahi_entries(name), arguments.timeout, "avahi-browse still resolves the service after spectrum stopped")
    ok("avahi-browse no longer lists it")
    browser.zc.close()


if __name__ == "__main__":
    main()
