#!/usr/bin/python3
"""Exports the ONNX test fixtures (tests/fixtures/onnx/) with PyTorch's own exporter, torch.onnx.export.

Run with Debian's PyTorch (apt-get install python3-torch python3-torchvision; /usr/bin/python3, not a venv):

    /usr/bin/python3 tools/export_onnx_fixtures.py [out_dir]

Every model is exported in training mode (Dropout and BatchNormalization as in training) without constant
folding, with the batch and sequence (or image) dimensions left symbolic, so PreNeT's importer infers every
shape from the sizes a user asks for. The script writes `fixtures.json` beside the models: for each file the
PyTorch version and PyTorch's own parameter count, sum(p.numel() for p in model.parameters()) (a tied weight
once), which tests/importers-onnx-test.cpp compares PreNeT's count with.

Large models (resnet18's weights are 45 MB) are committed with their weights moved out: each initializer keeps
its name, type and dims and points at an external data file (ONNX's `data_location = EXTERNAL`) that is not
committed. The importer never reads weight values, only their dims, so the parameter count still comes from the
real initializers. Small models keep their weights inline (raw_data), which the importer's size checks read.

The same recipe converts any PyTorch model (docs/importers.md):

    torch.onnx.export(model, example_inputs, "model.onnx", training=torch.onnx.TrainingMode.TRAINING,
                      do_constant_folding=False, opset_version=17,
                      input_names=["x"], dynamic_axes={"x": {0: "batch"}})
"""
import json
import os
import sys

import torch
import torch.nn as nn
import torchvision

OPSET = 17  # LayerNormalization is an ONNX op from opset 17 (torch 1.13's newest)


class LstmLM(nn.Module):
    """PyTorch's word_language_model example: embedding, dropout, stacked LSTM, dropout, decoder. The stack is
    one-layer LSTMs with dropout between them: torch.onnx.export refuses nn.LSTM's own inter-layer dropout in
    training mode (same parameters, same computation)."""

    def __init__(self, vocab, hidden, layers, dropout, tied):
        super().__init__()
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(vocab, hidden)
        self.rnn = nn.ModuleList(nn.LSTM(hidden, hidden, batch_first=True) for _ in range(layers))
        self.decoder = nn.Linear(hidden, vocab)
        if tied:
            self.decoder.weight = self.encoder.weight

    def forward(self, tokens):
        x = self.drop(self.encoder(tokens))
        for rnn in self.rnn:
            x, _ = rnn(x)
            x = self.drop(x)
        return self.decoder(x)


class TinyTransformer(nn.Module):
    """Token and learned position embeddings, a 2-layer nn.TransformerEncoder, a vocabulary head."""

    def __init__(self, vocab=1000, d=64, heads=4, ff=128, layers=2, max_len=256):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(torch.zeros(1, max_len, d))
        layer = nn.TransformerEncoderLayer(d, heads, ff, dropout=0.1, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = nn.Linear(d, vocab)

    def forward(self, tokens):
        x = self.embed(tokens) + self.pos[:, : tokens.shape[1]]
        return self.head(self.encoder(x))


# ---- protobuf wire format, enough to move initializer data out (ModelProto.graph = 7, GraphProto.initializer
# = 5, TensorProto: float_data 4, int32_data 5, int64_data 7, raw_data 9, double_data 10, uint64_data 11,
# external_data 13, data_location 14).
def read_varint(buf, i):
    shift = value = 0
    while True:
        b = buf[i]
        i += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            return value, i


def varint(value):
    out = bytearray()
    while True:
        b = value & 0x7F
        value >>= 7
        if value:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def fields(buf):
    """(field number, wire type, raw bytes of the whole field, payload) for each field of a message."""
    i = 0
    while i < len(buf):
        start = i
        key, i = read_varint(buf, i)
        num, wire = key >> 3, key & 7
        if wire == 0:
            _, i = read_varint(buf, i)
            payload = None
        elif wire == 1:
            i += 8
            payload = None
        elif wire == 5:
            i += 4
            payload = None
        elif wire == 2:
            n, i = read_varint(buf, i)
            payload = buf[i:i + n]
            i += n
        else:
            raise ValueError("unexpected wire type %d" % wire)
        yield num, wire, buf[start:i], payload


def length_field(num, payload):
    return varint(num << 3 | 2) + varint(len(payload)) + payload


def externalize(model_bytes, location):
    """The model with every initializer's data replaced by a reference into `location` (not written)."""
    offset = 0

    def tensor(buf):
        nonlocal offset
        kept, size = bytearray(), 0
        for num, _, raw, payload in fields(buf):
            if num in (4, 5, 7, 9, 10, 11):
                size += len(payload)
            elif num not in (13, 14):
                kept += raw
        for key, value in (("location", location), ("offset", str(offset)), ("length", str(size))):
            entry = length_field(1, key.encode()) + length_field(2, value.encode())
            kept += length_field(13, entry)
        kept += varint(14 << 3 | 0) + varint(1)  # data_location = EXTERNAL
        offset += size
        return bytes(kept)

    def graph(buf):
        out = bytearray()
        for num, _, raw, payload in fields(buf):
            out += length_field(5, tensor(payload)) if num == 5 else raw
        return bytes(out)

    out = bytearray()
    for num, _, raw, payload in fields(model_bytes):
        out += length_field(7, graph(payload)) if num == 7 else raw
    return bytes(out)


def unknown_op_model(path):
    """A graph written by hand (not by an exporter) around an op no catalogue knows, com.example.Frobnicate:
    x [batch, 16] -> MatMul + Add (a linear) -> Relu -> Frobnicate -> MatMul -> y. Its 672 parameters are its
    initializers' elements (16 x 32 + 32 + 32 x 4), the tests' expectation for unknown ops."""
    def tensor(name, dims):
        out = b"".join(varint(1 << 3 | 0) + varint(d) for d in dims)
        out += varint(2 << 3 | 0) + varint(1) + length_field(8, name.encode())
        count = 1
        for d in dims:
            count *= d
        return out + length_field(9, bytes(4 * count))  # float32 zeros, inline

    def node(op, inputs, outputs, domain=b""):
        out = b"".join(length_field(1, i.encode()) for i in inputs)
        out += b"".join(length_field(2, o.encode()) for o in outputs)
        out += length_field(3, outputs[0].encode()) + length_field(4, op.encode())
        return out + (length_field(7, domain) if domain else b"")

    def value(name, elem_type, dims):
        shape = b"".join(length_field(1, length_field(2, d.encode()) if isinstance(d, str) else varint(1 << 3) + varint(d))
                         for d in dims)
        return length_field(1, name.encode()) + length_field(2, length_field(1, varint(1 << 3) + varint(elem_type) +
                                                                             length_field(2, shape)))

    graph = b"".join(length_field(1, n) for n in [
        node("MatMul", ["x", "w1"], ["h"]), node("Add", ["h", "b1"], ["hb"]), node("Relu", ["hb"], ["r"]),
        node("Frobnicate", ["r"], ["f"], b"com.example"), node("MatMul", ["f", "w2"], ["y"])])
    graph += length_field(2, b"unknown_op")
    graph += b"".join(length_field(5, tensor(n, d)) for n, d in [("w1", [16, 32]), ("b1", [32]), ("w2", [32, 4])])
    graph += length_field(11, value("x", 1, ["batch", 16])) + length_field(12, value("y", 1, ["batch", 4]))
    opsets = length_field(8, length_field(1, b"") + varint(2 << 3) + varint(OPSET))
    opsets += length_field(8, length_field(1, b"com.example") + varint(2 << 3) + varint(1))
    model = varint(1 << 3) + varint(8) + length_field(2, b"handmade") + length_field(7, graph) + opsets
    with open(path, "wb") as f:
        f.write(model)
    return {"params": 16 * 32 + 32 + 32 * 4, "input": "x", "unknown_ops": {"com.example.Frobnicate": 1}}


def export(name, model, example, input_name, dynamic, out_dir, external):
    model.train()
    path = os.path.join(out_dir, name + ".onnx")
    torch.onnx.export(model, (example,), path, training=torch.onnx.TrainingMode.TRAINING,
                      do_constant_folding=False, opset_version=OPSET, input_names=[input_name],
                      output_names=["output"], dynamic_axes={input_name: dynamic})
    if external:
        with open(path, "rb") as f:
            data = f.read()
        with open(path, "wb") as f:
            f.write(externalize(data, name + ".weights"))
    params = sum(p.numel() for p in model.parameters())
    print("%-22s %12d params  %8d bytes%s" % (name, params, os.path.getsize(path),
                                              "  (weights external)" if external else ""))
    return {"params": params, "input": input_name, "example_shape": list(example.shape),
            "weights": "external" if external else "inline"}


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "tests",
                                                                   "fixtures", "onnx")
    os.makedirs(out_dir, exist_ok=True)
    torch.manual_seed(0)
    image = torch.randn(2, 3, 224, 224)
    image_axes = {0: "batch", 2: "height", 3: "width"}
    tokens = torch.randint(0, 1000, (2, 35))
    token_axes = {0: "batch", 1: "seq"}
    fixtures = {}
    fixtures["resnet18"] = export("resnet18", torchvision.models.resnet18(), image, "image", image_axes, out_dir,
                                  True)
    fixtures["mobilenet_v2"] = export("mobilenet_v2", torchvision.models.mobilenet_v2(), image, "image",
                                      image_axes, out_dir, True)
    # The zoo's lstm-lm (Zaremba et al.'s large PTB model), untied like the zoo's.
    fixtures["lstm_lm"] = export("lstm_lm", LstmLM(10000, 1500, 2, 0.65, tied=False),
                                 torch.randint(0, 10000, (2, 35)), "tokens", token_axes, out_dir, True)
    # A tiny one with its decoder tied to the embedding, weights inline.
    fixtures["lstm_lm_tied"] = export("lstm_lm_tied", LstmLM(1000, 64, 2, 0.2, tied=True), tokens, "tokens",
                                      token_axes, out_dir, False)
    fixtures["transformer_encoder"] = export("transformer_encoder", TinyTransformer(), tokens, "tokens",
                                             token_axes, out_dir, False)
    # Fuzz seeds (fuzz/seeds/onnx/, scripts/fuzz.sh): the fixtures with inline weights, moved out, so that the
    # graphs fit libFuzzer's input size.
    seeds = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fuzz", "seeds", "onnx")
    os.makedirs(seeds, exist_ok=True)
    for name in ("lstm_lm_tied", "transformer_encoder"):
        with open(os.path.join(out_dir, name + ".onnx"), "rb") as f:
            data = externalize(f.read(), name + ".weights")
        with open(os.path.join(seeds, name + ".onnx"), "wb") as f:
            f.write(data)
    handmade = {"unknown_op": unknown_op_model(os.path.join(out_dir, "unknown_op.onnx"))}
    doc = {"exporter": "torch.onnx.export, training mode, do_constant_folding=False, opset %d" % OPSET,
           "torch": torch.__version__, "torchvision": torchvision.__version__, "models": fixtures,
           "handmade": handmade}
    with open(os.path.join(out_dir, "fixtures.json"), "w") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main()
