#!/usr/bin/env python3
"""Reads the first heat map of an attn-diff --report page back from a
screenshot of it, by colour alone (the standard library only: the PNG is
decoded with zlib).

Usage: heatmap-cells.py SCREENSHOT.png REQUESTS HEADS

The page draws each heat map's cells inside a 2-pixel frame of pure blue,
in equal columns (heads) and rows (requests) (tools/attn-diff/Report.h).
This finds the top-most frame and prints one line per request with a letter
per head, from the colour at the cell's centre:

  request 0: gRgggRgg

R a red (failing) cell, g a green (passing) one, ? anything else. Exits 1
when the picture has no frame: a page without its heat map fails the test.
"""
import struct
import sys
import zlib


def paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def read_png(path):
    """Width, height and rows of (r, g, b) tuples of an 8-bit RGB or RGBA
    PNG without interlacing."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        sys.exit(f"{path}: not a PNG")
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, colour, _, _, interlace = header
    if depth != 8 or colour not in (2, 6) or interlace:
        sys.exit(f"{path}: expected 8-bit RGB(A) without interlacing")
    bpp = 3 if colour == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * bpp
    prev = bytearray(stride)
    rows = []
    for y in range(height):
        start = y * (stride + 1)
        kind = raw[start]
        line = bytearray(raw[start + 1:start + 1 + stride])
        if kind == 1:
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 0xFF
        elif kind == 2:
            line = bytearray((a + b) & 0xFF for a, b in zip(line, prev))
        elif kind == 3:
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 0xFF
        elif kind == 4:
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                up_left = prev[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + paeth(left, prev[i], up_left)) & 0xFF
        rows.append([tuple(line[x * bpp:x * bpp + 3]) for x in range(width)])
        prev = line
    return width, height, rows


def is_frame(p):
    r, g, b = p
    return b > 200 and r < 60 and g < 60


def classify(p):
    r, g, b = p
    if r - max(g, b) > 60:
        return "R"
    if g > r + 5 and g > b:
        return "g"
    return "?"


def main():
    path, requests, heads = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    width, height, rows = read_png(path)
    corner = next(((x, y) for y in range(height) for x in range(width)
                   if is_frame(rows[y][x])), None)
    if corner is None:
        print("no heat map frame in the picture")
        return 1
    x0, y0 = corner
    x1 = x0
    while x1 + 1 < width and is_frame(rows[y0][x1 + 1]):
        x1 += 1
    y1 = y0
    while y1 + 1 < height and is_frame(rows[y1 + 1][x0]):
        y1 += 1
    # Inward from the corners to the first pixel that is not frame.
    k = 0
    while is_frame(rows[y0 + k][x0 + k]):
        k += 1
    left, top = x0 + k, y0 + k
    k = 0
    while is_frame(rows[y1 - k][x1 - k]):
        k += 1
    right, bottom = x1 - k + 1, y1 - k + 1
    cell_w = (right - left) / heads
    cell_h = (bottom - top) / requests
    for r in range(requests):
        y = int(top + (r + 0.5) * cell_h)
        cells = "".join(classify(rows[y][int(left + (h + 0.5) * cell_w)])
                        for h in range(heads))
        print(f"request {r}: {cells}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
