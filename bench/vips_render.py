"""The libvips references for bench/render.sh, run as libvips's own docs
advise for a batch: one image per worker process, as many processes as
PARALLEL (the cores), each with VIPS_CONCURRENCY=1, so libvips's thread
pool does not compete with the other worker.

  pyvips: per image one decode (auto-rotated, in memory), then the default
    presets cascaded 2048 -> 1280 -> 640 and a 400x400 centre crop from the
    1280, each stage materialised with copy_memory() (libvips is lazy:
    without it every smaller render recomputes the larger ones from the
    decoded original), webp Q80 without metadata. A JPEG is shrunk on load
    by libvips's own rule (its thumbnail's `find_jpegshrink`: by 2, 4 or 8
    only while 2x is left for the final resize; for this corpus, whose
    largest render needs 1.5-2.9x, that is no shrink).
  pyvips-thumbnail: libvips's `thumbnail` (sequential load, its own
    shrink-on-load for JPEG and WebP, no full-size copy) for the 2048 px
    render, then `thumbnail_image` down the same cascade: 8-10 % faster
    than the line above on this corpus, so the one to beat.
  pyvips-lightbox-shrink: the materialised cascade, but shrunk on load by
    Lightbox's rule (`render/src/jpeg/shrink.rs`: by 2 whenever the largest
    render still gets its own size), which libvips does not advise (a block
    shrink sharpens), so this line shows what that shortcut is worth to
    libvips.
  vipsthumbnail: the CLI, once per image and preset (shrink-on-load from the
    file each time, its best case for JPEG), same sizes and webp settings.

Prints one JSON line per tool: images/s, wall and CPU seconds, and peak
RSS summed over the worker processes (sampled every 20 ms). The pyvips
workers are started and have loaded libvips before the clock starts (a
fork and `import pyvips` cost 0.14-0.25 s a worker, 1-3 % of a pass), as
Lightbox's server is started before its line is timed."""
import json
import multiprocessing
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor

os.environ["VIPS_CONCURRENCY"] = "1"

PRESETS = [("large", "2048x>"), ("medium", "1280x>"), ("small", "640x>"), ("thumb", "400x400")]


def jpeg_shrink(head, headroom_at_2):
    """The shrink-on-load factor of the opened image `head` for the
    cascade's largest render (2048 wide): 8, 4 or 2 while 2x headroom is
    left, and 2 already with `headroom_at_2` (1.0: Lightbox's rule; 2.0:
    libvips's)."""
    if not head.get("vips-loader").startswith("jpegload"):
        return 1
    width = head.width
    if head.get_typeof("orientation") and head.get("orientation") in (5, 6, 7, 8):
        width = head.height
    ratio = min(1.0, 2048 / width)
    for d in (8, 4, 2):
        if 1 / d >= (headroom_at_2 if d == 2 else 2.0) * ratio:
            return d
    return 1


def cascade(path, headroom_at_2):
    import pyvips

    pyvips.cache_set_max(0)
    # Opening reads only the header; the file is opened again only when
    # it is to be shrunk on load.
    img = pyvips.Image.new_from_file(path)
    shrink = jpeg_shrink(img, headroom_at_2)
    if shrink > 1:
        img = pyvips.Image.new_from_file(path, shrink=shrink)
    img = img.autorot().copy_memory()
    large = img.resize(min(1.0, 2048 / img.width)).copy_memory()
    medium = large.resize(min(1.0, 1280 / large.width)).copy_memory()
    small = medium.resize(min(1.0, 640 / medium.width)).copy_memory()
    thumb = medium.thumbnail_image(400, height=400, crop="centre")
    out = [r.webpsave_buffer(Q=80, strip=True) for r in (large, medium, small, thumb)]
    return sum(len(o) for o in out)


def thumbnail_cascade(path):
    """libvips's own `thumbnail` for the largest render (it loads the file
    sequentially, shrinks on load by its own rule, JPEG and WebP alike, and
    auto-rotates, streaming the decode into the resize with no full-size
    copy), then `thumbnail_image` down the same cascade. The strongest
    libvips line measured on this corpus (twenty-second session)."""
    import pyvips

    pyvips.cache_set_max(0)
    big = 10_000_000
    large = pyvips.Image.thumbnail(path, 2048, height=big, size="down").copy_memory()
    medium = large.thumbnail_image(1280, height=big, size="down").copy_memory()
    small = medium.thumbnail_image(640, height=big, size="down").copy_memory()
    thumb = medium.thumbnail_image(400, height=400, crop="centre")
    out = [r.webpsave_buffer(Q=80, strip=True) for r in (large, medium, small, thumb)]
    return sum(len(o) for o in out)


def pyvips_render(path):
    return cascade(path, 2.0)


def pyvips_lightbox_shrink(path):
    return cascade(path, 1.0)


def vipsthumbnail_render(path):
    with tempfile.TemporaryDirectory() as tmp:
        total = 0
        for name, size in PRESETS:
            args = ["vipsthumbnail", path, "-s", size, "-o", f"{tmp}/{name}.webp[Q=80,strip]"]
            if name == "thumb":
                args += ["--smartcrop", "centre"]
            subprocess.run(args, check=True)
            total += os.path.getsize(f"{tmp}/{name}.webp")
        return total


def tree_rss_kib(root):
    """VmRSS summed over `root`'s descendants (not `root` itself)."""
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    parents[int(entry)] = int(f.read().rsplit(")", 1)[1].split()[1])
            except OSError:
                pass
    inside, total = {root}, 0
    for pid in sorted(parents):
        chain, p = [], pid
        while p in parents and p not in inside and p > 1:
            chain.append(p)
            p = parents[p]
        if p in inside:
            inside.update(chain)
    for pid in inside - {root}:
        try:
            with open(f"/proc/{pid}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
        except OSError:
            pass
    return total


def proc_cpu_seconds(pids):
    """utime + stime summed over live processes `pids`."""
    total = 0
    for pid in pids:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def load_libvips(barrier):
    """A worker's start: loads libvips once, for the whole run."""
    global _meeting
    _meeting = barrier
    import pyvips

    pyvips.cache_set_max(0)
    pyvips.Image.black(16, 16).avg()


def meet(_):
    """Held until every worker has taken one, so each returns its pid."""
    _meeting.wait(timeout=120)
    return os.getpid()


def warm_process_pool(parallel):
    """Worker processes that have started and loaded libvips, and the CPU
    that took, so a pass times only the images (as Lightbox's server is
    started and signed in to before its line)."""
    pool = ProcessPoolExecutor(parallel, initializer=load_libvips,
                               initargs=(multiprocessing.Barrier(parallel),))
    pids = set(pool.map(meet, range(parallel)))
    return pool, proc_cpu_seconds(pids)


def measure(tool, work, jobs, pool, startup_cpu=0.0):
    peak, done = [0], threading.Event()

    def sample():
        while not done.wait(0.02):
            peak[0] = max(peak[0], tree_rss_kib(os.getpid()))

    sampler = threading.Thread(target=sample)
    sampler.start()
    # Children's CPU counts once they exit, when the pool shuts down.
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    with pool:
        produced = sum(pool.map(work, jobs))
        secs = time.perf_counter() - start
    done.set()
    sampler.join()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime) - startup_cpu
    print(json.dumps({"tool": tool, "images": len(jobs), "seconds": round(secs, 3),
                      "images_per_s": round(len(jobs) / secs, 3), "cpu_s": round(cpu, 1),
                      "peak_rss_mib": round(peak[0] / 1024, 1), "bytes_out": produced}), flush=True)


def main():
    files = sys.argv[1:]
    parallel, rounds = int(os.environ.get("PARALLEL", 2)), int(os.environ.get("ROUNDS", 3))
    jobs = files * rounds
    tools = os.environ.get(
        "VIPS_TOOLS", "pyvips pyvips-thumbnail pyvips-lightbox-shrink vipsthumbnail").split()
    if "pyvips" in tools:
        # Worker processes live for the whole run, one image at a time each.
        measure("libvips (pyvips, materialised cascade)", pyvips_render, jobs,
                *warm_process_pool(parallel))
    if "pyvips-thumbnail" in tools:
        measure("libvips (pyvips thumbnail, then thumbnail_image cascade)", thumbnail_cascade,
                jobs, *warm_process_pool(parallel))
    if "pyvips-lightbox-shrink" in tools:
        measure("libvips (pyvips, cascade, Lightbox's shrink-on-load)", pyvips_lightbox_shrink,
                jobs, *warm_process_pool(parallel))
    if "vipsthumbnail" in tools:
        # Threads only start the vipsthumbnail processes.
        measure("libvips (vipsthumbnail per preset)", vipsthumbnail_render, jobs,
                ThreadPoolExecutor(parallel))


if __name__ == "__main__":
    main()
