"""The protobuf wire format, enough to write ONNX files by hand (ModelProto and its parts by field number): the
one encoder the bad-input corpus (tests/fixtures/bad/make_cases.py) and the ONNX fuzz seeds
(fuzz/make_onnx_seeds.py) write their files with."""


def varint(v):
    out = bytearray()
    while True:
        b, v = v & 0x7F, v >> 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def ld(num, payload):
    """A length-delimited field (a string, bytes or a nested message)."""
    return varint(num << 3 | 2) + varint(len(payload)) + payload


def vi(num, v):
    """A varint field (an integer or an enum)."""
    return varint(num << 3) + varint(v)
