#!/usr/bin/env python3
"""Writes the ONNX fuzz seeds with subgraph attributes, many op types and invalid UTF-8 names (issue 27) into
fuzz/seeds/onnx/, over the protobuf wire format with ONNX's field numbers (as tests/fixtures/bad/make_cases.py).
Small on purpose: libFuzzer mutates them; the committed .onnx files are this script's output."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
from protobuf_wire import ld, vi  # noqa: E402

def b(s): return s if isinstance(s, bytes) else s.encode()
# NodeProto: input 1, output 2, name 3, op_type 4, attribute 5, domain 7. AttributeProto: name 1, i 3, g 6,
# graphs 11, type 20 (INT 2, GRAPH 5, GRAPHS 10).
def node(op, ins, outs, attrs=(), domain=None, name=None):
    return (b"".join(ld(1, b(i)) for i in ins) + b"".join(ld(2, b(o)) for o in outs) + (ld(3, b(name)) if name else b"") +
            ld(4, b(op)) + b"".join(ld(5, a) for a in attrs) + (ld(7, b(domain)) if domain else b""))
def int_attr(name, v): return ld(1, b(name)) + vi(20, 2) + vi(3, v)
def value(name, dims):  # ValueInfoProto: name 1, type 2 (tensor_type 1: elem_type 1, shape 2: dim 1: value 1 / param 2)
    shape = b"".join(ld(1, ld(2, b(d)) if isinstance(d, str) else vi(1, d)) for d in dims)
    return ld(1, b(name)) + ld(2, ld(1, vi(1, 1) + ld(2, shape)))
def graph(nodes, inits=(), inputs=(), outputs=(), infos=()):  # GraphProto: node 1, initializer 5, input 11, output 12, value_info 13
    return (b"".join(ld(1, n) for n in nodes) + b"".join(ld(5, t) for t in inits) + b"".join(ld(11, i) for i in inputs) +
            b"".join(ld(12, o) for o in outputs) + b"".join(ld(13, v) for v in infos))
def graph_attr(name, g): return ld(1, b(name)) + vi(20, 5) + ld(6, g)
def graphs_attr(name, gs): return ld(1, b(name)) + vi(20, 10) + b"".join(ld(11, g) for g in gs)
def weight(name, dims): return b"".join(vi(1, d) for d in dims) + vi(2, 1) + ld(8, b(name)) + vi(14, 1)  # data external
def model(g, opsets=(("", 17),)):
    return vi(1, 8) + ld(7, g) + b"".join(ld(8, ld(1, b(d)) + vi(2, v)) for d, v in opsets)

body = graph([node("Relu", ["a"], ["b"])], inputs=[value("a", ["batch", 8])], outputs=[value("b", ["batch", 8])])
seeds = {
    # If with both branches, its output claimed by value_info, then a linear layer.
    "subgraph_if.onnx": model(graph(
        [node("Relu", ["x"], ["r"]), node("ReduceMax", ["r"], ["c"], [int_attr("keepdims", 0)]), node("If", ["c"], ["o"], [graph_attr("then_branch", body), graph_attr("else_branch", body)]),
         node("MatMul", ["o", "w"], ["y"])],
        [weight("w", [8, 4])], [value("x", ["batch", 8])], [value("y", ["batch", 4])], [value("o", ["batch", 8])])),
    # Loop and Scan bodies, and known ops (an LSTM, a Conv-free MatMul) carrying a graph attribute of their own.
    "subgraph_loop_lstm.onnx": model(graph(
        [node("Loop", ["", "", "x"], ["l"], [graph_attr("body", body)]),
         node("Transpose", ["x"], ["t"], [ld(1, b"perm") + vi(20, 7) + ld(8, bytes([1, 0, 2]))]),
         node("LSTM", ["t", "w", "r"], ["h"], [int_attr("hidden_size", 16), graph_attr("body", body)]),
         node("Scan", ["h"], ["s"], [graphs_attr("bodies", [body, body]), int_attr("num_scan_inputs", 1)])],
        [weight("w", [1, 64, 8]), weight("r", [1, 64, 16])], [value("x", ["batch", "seq", 8])], [value("s", [])],
        [value("l", ["batch", "seq", 8]), value("h", [])]), (("", 17),)),
    # A com.microsoft Attention with a graph attribute, as a contrib-op export writes it.
    "subgraph_ms_attention.onnx": model(graph(
        [node("Attention", ["x", "w", "bias"], ["y"], [int_attr("num_heads", 2), graph_attr("g", body)], "com.microsoft")],
        [weight("w", [8, 24]), weight("bias", [24])], [value("x", ["batch", "seq", 8])], [value("y", [])]),
        (("", 17), ("com.microsoft", 1))),
    # 300 distinct op types in four domains, chained between known ops.
    "many_op_types.onnx": model(graph(
        [node("Relu", ["x"], ["v0"])] +
        [node(f"Op{i}", [f"v{i}"], [f"v{i + 1}"], domain=["", "my.domain", "com.example", "ai.onnx.ml"][i % 4]) for i in range(300)] +
        [node("MatMul", ["v300", "w"], ["y"])],
        [weight("w", [8, 4])], [value("x", ["batch", 8])], [value("y", ["batch", 4])])),
    # Invalid UTF-8 in a node name, an op type, a domain and value names.
    "invalid_utf8_names.onnx": model(graph(
        [node("Relu", ["x"], [b"r\xff"], name=b"n\xc3"), node(b"Op\xe0\x80", [b"r\xff"], [b"u\xed\xa0\x80"], domain=b"d\xf5"),
         node("MatMul", [b"u\xed\xa0\x80", "w"], ["y"])],
        [weight("w", [8, 4])], [value("x", ["batch", 8])], [value("y", ["batch", 4])])),
}
here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "seeds", "onnx")
for name, data in seeds.items():
    with open(os.path.join(here, name), "wb") as f: f.write(data)
    print(name, len(data), "bytes")
