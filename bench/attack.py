#!/usr/bin/env python3
"""Attacks a running Lightbox for --seconds while bench/attack.sh runs the
load test beside it: a login flood (random emails), the same from one
address with a forged, rotating `Forwarded` header, a stolen session
guessing the current password of `account.setPassword`, slowloris clients
(request heads never finished), zips nobody reads, HTTP/2 streams nobody
reads, JSON-RPC bodies sent at a trickle, batches of rpc.discover, and one
owner flooding the render queue with 3000x3000 AVIF pads of 1x3000 strips.
Standard library only. Prints what the server did with each and exits 1
when a bound did not hold: slowloris sockets or slow bodies never closed
by the server, flood logins left unanswered or never throttled, forged
addresses believed, guesses by re-authentication never throttled, unread
zips never cut off, unread HTTP/2 connections never closed, a discover
batch answered with more than one document, or the render flood's owner
taking every render slot (another owner's photo waiting behind it)."""

import argparse
import json
import random
import socket
import struct
import threading
import time
import urllib.request
import uuid
import zlib

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


def h2_frame(kind, flags, stream, payload):
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload


def h2_get(stream, path):
    """GET `path` as HPACK literals (:method GET, :scheme http, :path)."""
    head = bytearray([0x82, 0x86, 0x04])
    n = len(path)
    if n < 127:
        head.append(n)
    else:
        head.append(127)
        n -= 127
        while n >= 128:
            head.append(n % 128 | 0x80)
            n //= 128
        head.append(n)
    return h2_frame(1, 0x5, stream, bytes(head) + path.encode())


def h2_unread(url, path, hold_limit):
    """An h2c connection that grants 1 GiB of window, asks for a 16 MB
    download on 16 streams and never reads; counts whether the server
    closed it (its idle timeout) within `hold_limit`."""
    while not stop.is_set():
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.connect(hostport(url))
        out = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
        out += h2_frame(4, 0, 0, b"\x00\x04\x40\x00\x00\x00")
        out += h2_frame(8, 0, 0, struct.pack(">I", 1 << 30))
        out += b"".join(h2_get(1 + 2 * i, path) for i in range(16))
        s.sendall(out)
        opened = time.time()
        outcome = wait_for_close(s, opened, hold_limit, read=False)
        if outcome:
            count("h2_unread_" + outcome)
        s.close()


def wait_for_close(s, opened, hold_limit, read):
    """Until the server closes `s` ("closed_by_server"), `hold_limit` passes
    ("still_open") or the attack ends (None). Reads nothing unless `read`:
    an unread socket is seen closed when a write to it fails."""
    s.settimeout(0.5)
    while not stop.is_set():
        try:
            if read:
                if not s.recv(65536):
                    return "closed_by_server"
            else:
                time.sleep(0.5)
                s.send(h2_frame(6, 0, 0, b"\0" * 8))
        except socket.timeout:
            pass
        except OSError:
            return "closed_by_server"
        if time.time() - opened > hold_limit:
            return "still_open"
    return None


def slow_body(url, hold_limit):
    """A JSON-RPC request whose 1 MB body comes at 4 KB/s, just over the
    minimum pace; counts whether the server ended it (the JSON-RPC body
    limit, 30 s) within `hold_limit`."""
    while not stop.is_set():
        s = socket.create_connection(hostport(url))
        s.sendall(b"POST /rpc HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                  b"Content-Length: 1048576\r\n\r\n")
        opened = time.time()
        s.settimeout(1)
        outcome = None
        # Held to its outcome even past the attack's end: the server's
        # bound (30 s) may be longer than a short run.
        while outcome is None:
            try:
                s.send(b" " * 4096)
                if s.recv(65536, socket.MSG_DONTWAIT) == b"":
                    outcome = "closed_by_server"
            except (BlockingIOError, socket.timeout):
                pass
            except OSError:
                outcome = "closed_by_server"
            if outcome is None and time.time() - opened > hold_limit:
                outcome = "still_open"
            time.sleep(1)
        if outcome:
            count("slow_body_" + outcome)
        s.close()


def discover_batches(url):
    """Batches of 20 rpc.discover, anonymously: counts the bytes of the
    largest answer against one document's."""
    one = len(post_rpc(url, {"jsonrpc": "2.0", "id": 1, "method": "rpc.discover"}))
    with lock:
        counts["discover_one_bytes"] = one
    batch = [{"jsonrpc": "2.0", "id": i, "method": "rpc.discover"} for i in range(20)]
    while not stop.is_set():
        size = len(post_rpc(url, batch))
        with lock:
            counts["discover_batch_max_bytes"] = max(counts.get("discover_batch_max_bytes", 0), size)
        count("discover_batches")
        time.sleep(0.1)


def post_rpc(url, body):
    req = urllib.request.Request(url + "/rpc", json.dumps(body).encode(), {"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return r.read()


def strip_png(shade):
    """A 1x3000 grey PNG: under a hundred bytes that ask for a huge pad."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    rows = b"".join(b"\0" + bytes([shade]) for _ in range(3000))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 3000, 8, 0, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows, 9)) + chunk(b"IEND", b""))


def upload(url, token, data, name, mime):
    boundary = uuid.uuid4().hex
    body = ("--%s\r\nContent-Disposition: form-data; name=\"file\"; filename=\"%s\"\r\n"
            "Content-Type: %s\r\n\r\n" % (boundary, name, mime)).encode() + data + \
        ("\r\n--%s--\r\n" % boundary).encode()
    req = urllib.request.Request(url + "/api/v1/images", body, {
        "Content-Type": "multipart/form-data; boundary=" + boundary,
        "Authorization": "Bearer " + token})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, None


def render_flood(url, token):
    """One owner keeps the render queue full of 3000x3000 AVIF pads of
    1x3000 strips (their folder's rule); the load test's own uploads are
    the other owners whose photos must not wait behind them."""
    album = rpc(url, "album.list", {}, token)["result"]["items"][0]["id"]
    rpc(url, "album.crop.set", {"album_id": album, "code": "wall", "width": 3000, "height": 3000,
                                "mode": "pad", "format": "avif"}, token)
    n = 0
    while not stop.is_set():
        status, _ = upload(url, token, strip_png(n % 250), "s.png", "image/png")
        count("render_flood_upload_%d" % status)
        n += 1
        time.sleep(0.25)


def timed_photo(url, token):
    """While the flood runs, another owner's small photo (cheap to render:
    what it waits for is the queue, not the cores), timed to `ready`."""
    time.sleep(5)
    img = None
    while img is None and not stop.is_set():
        status, img = upload(url, token, gradient_png(640, 480), "p.png", "image/png")
    started = time.time()
    # Followed past the attack's end, up to a minute.
    while time.time() - started < 60:
        now = rpc(url, "image.get", {"id": img["id"]}, token)["result"]
        if now["status"] != "processing":
            with lock:
                counts["other_owner_ready_s"] = round(time.time() - started, 2)
            return
        time.sleep(0.1)


def gradient_png(w, h):
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    rows = b"".join(b"\0" + bytes((x * 255 // w, y * 255 // h, 90)[c] for x in range(w) for c in range(3))
                    for y in range(h))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows, 6)) + chunk(b"IEND", b""))


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
    p.add_argument("--idle-timeout", type=int, default=60)
    a = p.parse_args()
    token = rpc(a.url, "auth.login", {"email": a.email, "password": a.password})["result"]["access_token"]
    victim = {"email": "victim%d@example.com" % random.randrange(1 << 30), "password": "victim-password"}
    rpc(a.url, "admin.user.create", victim, token)
    stolen = rpc(a.url, "auth.login", victim)["result"]["access_token"]
    owners = []
    for who in ("flood", "other"):
        user = {"email": "%s%d@example.com" % (who, random.randrange(1 << 30)), "password": who + "-password-1"}
        rpc(a.url, "admin.user.create", user, token)
        owners.append(rpc(a.url, "auth.login", user)["result"]["access_token"])
    threads = [threading.Thread(target=login_flood, args=(a.url, i < 4)) for i in range(16)]
    threads += [threading.Thread(target=forged_flood, args=(a.url,)) for _ in range(2)]
    threads += [threading.Thread(target=reauth_flood, args=(a.url, stolen)) for _ in range(4)]
    slow = b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: "
    hold = a.header_timeout * 3
    threads += [threading.Thread(target=slowloris, args=(a.url, slow, hold)) for _ in range(100)]
    threads += [threading.Thread(target=slow_body, args=(a.url, 45)) for _ in range(20)]
    threads += [threading.Thread(target=discover_batches, args=(a.url,))]
    threads += [threading.Thread(target=render_flood, args=(a.url, owners[0]))]
    threads += [threading.Thread(target=timed_photo, args=(a.url, owners[1]))]
    archive = ready_archive(a.url, token)
    if archive:
        big = rpc(a.url, "image.list", {"limit": 50}, token)["result"]["items"]
        big = [i for i in big if i["status"] == "ready" and i["size_bytes"] > BIG_ZIP][0]
        link = rpc(a.url, "image.downloadToken", {"id": big["id"], "variant": "full"}, token)["result"]["url"]
        path = link[link.index("/api/"):]
        threads += [threading.Thread(target=h2_unread, args=(a.url, path, a.idle_timeout * 3))
                    for _ in range(16)]
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
    if counts.get("slow_body_still_open", 0) or not counts.get("slow_body_closed_by_server"):
        failed.append("slow JSON-RPC bodies were not ended by the server within 45 s")
    if counts.get("discover_batch_max_bytes", 0) > 2 * counts.get("discover_one_bytes", 1):
        failed.append("a batch of rpc.discover was answered with more than one document")
    if not counts.get("render_flood_upload_201"):
        failed.append("the render flood uploaded nothing")
    # Beside the load test and every flood here, the flood's own jobs take
    # seconds each, and the photo waits for the first slot to free (the
    # end-to-end test, on a quiet server, holds it to 5 s); first in first
    # out, it would wait for the whole flood queued before it.
    ready = counts.get("other_owner_ready_s")
    if ready is None or ready > 20:
        failed.append("another owner's photo waited behind the render flood (%s s)" % ready)
    if not archive:
        failed.append("no photo to zip")
    elif counts.get("h2_unread_still_open", 0) or not counts.get("h2_unread_closed_by_server"):
        failed.append("unread HTTP/2 connections outlived 3x the idle timeout")
    elif not counts.get("zip_cut_off_by_server"):
        failed.append("no unread zip was cut off by the server")
    elif counts.get("zip_completed_while_unread", 0):
        failed.append("a zip nobody read past the send timeout was sent whole")
    if failed:
        print("attack: FAILED:", "; ".join(failed))
        raise SystemExit(1)


if __name__ == "__main__":
    main()
