"""Renders through the public interface: uploads each file ROUNDS times to a
running Lightbox (POST /api/v1/images), keeping PARALLEL photos in flight,
and waits for each to be `ready` (image.get) before sending the next:
by default with `Prefer: wait=5` (the call is held until the photo
settles), or with API_WAIT=0 by polling every 20 ms, as clients that do
not ask to wait must.
So it times upload, storing, the queue, the render job and recording, as
a client sees them. Reads the server's CPU time from /proc, and its peak
RSS two ways: sampled every 20 ms, as vips_render.py samples the libvips
workers (the like-for-like figure), and the kernel's exact high-water mark.
Each client keeps one connection alive and sends the files from memory,
as a real client would, so the client takes as little as it can of the
two cores it shares with the server (libvips's side has no client).
Standard library only; prints one JSON line."""
import argparse
import http.client
import json
import os
import threading
import time
import urllib.parse
import uuid


def connect(url):
    u = urllib.parse.urlsplit(url)
    return http.client.HTTPConnection(u.hostname, u.port, timeout=120)


def send(conn, path, body, headers):
    """One request on a kept-alive connection; `body` may be a list of parts."""
    size = sum(len(b) for b in body) if isinstance(body, list) else len(body)
    conn.request("POST", path, body=body, headers={**headers, "Content-Length": str(size)})
    r = conn.getresponse()
    answer = r.read()
    if r.status >= 300:
        raise RuntimeError(f"{path}: {r.status} {answer[:200]!r}")
    return json.loads(answer)


def rpc(conn, method, params, token=None, wait=0):
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
    headers = {"Content-Type": "application/json"}
    if wait:
        headers["Prefer"] = f"wait={wait}"
    if token:
        headers["Authorization"] = "Bearer " + token
    answer = send(conn, "/rpc", body, headers)
    if "error" in answer:
        raise RuntimeError(f"{method}: {answer['error']}")
    return answer["result"]


def upload(conn, token, path, data):
    boundary = uuid.uuid4().hex
    name = os.path.basename(path)
    head = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; "
            f"filename=\"{name}\"\r\nContent-Type: application/octet-stream\r\n\r\n").encode()
    tail = f"\r\n--{boundary}--\r\n".encode()
    return send(conn, "/api/v1/images", [head, data, tail], {
        "Content-Type": f"multipart/form-data; boundary={boundary}",
        "Authorization": "Bearer " + token})["id"]


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def own_cpu_seconds():
    t = os.times()
    return t.user + t.system


def status_mib(pid, field):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field):
                return int(line.split()[1]) / 1024
    return 0.0


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--url", required=True)
    p.add_argument("--pid", type=int, required=True)
    p.add_argument("--email", required=True)
    p.add_argument("--password", required=True)
    p.add_argument("files", nargs="+")
    a = p.parse_args()
    parallel, rounds = int(os.environ.get("PARALLEL", 2)), int(os.environ.get("ROUNDS", 3))
    wait = int(os.environ.get("API_WAIT", 5))
    token = rpc(connect(a.url), "auth.login",
                {"email": a.email, "password": a.password})["access_token"]
    contents = {}
    for path in a.files:
        with open(path, "rb") as f:
            contents[path] = f.read()
    jobs = list(a.files) * rounds
    lock, failures = threading.Lock(), []

    def client():
        conn = connect(a.url)
        while True:
            with lock:
                if not jobs:
                    return
                path = jobs.pop(0)
            image_id = upload(conn, token, path, contents[path])
            while True:
                status = rpc(conn, "image.get", {"id": image_id}, token, wait)["status"]
                if status == "ready":
                    break
                if status == "failed":
                    failures.append(path)
                    break
                if not wait:
                    time.sleep(0.02)

    count = len(jobs)
    cpu0, own0 = cpu_seconds(a.pid), own_cpu_seconds()
    start = time.perf_counter()
    peak, done = [0.0], threading.Event()

    def sample():
        while not done.wait(0.02):
            peak[0] = max(peak[0], status_mib(a.pid, "VmRSS:"))

    sampler = threading.Thread(target=sample)
    sampler.start()
    threads = [threading.Thread(target=client) for _ in range(parallel)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    secs = time.perf_counter() - start
    done.set()
    sampler.join()
    how = f"Prefer: wait={wait}" if wait else "20 ms polls"
    print(json.dumps({"tool": f"lightbox (HTTP API, {how})", "images": count, "seconds": round(secs, 3),
                      "images_per_s": round(count / secs, 3),
                      "cpu_s": round(cpu_seconds(a.pid) - cpu0, 1),
                      "client_cpu_s": round(own_cpu_seconds() - own0, 2),
                      "peak_rss_mib": round(peak[0], 1),
                      "hwm_mib": round(status_mib(a.pid, "VmHWM:"), 1), "failed": len(failures)}),
          flush=True)
    if failures:
        raise SystemExit(f"renders failed: {failures}")


if __name__ == "__main__":
    main()
