#!/usr/bin/env python3
"""Makes the phone layouts of tests/corpus/made/ from one public JPEG.

No public test suite ships a Pixel motion photo, a Samsung SEF trailer or an
Ultra HDR file small enough to keep in the repo, so these are MADE: the
primary picture is Pillow's hopper.jpg, and the parts after it follow the
published layouts (Google's Motion Photo format 1.0 and the older
MicroVideo XMP, CIPA DC-007 MPF with an XMP container as Ultra HDR writes
it, Samsung's SEF trailer as ExifTool reads it). The MP4 is a framed box
sequence (ftyp, moov, mdat), not a playable film.

    python3 scripts/make_phone_samples.py tests/corpus/pillow/hopper.jpg tests/corpus/made
"""
import struct
import sys
from pathlib import Path


def segment(marker, payload):
    return bytes([0xFF, marker]) + struct.pack(">H", len(payload) + 2) + payload


def xmp(body):
    packet = (
        '<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF '
        'xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">'
        f"{body}</rdf:RDF></x:xmpmeta>"
    )
    return segment(0xE1, b"http://ns.adobe.com/xap/1.0/\0" + packet.encode())


def box(kind, body):
    return struct.pack(">I", 8 + len(body)) + kind + body


MP4 = (
    box(b"ftyp", b"isom\0\0\x02\0isomiso2mp41")
    + box(b"moov", box(b"mvhd", bytes(100)))
    + box(b"mdat", bytes(range(256)) * 16)
)


def container(items):
    rows = "".join(
        f'<rdf:li rdf:parseType="Resource"><Container:Item Item:Semantic="{s}" '
        f'Item:Mime="{m}"' + (f' Item:Length="{n}"' if n else "") + "/></rdf:li>"
        for s, m, n in items
    )
    return (
        '<rdf:Description rdf:about="" '
        'xmlns:Container="http://ns.google.com/photos/1.0/container/" '
        'xmlns:Item="http://ns.google.com/photos/1.0/container/item/" '
        'xmlns:GCamera="http://ns.google.com/photos/1.0/camera/" '
        'GCamera:MotionPhoto="1" GCamera:MotionPhotoVersion="1">'
        f"<Container:Directory><rdf:Seq>{rows}</rdf:Seq></Container:Directory>"
        "</rdf:Description>"
    )


def with_segment(jpeg, seg):
    return jpeg[:2] + seg + jpeg[2:]


def motion(jpeg, announced=len(MP4), clip=MP4):
    items = [("Primary", "image/jpeg", 0), ("MotionPhoto", "video/mp4", announced)]
    return with_segment(jpeg, xmp(container(items))) + clip


# An announced clip whose ftyp box says size 0 ("to the end of the file")
# and carries a ZIP: a polyglot dressed as a motion photo.
ZIP_IN_BOX = struct.pack(">I", 0) + b"ftypisom" + bytes(16) + b"PK\x05\x06" + bytes(18)


def micro_video(jpeg):
    body = (
        '<rdf:Description rdf:about="" '
        'xmlns:GCamera="http://ns.google.com/photos/1.0/camera/" '
        f'GCamera:MicroVideo="1" GCamera:MicroVideoVersion="1" '
        f'GCamera:MicroVideoOffset="{len(MP4)}"/>'
    )
    return with_segment(jpeg, xmp(body)) + MP4


def mpf(next_offset, next_size, first_size):
    """An MPF APP2 (little-endian) indexing two pictures."""
    entries = struct.pack("<IIIHH", 0x030000, first_size, 0, 0, 0)
    entries += struct.pack("<IIIHH", 0, next_size, next_offset, 0, 0)
    ifd_entries = [
        (0xB000, 7, 4, int.from_bytes(b"0100", "little")),
        (0xB001, 4, 1, 2),
        (0xB002, 7, 32, 8 + 2 + 3 * 12 + 4),
    ]
    ifd = struct.pack("<H", 3) + b"".join(struct.pack("<HHII", *e) for e in ifd_entries) + b"\0\0\0\0"
    tiff = b"II*\0" + struct.pack("<I", 8) + ifd + entries
    return segment(0xE2, b"MPF\0" + tiff)


def ultra_hdr(jpeg, gain_map):
    items = [("Primary", "image/jpeg", 0), ("GainMap", "image/jpeg", len(gain_map))]
    head = with_segment(jpeg, xmp(container(items)))
    placeholder = mpf(0, 0, 0)
    first_size = len(head) + len(placeholder)
    # MPF offsets count from the TIFF header, 8 bytes into the APP2 segment
    # (marker, length, "MPF\0"), which sits right after the SOI.
    tiff_at = 2 + 8
    real = mpf(first_size - tiff_at, len(gain_map), first_size)
    return head[:2] + real + head[2:] + gain_map


def samsung(jpeg):
    blocks, entries = b"", []
    for kind, name, data in [
        (0x0A01, b"Image_UTC_Data", b"1700000000000"),
        (0x0AA1, b"MCC_Data", b"262"),
    ]:
        block = struct.pack("<HHI", 0, kind, len(name)) + name + data
        entries.append((kind, len(blocks), len(block)))
        blocks += block
    dir_len = 12 + 12 * len(entries)
    directory = b"SEFH" + struct.pack("<II", 101, len(entries))
    for kind, at, size in entries:
        noff = len(blocks) - at
        directory += struct.pack("<HHII", 0, kind, noff, size)
    assert len(directory) == dir_len
    return jpeg + blocks + directory + struct.pack("<I", dir_len) + b"SEFT"


def main():
    base = Path(sys.argv[1]).read_bytes()
    out = Path(sys.argv[2])
    made = {
        "motion-photo.jpg": motion(base),
        "micro-video.jpg": micro_video(base),
        "ultra-hdr.jpg": ultra_hdr(base, base),
        "samsung-sef.jpg": samsung(base),
        # Refused: unknown bytes after the EOI, a motion photo whose XMP
        # announces another length than its clip has, and a cut-off clip.
        "unknown-trailer.jpg": base + b"PK\x03\x04" + bytes(60),
        "motion-wrong-length.jpg": motion(base, len(MP4) + 1),
        "motion-truncated.jpg": motion(base)[:-16],
        "motion-zip-in-box.jpg": motion(base, len(ZIP_IN_BOX), ZIP_IN_BOX),
    }
    for name, data in made.items():
        (out / name).write_bytes(data)


if __name__ == "__main__":
    main()
