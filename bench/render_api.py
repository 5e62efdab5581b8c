"""Renders through the public interface: uploads each file ROUNDS times to a
running Lightbox (POST /api/v1/images), keeping PARALLEL photos in flight,
and waits for each to be `ready` (image.get) before sending the next.
So it times upload, storing, the queue, the render job and recording, as
a client sees them. Reads the server's CPU time and peak RSS from /proc.
Standard library only; prints one JSON line."""
import argparse
import json
import os
import threading
import time
import urllib.request
import uuid


def rpc(url, method, params, token=None):
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
    req = urllib.request.Request(url + "/rpc", body, {"Content-Type": "application/json"})
    if token:
        req.add_header("Authorization", "Bearer " + token)
    with urllib.request.urlopen(req, timeout=120) as r:
        answer = json.loads(r.read())
    if "error" in answer:
        raise RuntimeError(f"{method}: {answer['error']}")
    return answer["result"]


def upload(url, token, path):
    boundary = uuid.uuid4().hex
    with open(path, "rb") as f:
        data = f.read()
    name = os.path.basename(path)
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; "
            f"filename=\"{name}\"\r\nContent-Type: application/octet-stream\r\n\r\n").encode()
    body += data + f"\r\n--{boundary}--\r\n".encode()
    req = urllib.request.Request(url + "/api/v1/images", body, {
        "Content-Type": f"multipart/form-data; boundary={boundary}",
        "Authorization": "Bearer " + token})
    with urllib.request.urlopen(req, timeout=120) as r:
        return json.loads(r.read())["id"]


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def peak_rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
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
    token = rpc(a.url, "auth.login", {"email": a.email, "password": a.password})["access_token"]
    jobs = list(a.files) * rounds
    lock, failures = threading.Lock(), []

    def client():
        while True:
            with lock:
                if not jobs:
                    return
                path = jobs.pop(0)
            image_id = upload(a.url, token, path)
            while True:
                status = rpc(a.url, "image.get", {"id": image_id}, token)["status"]
                if status == "ready":
                    break
                if status == "failed":
                    failures.append(path)
                    break
                time.sleep(0.02)

    count = len(jobs)
    cpu0 = cpu_seconds(a.pid)
    start = time.perf_counter()
    threads = [threading.Thread(target=client) for _ in range(parallel)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    secs = time.perf_counter() - start
    print(json.dumps({"tool": "lightbox (HTTP API)", "images": count, "seconds": round(secs, 3),
                      "images_per_s": round(count / secs, 3),
                      "cpu_s": round(cpu_seconds(a.pid) - cpu0, 1),
                      "peak_rss_mib": round(peak_rss_mib(a.pid), 1), "failed": len(failures)}),
          flush=True)
    if failures:
        raise SystemExit(f"renders failed: {failures}")


if __name__ == "__main__":
    main()
