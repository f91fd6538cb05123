"""Makes .npy inputs that must be refused without reading them whole.

  npy-without-end.py sparse PATH DIM,DIM,...   a header of <f4 with that
      shape, and the file extended (sparse, no disk used) to hold the data
  npy-without-end.py fifo PATH DIM,DIM,...     a FIFO at PATH that serves
      that header followed by zeros without end, from a child process
      that quits when the reader closes it (or after a minute)
"""
import os
import signal
import struct
import sys


def header(shape):
    dims = ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "")
    text = "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }" % dims
    total = (10 + len(text) + 1 + 63) // 64 * 64
    text = text.ljust(total - 10 - 1) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(text)) + text.encode()


def main():
    kind, path, dims = sys.argv[1:4]
    shape = [int(d) for d in dims.split(",")]
    head = header(shape)
    if kind == "sparse":
        size = 4
        for d in shape:
            size *= d
        with open(path, "wb") as f:
            f.write(head)
            f.truncate(len(head) + size)
        return
    os.mkfifo(path)
    if os.fork():
        return
    # The child: serve the FIFO, detached from the test's pipes.
    os.setsid()
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    signal.alarm(60)
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    with open(path, "wb") as f:
        f.write(head)
        zeros = bytes(1 << 16)
        while True:
            f.write(zeros)


main()
