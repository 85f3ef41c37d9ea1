#!/usr/bin/env python3
"""Writes and prints little .npy files without NumPy, for the tool tests.

  npy.py write FILE DTYPE V1 V2 ...   (DTYPE: f4, i4, u1, f8)
  npy.py write-fortran FILE DTYPE ROWS COLS V1 V2 ...
                                      (values in C order, stored Fortran)
  npy.py write-matrix FILE DTYPE ROWS COLS FIRST
                                      (FIRST, FIRST + 1, ... in C order)
  npy.py print FILE                   (one value per line)
"""
import struct
import sys

FORMATS = {"f4": "f", "i4": "i", "u1": "B", "f8": "d"}


def write(path, dtype, values, shape=None, fortran=False):
    code = FORMATS[dtype]
    values = [float(v) if code in "fd" else int(v) for v in values]
    descr = ("|" if dtype == "u1" else "<") + dtype
    shape = shape or (len(values),)
    if fortran:  # the first index runs fastest in the file
        rows, cols = shape
        values = [values[r * cols + c] for c in range(cols) for r in range(rows)]
    header = "{'descr': '%s', 'fortran_order': %s, 'shape': (%s), }" % (
        descr, fortran, ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else ""))
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    with open(path, "wb") as out:
        out.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)))
        out.write(header.encode("latin1"))
        out.write(struct.pack("<%d%s" % (len(values), code), *values))


def read(path):
    """(shape, values) of a file, its values flat in row-major order."""
    data = open(path, "rb").read()
    length = struct.unpack("<H", data[8:10])[0]
    header = data[10:10 + length].decode("latin1")
    dtype = header.split("'descr': '")[1][1:3]
    shape = tuple(int(d) for d in
                  header.split("'shape': (")[1].split(")")[0].split(",") if d)
    code = FORMATS[dtype]
    body = data[10 + length:]
    count = len(body) // struct.calcsize(code)
    return shape, struct.unpack("<%d%s" % (count, code), body)


def show(path):
    for value in read(path)[1]:
        print(value)


if __name__ == "__main__":
    if sys.argv[1] == "write":
        write(sys.argv[2], sys.argv[3], sys.argv[4:])
    elif sys.argv[1] == "write-fortran":
        write(sys.argv[2], sys.argv[3], sys.argv[6:],
              (int(sys.argv[4]), int(sys.argv[5])), fortran=True)
    elif sys.argv[1] == "write-matrix":
        rows, cols, first = (int(v) for v in sys.argv[4:7])
        values = range(first, first + rows * cols)
        write(sys.argv[2], sys.argv[3], values, (rows, cols))
    else:
        show(sys.argv[2])
