#!/usr/bin/env python3
"""Attacks a running Lightbox for --seconds while bench/attack.sh runs the
load test beside it: a login flood (random emails), slowloris clients
(request heads never finished) and zips nobody reads. Standard library
only. Prints what the server did with each and exits 1 when a bound did
not hold: slowloris sockets never closed by the server, flood logins left
unanswered or never throttled, or unread zips never cut off."""

import argparse
import json
import random
import socket
import threading
import time
import urllib.request

stop = threading.Event()
lock = threading.Lock()
counts = {}


def count(key, n=1):
    with lock:
        counts[key] = counts.get(key, 0) + n


def rpc(url, method, params, token=None, client=None):
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
    req = urllib.request.Request(url + "/rpc", body, {"Content-Type": "application/json"})
    if token:
        req.add_header("Authorization", "Bearer " + token)
    if client:
        # The server trusts 127.0.0.1 as a proxy (attack.sh): each flood
        # login comes from the address it names, as from a botnet.
        req.add_header("X-Forwarded-For", client)
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())


def login_flood(url, one_address):
    """Random emails, from one address (throttled past its window) or from
    a new address each time (hashed, bounded by the hashing semaphore)."""
    while not stop.is_set():
        email = "flood%d@example.com" % random.randrange(1 << 30)
        if one_address:
            client = "203.0.113.7"
        else:
            client = "198.18.%d.%d" % (random.randrange(256), random.randrange(1, 255))
        try:
            answer = rpc(url, "auth.login", {"email": email, "password": "guess-guess"}, client=client)
            code = answer.get("error", {}).get("code")
            count("login_answered")
            if answer.get("error", {}).get("data", {}).get("reason") == "throttled":
                count("login_throttled")
            elif code != 1001:
                count("login_unexpected")
        except Exception:
            count("login_unanswered")


def hostport(url):
    host, port = url.split("//", 1)[1].rsplit(":", 1)
    return host, int(port)


def held_socket(url, payload, key, hold_limit):
    """Sends `payload`, never reads; counts how the server ended it."""
    while not stop.is_set():
        s = socket.create_connection(hostport(url))
        s.sendall(payload)
        opened = time.time()
        status = None
        s.settimeout(0.5)
        closed = False
        while not stop.is_set():
            try:
                # Peek without consuming: a zip's bytes stay unread.
                data = s.recv(12, socket.MSG_PEEK)
                if not data:
                    closed = True
                    break
                if key == "zip":
                    # A zip being sent, or a visitor over the cap (429/503).
                    status = "zip" if data.startswith(b"HTTP/1.1 200") else "zip_refused"
                    time.sleep(0.5)
            except socket.timeout:
                pass
            except OSError:
                closed = True
                break
            if time.time() - opened > hold_limit:
                break
        name = status if key == "zip" and status else key
        count(name + ("_closed_by_server" if closed else "_still_open"))
        s.close()


def ready_archive(url, token):
    deadline = time.time() + 120
    while time.time() < deadline:
        items = rpc(url, "image.list", {"limit": 50}, token)["result"]["items"]
        for img in items:
            if img["status"] == "ready" and img["size_bytes"] > 1 << 20:
                return rpc(url, "image.archiveToken", {"id": img["id"]}, token)["result"]["url"]
        time.sleep(1)
    return None


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--url", required=True)
    p.add_argument("--email", required=True)
    p.add_argument("--password", required=True)
    p.add_argument("--seconds", type=int, default=30)
    p.add_argument("--header-timeout", type=int, default=10)
    a = p.parse_args()
    token = rpc(a.url, "auth.login", {"email": a.email, "password": a.password})["result"]["access_token"]
    threads = [threading.Thread(target=login_flood, args=(a.url, i < 4)) for i in range(16)]
    slow = b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: "
    hold = a.header_timeout * 3
    threads += [threading.Thread(target=held_socket, args=(a.url, slow, "slowloris", hold)) for _ in range(100)]
    archive = ready_archive(a.url, token)
    if archive:
        req = ("GET %s HTTP/1.1\r\nHost: x\r\n\r\n" % archive).encode()
        threads += [threading.Thread(target=held_socket, args=(a.url, req, "zip", 3600)) for _ in range(20)]
    for t in threads:
        t.daemon = True
        t.start()
    time.sleep(a.seconds)
    stop.set()
    for t in threads:
        t.join(timeout=5)
    print("attack:", json.dumps(counts, sort_keys=True))
    failed = []
    if counts.get("slowloris_still_open", 0):
        failed.append("slowloris sockets outlived 3x the header timeout")
    if not counts.get("slowloris_closed_by_server"):
        failed.append("no slowloris socket was closed by the server")
    if counts.get("login_unanswered", 0) > counts.get("login_answered", 0) // 100:
        failed.append("flood logins went unanswered")
    if not counts.get("login_throttled"):
        failed.append("no flood login from one address was throttled")
    if not archive:
        failed.append("no photo to zip")
    elif not counts.get("zip_closed_by_server"):
        failed.append("no unread zip was cut off by the server")
    if failed:
        print("attack: FAILED:", "; ".join(failed))
        raise SystemExit(1)


if __name__ == "__main__":
    main()
