#!/usr/bin/env python3
"""Attacks a running Lightbox for --seconds while bench/attack.sh runs the
load test beside it: a login flood (random emails), the same from one
address with a forged, rotating `Forwarded` header, a stolen session
guessing the current password of `account.setPassword`, slowloris clients
(request heads never finished) and zips nobody reads. Standard library
only. Prints what the server did with each and exits 1 when a bound did
not hold: slowloris sockets never closed by the server, flood logins left
unanswered or never throttled, forged addresses believed, guesses by
re-authentication never throttled, or unread zips never cut off."""

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


def rpc(url, method, params, token=None, client=None, forged=None):
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
    req = urllib.request.Request(url + "/rpc", body, {"Content-Type": "application/json"})
    if token:
        req.add_header("Authorization", "Bearer " + token)
    if client:
        # The server trusts 127.0.0.1 as a proxy (attack.sh): each flood
        # login comes from the address it names, as from a botnet.
        req.add_header("X-Forwarded-For", client)
    if forged:
        # What a client writes itself; the proxy writes X-Forwarded-For.
        req.add_header("Forwarded", "for=" + forged)
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())


def random_address(first="198.18"):
    return "%s.%d.%d" % (first, random.randrange(256), random.randrange(1, 255))


def classify(prefix, answer):
    """Counts one answer of a password check: throttled (1001 refused before
    checking), checked (1001 wrong_credentials), queue_full (4002: the
    hashing queue refused it at once) or unexpected."""
    error = answer.get("error", {})
    reason = error.get("data", {}).get("reason")
    count(prefix + "_answered")
    if reason == "throttled":
        count(prefix + "_throttled")
    elif reason == "wrong_credentials":
        count(prefix + "_checked")
    elif error.get("code") == 4002:
        count(prefix + "_queue_full")
    else:
        count(prefix + "_unexpected")


def login_flood(url, one_address):
    """Random emails, from one address (throttled past its failures) or
    from a new address each time (hashed, or refused with 4002 past the
    hashing queue's bound)."""
    while not stop.is_set():
        email = "flood%d@example.com" % random.randrange(1 << 30)
        client = "203.0.113.7" if one_address else random_address()
        try:
            answer = rpc(url, "auth.login", {"email": email, "password": "guess-guess"}, client=client)
            classify("login", answer)
        except Exception:
            count("login_unanswered")


def forged_flood(url):
    """Random emails from one address, each naming a new one in a forged
    `Forwarded` header: throttled like any one address."""
    while not stop.is_set():
        email = "forged%d@example.com" % random.randrange(1 << 30)
        try:
            answer = rpc(url, "auth.login", {"email": email, "password": "guess-guess"},
                         client="203.0.113.8", forged=random_address("192.0.2"))
            classify("forged", answer)
        except Exception:
            count("forged_unanswered")


def reauth_flood(url, token):
    """A stolen session guessing the current password from new addresses:
    held back by the account's budget like a login spray."""
    while not stop.is_set():
        params = {"current_password": "guess-%d" % random.randrange(1 << 30),
                  "new_password": "taken-over-1"}
        try:
            answer = rpc(url, "account.setPassword", params, token=token, client=random_address())
            classify("reauth", answer)
        except Exception:
            count("reauth_unanswered")


def hostport(url):
    host, port = url.split("//", 1)[1].rsplit(":", 1)
    return host, int(port)


def slowloris(url, payload, hold_limit):
    """Sends half a request head and never finishes it; counts whether the
    server closed the socket within `hold_limit`. A socket still waiting
    when the attack ends has not had its chance yet and is not counted."""
    while not stop.is_set():
        s = socket.create_connection(hostport(url))
        s.sendall(payload)
        opened = time.time()
        s.settimeout(0.5)
        outcome = None
        while outcome is None:
            try:
                if not s.recv(4096):
                    outcome = "closed_by_server"
            except socket.timeout:
                pass
            except OSError:
                outcome = "closed_by_server"
            if outcome is None and time.time() - opened > hold_limit:
                outcome = "still_open"
            if outcome is None and stop.is_set():
                break
        if outcome:
            count("slowloris_" + outcome)
        s.close()


def http_body_complete(raw):
    """Whether `raw` (a whole HTTP/1.1 response as read to EOF) carries its
    whole body: chunked with its last chunk, or Content-Length bytes."""
    head, _, body = raw.partition(b"\r\n\r\n")
    headers = head.lower()
    if b"transfer-encoding: chunked" in headers:
        return body.endswith(b"0\r\n\r\n")
    for line in headers.split(b"\r\n"):
        if line.startswith(b"content-length:"):
            return len(body) >= int(line.split(b":", 1)[1])
    return False


def unread_zip(url, request, hold):
    """Asks for a zip, reads the first bytes of the answer and then nothing
    for `hold` seconds, then reads what is there to EOF: a server that cut
    the stalled zip off leaves its body incomplete. The hold counts from
    the first byte, and is several times the server's send timeout: that
    timeout starts once the server is stuck sending, after it has filled
    the socket's buffers, which under the flood can take seconds. A small
    receive buffer keeps the kernel from taking the whole zip unread."""
    host, port = hostport(url)
    while not stop.is_set():
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 << 10)
        s.settimeout(60)
        raw = bytearray()
        try:
            s.connect((host, port))
            s.sendall(request)
            raw += s.recv(1024)
        except OSError:
            pass
        # Held to the end even when the attack stops meanwhile, so each
        # zip asked for is counted.
        time.sleep(hold)
        s.settimeout(30)
        try:
            while raw:
                data = s.recv(1 << 20)
                if not data:
                    break
                raw += data
        except OSError:
            pass
        s.close()
        if not raw.startswith(b"HTTP/1.1 200"):
            count("zip_refused")
        elif http_body_complete(bytes(raw)):
            count("zip_completed_while_unread")
        else:
            count("zip_cut_off_by_server")


# Far past what the kernel takes unread (the sender's buffer grows to 4 MiB
# here): a zip that fits there is "sent whole" without the client reading.
# attack.sh uploads a 16 MB photo for this; the load test's are 1-2 MB.
BIG_ZIP = 8 << 20


def ready_archive(url, token):
    deadline = time.time() + 120
    while time.time() < deadline:
        items = rpc(url, "image.list", {"limit": 50}, token)["result"]["items"]
        for img in items:
            if img["status"] == "ready" and img["size_bytes"] > BIG_ZIP:
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
    p.add_argument("--zip-send-timeout", type=int, default=30)
    a = p.parse_args()
    token = rpc(a.url, "auth.login", {"email": a.email, "password": a.password})["result"]["access_token"]
    victim = {"email": "victim%d@example.com" % random.randrange(1 << 30), "password": "victim-password"}
    rpc(a.url, "admin.user.create", victim, token)
    stolen = rpc(a.url, "auth.login", victim)["result"]["access_token"]
    threads = [threading.Thread(target=login_flood, args=(a.url, i < 4)) for i in range(16)]
    threads += [threading.Thread(target=forged_flood, args=(a.url,)) for _ in range(2)]
    threads += [threading.Thread(target=reauth_flood, args=(a.url, stolen)) for _ in range(4)]
    slow = b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: "
    hold = a.header_timeout * 3
    threads += [threading.Thread(target=slowloris, args=(a.url, slow, hold)) for _ in range(100)]
    archive = ready_archive(a.url, token)
    if archive:
        req = ("GET %s HTTP/1.1\r\nHost: x\r\n\r\n" % archive).encode()
        hold = a.zip_send_timeout * 4
        threads += [threading.Thread(target=unread_zip, args=(a.url, req, hold)) for _ in range(20)]
    for t in threads:
        t.daemon = True
        t.start()
    time.sleep(a.seconds)
    stop.set()
    for t in threads:
        t.join(timeout=60)
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
    for kind in ("forged", "reauth"):
        if counts.get(kind + "_unanswered", 0) > counts.get(kind + "_answered", 0) // 100:
            failed.append(kind + " guesses went unanswered")
    if not counts.get("forged_throttled"):
        failed.append("forged Forwarded headers made one address many")
    if not counts.get("reauth_throttled"):
        failed.append("re-authentication guesses were never throttled")
    if counts.get("reauth_checked", 0) > 25 * (a.seconds / 60 + 1):
        failed.append("more re-authentication guesses checked than the account's budget")
    if not archive:
        failed.append("no photo to zip")
    elif not counts.get("zip_cut_off_by_server"):
        failed.append("no unread zip was cut off by the server")
    elif counts.get("zip_completed_while_unread", 0):
        failed.append("a zip nobody read past the send timeout was sent whole")
    if failed:
        print("attack: FAILED:", "; ".join(failed))
        raise SystemExit(1)


if __name__ == "__main__":
    main()
