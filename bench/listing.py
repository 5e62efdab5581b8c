#!/usr/bin/env python3
"""Listing at scale (issue 21): seeds one owner with N photos in 20 folders
(plus a 50-photo folder) directly in the database, then measures the
listing calls through the public API, sequentially on one keep-alive
connection.

    listing.py seed    --url URL --email E --password P (--sqlite FILE | --postgres URL) [--photos N]
    listing.py measure --url URL --email E --password P [--calls N]

`seed` uploads one real photo through the API, waits for its renders, and
clones its image, render and details rows (new random ids, spread
sort_at) with INSERT ... SELECT, so every row is what the service itself
writes. It prints the ids `measure` needs as JSON on stdout (the state file).
"""
import argparse
import base64
import http.client
import json
import os
import sqlite3
import subprocess
import sys
import time
import urllib.parse
import uuid

FOLDERS = 20
SMALL = 50


class Api:
    def __init__(self, url):
        u = urllib.parse.urlparse(url)
        self.conn = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
        self.token = None

    def raw(self, method, params):
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
        headers = {"content-type": "application/json"}
        if self.token:
            headers["authorization"] = f"Bearer {self.token}"
        try:
            self.conn.request("POST", "/rpc", body, headers)
            r = self.conn.getresponse()
        except (ConnectionError, http.client.HTTPException):
            # The server closes a keep-alive connection idle past its header
            # timeout (10 s), as while the database is seeded: reconnect.
            self.conn.close()
            self.conn.request("POST", "/rpc", body, headers)
            r = self.conn.getresponse()
        return r.status, r.read()

    def call(self, method, params):
        _, data = self.raw(method, params)
        doc = json.loads(data)
        if "error" in doc:
            raise SystemExit(f"{method}: {doc['error']}")
        return doc["result"]

    def get(self, path):
        self.conn.request("GET", path)
        r = self.conn.getresponse()
        return r.status, r.read()

    def login(self, email, password):
        self.token = self.call("auth.login", {"email": email, "password": password})["access_token"]


def upload(url, token, path):
    out = subprocess.run(
        ["curl", "-sf", "-H", f"authorization: Bearer {token}", "-F", f"file=@{path};type=image/jpeg",
         f"{url}/api/v1/images"],
        check=True, capture_output=True, text=True)
    return json.loads(out.stdout)["id"]


def uuid_sql(engine):
    if engine == "postgres":
        return "gen_random_uuid()::text"
    h = lambda n: f"lower(hex(randomblob({n})))"
    return (f"({h(4)} || '-' || {h(2)} || '-4' || substr({h(2)}, 2) || '-8' || substr({h(2)}, 2) "
            f"|| '-' || {h(6)})")


def clone_sql(engine, template, album, count, offset):
    """Clones the template photo `count` times into `album`, and its renders."""
    series = ("generate_series(1, {n}) AS s(n)" if engine == "postgres"
              else "(WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < {n}) "
                   "SELECT n FROM s) AS s").format(n=count)
    cols = ("owner_id, title, description, status, format, width, height, size_bytes, "
            "original_key, exif, exif_visibility, visibility, taken_at, created_at, "
            "has_gps, has_date, has_camera, show_gps, show_date, show_camera, captioned")
    return [
        "CREATE TEMP TABLE IF NOT EXISTS seeded (id TEXT, n BIGINT)",
        "DELETE FROM seeded",
        f"INSERT INTO seeded (id, n) SELECT {uuid_sql(engine)}, n FROM {series}",
        f"INSERT INTO images (id, album_id, sort_at, {cols}) "
        f"SELECT s.id, '{album}', t.sort_at - (s.n + {offset}) * 60000, "
        + ", ".join(f"t.{c}" for c in cols.split(", "))
        + f" FROM seeded s, images t WHERE t.id = '{template}'",
        "INSERT INTO renders (image_id, code, spec, version, produced_version, width, height, "
        "size_bytes, blob_key) SELECT s.id, r.code, r.spec, r.version, r.produced_version, r.width, "
        f"r.height, r.size_bytes, r.blob_key FROM seeded s, renders r WHERE r.image_id = '{template}'",
        # What the render job records beside them (the placeholder every
        # grid paints, the salient point): without it a page skips work.
        "INSERT INTO image_details (image_id, focus, placeholder, motion, salient) "
        "SELECT s.id, d.focus, d.placeholder, d.motion, d.salient "
        f"FROM seeded s, image_details d WHERE d.image_id = '{template}'",
        # A library that grew to this size has planner statistics, and on
        # PostgreSQL autovacuum has cleared the folder rows each insert's
        # count update left behind (bulk inserts leave both undone until
        # then; measured before this, a folder lookup read 1,000 pages).
        "VACUUM ANALYZE" if engine == "postgres" else "ANALYZE",
    ]


def run_sql(args, statements):
    if args.sqlite:
        db = sqlite3.connect(args.sqlite, timeout=60)
        for s in statements:
            db.execute(s)
        db.commit()
        db.close()
    else:
        script = ";\n".join(statements) + ";\n"
        subprocess.run(["psql", "-q", "-v", "ON_ERROR_STOP=1", args.postgres], input=script,
                       text=True, check=True)


def seed(args):
    api = Api(args.url)
    api.login(args.email, args.password)
    photo = os.path.join(os.path.dirname(__file__), "../../shared/corpus", args.photo)
    template = upload(args.url, api.token, photo)
    deadline = time.time() + 300
    def rendered():
        got = api.call("image.get", {"id": template})
        return got["status"] == "ready" and got.get("placeholder")

    while not rendered():
        if time.time() > deadline:
            raise SystemExit("the template photo did not render")
        time.sleep(0.2)
    folders = [api.call("album.create", {"name": f"Folder {n}"})["id"] for n in range(FOLDERS)]
    small = api.call("album.create", {"name": "Small"})["id"]
    per = args.photos // FOLDERS
    for n, album in enumerate(folders):
        run_sql(args, clone_sql(args.engine, template, album, per, n * per))
    run_sql(args, clone_sql(args.engine, template, small, SMALL, args.photos))
    for album, alias in ((folders[0], "big-folder"), (small, "small-folder")):
        api.call("album.sharing.setMode", {"album_id": album, "mode": "public", "alias": alias})
    json.dump({"folders": folders, "small": small, "template": template}, sys.stdout)


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * p))]


def measure(args):
    state = json.load(open(args.state))
    api = Api(args.url)
    api.login(args.email, args.password)
    big, small = state["folders"][0], state["small"]
    # A cursor deep into the library: walk 20 pages once.
    after = None
    for _ in range(20):
        page = api.call("image.list", {"limit": 50, **({"cursor": after} if after else {})})
        after = page["next_cursor"]
    # A photo deep in the big folder (its order is image.list's): the
    # viewer's place, neighbours and way back, and a grid page from it.
    deep = None
    for _ in range(80):
        page = api.call("image.list", {"limit": 50, "album_id": big,
                                       **({"cursor": deep} if deep else {})})
        deep = page["next_cursor"]
    deep_photo = page["items"][-1]["id"]
    deep_cursor = base64.urlsafe_b64encode(uuid.UUID(deep_photo).bytes).decode().rstrip("=")
    small_photo = api.call("image.list", {"limit": 30, "album_id": small})["items"][-1]["id"]
    calls = [
        ("image.list first page", lambda: api.raw("image.list", {"limit": 50})),
        ("image.list page 21", lambda: api.raw("image.list", {"limit": 50, "cursor": after})),
        ("image.list album_id", lambda: api.raw("image.list", {"limit": 50, "album_id": big})),
        ("album.list", lambda: api.raw("album.list", {})),
        ("image.get", lambda: api.raw("image.get", {"id": state["template"]})),
        ("album.preview 5000", lambda: api.raw("album.preview", {"album_id": big})),
        ("album.preview 50", lambda: api.raw("album.preview", {"album_id": small})),
        ("visitor page 5000", lambda: api.get("/a/big-folder")),
        ("visitor page 50", lambda: api.get("/a/small-folder")),
        ("visitor page 5000, from photo 4,000",
         lambda: api.get(f"/a/big-folder?after={deep_cursor}")),
        ("viewer 5000, photo 4,000", lambda: api.get(f"/a/big-folder/{deep_photo}")),
        ("viewer 50, photo 30", lambda: api.get(f"/a/small-folder/{small_photo}")),
    ]
    print(f"| call | p50 ms | p99 ms |\n|---|---:|---:|")
    for name, call in calls:
        if args.only and not name.startswith(args.only):
            continue
        status, _ = call()
        if status != 200:
            raise SystemExit(f"{name}: HTTP {status}")
        took = []
        for _ in range(args.calls):
            t = time.perf_counter()
            call()
            took.append((time.perf_counter() - t) * 1000)
        print(f"| {name} | {pct(took, 0.5):.2f} | {pct(took, 0.99):.2f} |")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("command", choices=["seed", "measure"])
    p.add_argument("--url", required=True)
    p.add_argument("--email", required=True)
    p.add_argument("--password", required=True)
    p.add_argument("--sqlite")
    p.add_argument("--postgres")
    p.add_argument("--photos", type=int, default=100_000)
    p.add_argument("--photo", default="sunset_4272x2848.jpg")
    p.add_argument("--state")
    p.add_argument("--calls", type=int, default=1000)
    p.add_argument("--only", help="measure only the calls whose name starts with this")
    args = p.parse_args()
    args.engine = "sqlite" if args.sqlite else "postgres"
    seed(args) if args.command == "seed" else measure(args)


if __name__ == "__main__":
    main()
