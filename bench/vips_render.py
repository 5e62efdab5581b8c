"""The same work with libvips (pyvips): per image one decode (auto-rotated,
held in memory), renders cascaded 2048 -> 1280 -> 640 and a 400x400 centre
crop from the 1280, webp Q80 without metadata; PARALLEL images at a time."""
import json, os, resource, sys, time
from concurrent.futures import ThreadPoolExecutor

import pyvips


def render(path):
    img = pyvips.Image.new_from_file(path).autorot().copy_memory()
    large = img.resize(min(1.0, 2048 / img.width))
    medium = large.resize(min(1.0, 1280 / large.width))
    small = medium.resize(min(1.0, 640 / medium.width))
    thumb = medium.thumbnail_image(400, height=400, crop="centre")
    return [r.webpsave_buffer(Q=80, strip=True) for r in (large, medium, small, thumb)]


def main():
    files = sys.argv[1:]
    parallel, rounds = int(os.environ.get("PARALLEL", 2)), int(os.environ.get("ROUNDS", 3))
    jobs = files * rounds
    start = time.perf_counter()
    with ThreadPoolExecutor(parallel) as pool:
        for out in pool.map(render, jobs):
            assert len(out) == 4
    secs = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"tool": "libvips", "images": len(jobs), "seconds": round(secs, 3),
                      "images_per_s": round(len(jobs) / secs, 3), "peak_rss_mib": round(peak, 1)}))


main()
