"""Writes FOLDER/reference.safetensors as the reference safetensors writer (the `safetensors`
package's serialize) lays a file out, with NumPy and the standard library alone: the header is
compact JSON with "__metadata__" first and then the tensors by dtype (descending in the
reference's order of dtypes: U64, F64, F32) and name, padded with spaces to a multiple of 8
bytes; the data follow in that order, little-endian. (The reference keeps the metadata in a hash
map, in no order; this file sorts its keys, as memtrace does.)
tests/safetensors_reference_check.cpp reads it with memtrace (ctest runs both).
Usage: python3 safetensors_reference_writer.py FOLDER"""
import json
import struct
import sys

import numpy as np

SIZES = {"F64": 8, "U64": 8, "F32": 4}
RANK = {"U64": 3, "F64": 2, "F32": 1}  # the reference's enum order, where these three are concerned
NUMPY = {"F64": "<f8", "U64": "<u8", "F32": "<f4"}


def serialize(tensors, metadata):
    """The bytes of a safetensors file of tensors (name -> (dtype, numpy array)) and metadata."""
    order = sorted(tensors, key=lambda name: (-RANK[tensors[name][0]], name))
    header = {"__metadata__": dict(sorted(metadata.items()))} if metadata else {}
    offset = 0
    for name in order:
        dtype, array = tensors[name]
        size = array.size * SIZES[dtype]
        header[name] = {"dtype": dtype, "shape": list(array.shape), "data_offsets": [offset, offset + size]}
        offset += size
    text = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    text += b" " * ((8 - len(text) % 8) % 8)
    data = b"".join(np.ascontiguousarray(tensors[name][1], dtype=NUMPY[tensors[name][0]]).tobytes()
                    for name in order)
    return struct.pack("<Q", len(text)) + text + data


def main():
    tensors = {
        "z.weight": ("F32", np.array([1.5, -2.25, 3.0], dtype=np.float32)),  # 3 values: 12 bytes
        "a.bias": ("F32", np.array([[0.5, 0.25], [-1.0, 8.0]], dtype=np.float32)),
        "m.moment": ("F64", np.arange(6, dtype=np.float64).reshape(2, 3) / 7.0),
        "count": ("U64", np.array(2**63 + 5, dtype=np.uint64)),
        "z.steps": ("U64", np.array([7, 8], dtype=np.uint64)),  # a U64 comes before an F64 named "a"
        "a.mean": ("F64", np.array([0.25], dtype=np.float64)),
    }
    with open(f"{sys.argv[1]}/reference.safetensors", "wb") as f:
        f.write(serialize(tensors, {"format": "reference", "note": "λ = 0.9\ntwo lines"}))
    print(f"wrote {sys.argv[1]}/reference.safetensors")


if __name__ == "__main__":
    main()
