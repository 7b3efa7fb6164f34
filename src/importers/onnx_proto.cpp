#include "importers/onnx_proto.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include <protozero/exception.hpp>
#include <protozero/pbf_reader.hpp>

#include "core/error.hpp"
#include "core/limits.hpp"

namespace prenet::onnx {
namespace {

using protozero::pbf_reader;
using protozero::pbf_wire_type;

[[noreturn]] void bad(const std::string& message) { throw Error("ONNX file: " + message, ErrorCode::invalid_model); }

void expect(const pbf_reader& r, pbf_wire_type type, const char* what) {
    if (r.wire_type() != type) bad(std::string("field '") + what + "' has the wrong protobuf wire type (corrupt file?)");
}

std::string read_string(pbf_reader& r, const char* what) {
    expect(r, pbf_wire_type::length_delimited, what);
    return r.get_string();
}

// Each element of a repeated numeric field, one element or a packed run: `single` is one element's wire type.
template <typename One, typename Packed, typename Each>
void for_each_repeated(pbf_reader& r, const char* what, pbf_wire_type single, One one, Packed packed, Each each) {
    if (r.wire_type() == single) {
        each(one(r));
    } else if (r.wire_type() == pbf_wire_type::length_delimited) {
        for (auto v : packed(r)) each(v);
    } else {
        bad(std::string("field '") + what + "' has the wrong protobuf wire type (corrupt file?)");
    }
}

constexpr auto get_int64 = [](pbf_reader& x) { return x.get_int64(); };
constexpr auto get_packed_int64 = [](pbf_reader& x) { return x.get_packed_int64(); };
constexpr auto get_float = [](pbf_reader& x) { return x.get_float(); };
constexpr auto get_packed_float = [](pbf_reader& x) { return x.get_packed_float(); };
constexpr auto get_double = [](pbf_reader& x) { return x.get_double(); };
constexpr auto get_packed_double = [](pbf_reader& x) { return x.get_packed_double(); };

// A repeated field into `out`, refusing more than `max` entries.
template <typename T, typename One, typename Packed>
void read_repeated(pbf_reader& r, std::vector<T>& out, std::size_t max, const char* what, pbf_wire_type single,
                   One one, Packed packed) {
    for_each_repeated(r, what, single, one, packed, [&](auto v) {
        if (out.size() >= max) bad(std::string("'") + what + "' has more than " + std::to_string(max) + " entries");
        out.push_back(T(v));
    });
}

void read_ints(pbf_reader& r, std::vector<std::int64_t>& out, std::size_t max, const char* what) {
    read_repeated(r, out, max, what, pbf_wire_type::varint, get_int64, get_packed_int64);
}

void read_floats(pbf_reader& r, std::vector<double>& out, std::size_t max, const char* what) {
    read_repeated(r, out, max, what, pbf_wire_type::fixed32, get_float, get_packed_float);
}

// Bytes per element of a fixed-size type (0: not a fixed size, or 4-bit types, counted apart).
std::int64_t element_bytes(int type) {
    switch (type) {
        case kBool: case kUint8: case kInt8: case 17: case 18: case 19: case 20: return 1;  // float8 types
        case kUint16: case kInt16: case kFloat16: case kBfloat16: return 2;
        case kFloat: case kInt32: case kUint32: return 4;
        case kInt64: case kDouble: case kUint64: case 14: return 8;  // complex64
        case 15: return 16;                                              // complex128
        default: return 0;
    }
}

// Little-endian values of a small tensor's raw_data.
void decode_raw(Tensor& t, std::string_view raw) {
    auto n = static_cast<std::size_t>(t.elements);
    auto at = [&](std::size_t i, std::size_t size) {
        std::uint64_t v = 0;
        for (std::size_t b = 0; b < size; ++b) v |= std::uint64_t(static_cast<unsigned char>(raw[i * size + b])) << (8 * b);
        return v;
    };
    switch (t.data_type) {
        case kInt64: for (std::size_t i = 0; i < n; ++i) t.ints.push_back(static_cast<std::int64_t>(at(i, 8))); break;
        case kUint64:
            for (std::size_t i = 0; i < n; ++i)
                t.ints.push_back(static_cast<std::int64_t>(std::min<std::uint64_t>(at(i, 8), INT64_MAX)));
            break;
        case kInt32: for (std::size_t i = 0; i < n; ++i) t.ints.push_back(static_cast<std::int32_t>(at(i, 4))); break;
        case kUint32: for (std::size_t i = 0; i < n; ++i) t.ints.push_back(static_cast<std::int64_t>(at(i, 4))); break;
        case kInt16: for (std::size_t i = 0; i < n; ++i) t.ints.push_back(static_cast<std::int16_t>(at(i, 2))); break;
        case kUint16: for (std::size_t i = 0; i < n; ++i) t.ints.push_back(static_cast<std::int64_t>(at(i, 2))); break;
        case kInt8: for (std::size_t i = 0; i < n; ++i) t.ints.push_back(static_cast<std::int8_t>(at(i, 1))); break;
        case kUint8: case kBool: for (std::size_t i = 0; i < n; ++i) t.ints.push_back(static_cast<std::int64_t>(at(i, 1))); break;
        case kFloat:
            for (std::size_t i = 0; i < n; ++i) {
                auto bits = static_cast<std::uint32_t>(at(i, 4));
                float f;
                std::memcpy(&f, &bits, 4);
                t.floats.push_back(f);
            }
            break;
        case kDouble:
            for (std::size_t i = 0; i < n; ++i) {
                std::uint64_t bits = at(i, 8);
                double d;
                std::memcpy(&d, &bits, 8);
                t.floats.push_back(d);
            }
            break;
        default: return;  // half, bfloat16, float8: values not needed
    }
    t.has_values = true;
}

Tensor read_tensor(pbf_reader r, const std::string& context) {
    Tensor t;
    std::string_view raw;
    bool has_raw = false;
    std::size_t typed = 0;  // values in the typed fields (float_data, int64_data, ...)
    std::vector<std::int64_t> ints;
    std::vector<double> floats;
    auto keep_float = [&](double v) {
        if (typed++ < std::size_t(kMaxValueElements)) floats.push_back(v);
    };
    auto keep_int = [&](std::int64_t v) {
        if (typed++ < std::size_t(kMaxValueElements)) ints.push_back(v);
    };
    while (r.next()) {
        switch (r.tag()) {
            case 1: read_ints(r, t.dims, 64, "dims"); break;
            case 2: expect(r, pbf_wire_type::varint, "data_type"); t.data_type = r.get_int32(); break;
            case 8: t.name = read_string(r, "name"); break;
            case 9: {
                expect(r, pbf_wire_type::length_delimited, "raw_data");
                auto v = r.get_view();
                raw = std::string_view(v.data(), v.size());
                has_raw = true;
                break;
            }
            case 14: expect(r, pbf_wire_type::varint, "data_location"); t.external = r.get_int32() == 1; break;
            // Typed data: counted whole, values kept for small tensors only.
            case 4:  // float_data
                for_each_repeated(r, "float_data", pbf_wire_type::fixed32, get_float, get_packed_float, keep_float);
                break;
            case 5: case 7: case 11:  // int32_data, int64_data, uint64_data (varints)
                for_each_repeated(r, "integer data", pbf_wire_type::varint, get_int64, get_packed_int64, keep_int);
                break;
            case 10:  // double_data
                for_each_repeated(r, "double_data", pbf_wire_type::fixed64, get_double, get_packed_double, keep_float);
                break;
            case 6:  // string_data
                expect(r, pbf_wire_type::length_delimited, "string_data");
                r.skip();
                ++typed;
                break;
            default: r.skip();
        }
    }
    std::string what = "tensor '" + (t.name.empty() ? context : t.name) + "'";
    for (auto d : t.dims) {
        if (d < 0) bad(what + " has a negative dimension " + std::to_string(d));
        if (d > limits::dimension)
            bad(what + " has a dimension of " + std::to_string(d) + ", over the limit of " +
                std::to_string(limits::dimension));
        if (d > 0 && t.elements > limits::tensor_elements / d)
            bad(what + " declares more than " + std::to_string(limits::tensor_elements) +
                " elements (the limit on one tensor)");
        t.elements *= d;
    }
    if (t.external) return t;
    if (has_raw) {
        std::int64_t size = element_bytes(t.data_type);
        std::int64_t expected = size ? t.elements * size
                                     : (t.data_type >= 21 && t.data_type <= 23 ? (t.elements + 1) / 2 : -1);
        if (expected >= 0 && std::int64_t(raw.size()) != expected)
            bad(what + " declares " + std::to_string(t.elements) + " elements (" + std::to_string(expected) +
                " bytes) but its raw_data holds " + std::to_string(raw.size()) + " bytes");
        if (t.elements <= kMaxValueElements) decode_raw(t, raw);
        return t;
    }
    if (typed) {
        // float16 and bfloat16 values are stored as int32_data (one per element); strings one per element.
        if (std::int64_t(typed) != t.elements)
            bad(what + " declares " + std::to_string(t.elements) + " elements but holds " + std::to_string(typed) +
                " values");
        if (t.elements <= kMaxValueElements) {
            if (is_integer_type(t.data_type) || t.data_type == kBool) t.ints = std::move(ints), t.has_values = true;
            else if (t.data_type == kFloat || t.data_type == kDouble) t.floats = std::move(floats), t.has_values = true;
        }
        return t;
    }
    if (t.elements > 0)
        bad(what + " declares " + std::to_string(t.elements) + " elements but holds no data (neither inline nor " +
            "external)");
    t.has_values = true;  // an empty tensor
    return t;
}

Attribute read_attribute(pbf_reader r) {
    Attribute a;
    constexpr std::size_t kMaxList = 4096;
    while (r.next()) {
        switch (r.tag()) {
            case 1: a.name = read_string(r, "attribute name"); break;
            case 20: expect(r, pbf_wire_type::varint, "attribute type"); a.type = r.get_int32(); break;
            case 2: expect(r, pbf_wire_type::fixed32, "attribute f"); a.f = r.get_float(); break;
            case 3: expect(r, pbf_wire_type::varint, "attribute i"); a.i = r.get_int64(); break;
            case 4: a.s = read_string(r, "attribute s"); break;
            case 5:
                expect(r, pbf_wire_type::length_delimited, "attribute t");
                if (!a.tensors.empty()) bad("attribute '" + a.name + "' holds two tensors");
                a.tensors.push_back(read_tensor(r.get_message(), "attribute " + a.name));
                break;
            case 6: case 11: expect(r, pbf_wire_type::length_delimited, "attribute g"); r.skip(); a.has_graph = true; break;
            case 7: read_floats(r, a.floats, kMaxList, "attribute floats"); break;
            case 8: read_ints(r, a.ints, kMaxList, "attribute ints"); break;
            default: r.skip();
        }
    }
    return a;
}

Node read_node(pbf_reader r) {
    Node n;
    constexpr std::size_t kMaxIo = 4096;
    while (r.next()) {
        switch (r.tag()) {
            case 1:
                if (n.inputs.size() >= kMaxIo) bad("a node has more than 4096 inputs");
                n.inputs.push_back(read_string(r, "node input"));
                break;
            case 2:
                if (n.outputs.size() >= kMaxIo) bad("a node has more than 4096 outputs");
                n.outputs.push_back(read_string(r, "node output"));
                break;
            case 3: n.name = read_string(r, "node name"); break;
            case 4: n.op_type = read_string(r, "op_type"); break;
            case 7: n.domain = read_string(r, "node domain"); break;
            case 5:
                expect(r, pbf_wire_type::length_delimited, "attribute");
                if (n.attributes.size() >= 256) bad("a node has more than 256 attributes");
                n.attributes.push_back(read_attribute(r.get_message()));
                break;
            default: r.skip();
        }
    }
    if (n.op_type.empty()) bad("a node has no op_type" + (n.name.empty() ? std::string() : " ('" + n.name + "')"));
    return n;
}

ValueInfo read_value_info(pbf_reader r) {
    ValueInfo v;
    while (r.next()) {
        if (r.tag() == 1) {
            v.name = read_string(r, "value name");
        } else if (r.tag() == 2) {  // TypeProto
            expect(r, pbf_wire_type::length_delimited, "type");
            pbf_reader type = r.get_message();
            while (type.next()) {
                if (type.tag() != 1) { type.skip(); continue; }  // tensor_type only
                expect(type, pbf_wire_type::length_delimited, "tensor_type");
                pbf_reader tensor = type.get_message();
                while (tensor.next()) {
                    if (tensor.tag() == 1) {
                        expect(tensor, pbf_wire_type::varint, "elem_type");
                        v.elem_type = tensor.get_int32();
                    } else if (tensor.tag() == 2) {
                        expect(tensor, pbf_wire_type::length_delimited, "shape");
                        v.has_shape = true;
                        pbf_reader shape = tensor.get_message();
                        while (shape.next()) {
                            if (shape.tag() != 1) { shape.skip(); continue; }
                            expect(shape, pbf_wire_type::length_delimited, "dim");
                            if (v.dims.size() >= 64) bad("value '" + v.name + "' has more than 64 dimensions");
                            Dim d;
                            pbf_reader dim = shape.get_message();
                            while (dim.next()) {
                                if (dim.tag() == 1) {
                                    expect(dim, pbf_wire_type::varint, "dim_value");
                                    d.value = dim.get_int64();
                                    if (d.value < 0 || d.value > limits::dimension)
                                        bad("value '" + v.name + "' has a dimension of " + std::to_string(d.value) +
                                            ", outside 0 to " + std::to_string(limits::dimension));
                                } else if (dim.tag() == 2) {
                                    d.param = read_string(dim, "dim_param");
                                } else {
                                    dim.skip();
                                }
                            }
                            v.dims.push_back(d);
                        }
                    } else {
                        tensor.skip();
                    }
                }
            }
        } else {
            r.skip();
        }
    }
    return v;
}

Graph read_graph(pbf_reader r) {
    Graph g;
    // A node takes at least a few bytes, so a file within limits holds at most a few million; this bounds the
    // memory the parse may take (each node's strings and vectors) well below the page's.
    constexpr std::size_t kMaxNodes = 1'000'000;
    while (r.next()) {
        switch (r.tag()) {
            case 1:
                expect(r, pbf_wire_type::length_delimited, "node");
                if (g.nodes.size() >= kMaxNodes) bad("the graph has more than 1,000,000 nodes");
                g.nodes.push_back(read_node(r.get_message()));
                break;
            case 2: g.name = read_string(r, "graph name"); break;
            case 5:
                expect(r, pbf_wire_type::length_delimited, "initializer");
                if (g.initializers.size() >= kMaxNodes) bad("the graph has more than 1,000,000 initializers");
                g.initializers.push_back(read_tensor(r.get_message(), "initializer #" + std::to_string(g.initializers.size())));
                break;
            case 15: {  // SparseTensorProto: values = 1, dims = 3; counted by its dense dims
                expect(r, pbf_wire_type::length_delimited, "sparse_initializer");
                pbf_reader sparse = r.get_message();
                Tensor t;
                while (sparse.next()) {
                    if (sparse.tag() == 1) {
                        expect(sparse, pbf_wire_type::length_delimited, "sparse values");
                        Tensor values = read_tensor(sparse.get_message(), "sparse initializer");
                        t.name = values.name, t.data_type = values.data_type;
                    } else if (sparse.tag() == 3) {
                        read_ints(sparse, t.dims, 64, "sparse dims");
                    } else {
                        sparse.skip();
                    }
                }
                for (auto d : t.dims) {
                    if (d < 0 || d > limits::dimension || (d > 0 && t.elements > limits::tensor_elements / d))
                        bad("sparse initializer '" + t.name + "' has dims out of the limits");
                    t.elements *= d;
                }
                t.external = true;  // values not held densely
                g.initializers.push_back(std::move(t));
                break;
            }
            case 11: case 12: case 13: {
                expect(r, pbf_wire_type::length_delimited, "value_info");
                auto& list = r.tag() == 11 ? g.inputs : r.tag() == 12 ? g.outputs : g.value_info;
                if (list.size() >= kMaxNodes) bad("the graph has more than 1,000,000 values");
                list.push_back(read_value_info(r.get_message()));
                break;
            }
            default: r.skip();
        }
    }
    return g;
}

// What a file that is not a ModelProto most likely is, from its first bytes.
std::string not_onnx_hint(std::string_view bytes) {
    std::size_t i = 0;
    while (i < bytes.size() && (bytes[i] == ' ' || bytes[i] == '\n' || bytes[i] == '\r' || bytes[i] == '\t')) ++i;
    if (i < bytes.size() && (bytes[i] == '{' || bytes[i] == '['))
        return " (it looks like JSON: give a JSON model as a layers JSON or config.json document instead)";
    if (bytes.substr(0, 2) == "PK")
        return " (it looks like a zip archive, such as a PyTorch checkpoint saved by torch.save: export the model "
               "with torch.onnx.export, see tools/export_onnx.py)";
    if (bytes.substr(0, 8) == "\x89HDF\r\n\x1a\n") return " (it looks like an HDF5 file, such as a Keras .h5 model)";
    return "";
}

}  // namespace

bool is_float_type(int t) {
    return t == kFloat || t == kFloat16 || t == kDouble || t == kBfloat16 || (t >= 17 && t <= 20) || t == 23;
}

bool is_integer_type(int t) {
    return t == kUint8 || t == kInt8 || t == kUint16 || t == kInt16 || t == kInt32 || t == kInt64 || t == kUint32 ||
           t == kUint64 || t == 21 || t == 22;
}

const Attribute* Node::attribute(const std::string& key) const {
    for (const auto& a : attributes)
        if (a.name == key) return &a;
    return nullptr;
}

std::int64_t Node::int_attr(const std::string& key, std::int64_t fallback) const {
    const Attribute* a = attribute(key);
    return a ? a->i : fallback;
}

double Node::float_attr(const std::string& key, double fallback) const {
    const Attribute* a = attribute(key);
    return a ? a->f : fallback;
}

std::string Node::string_attr(const std::string& key, const std::string& fallback) const {
    const Attribute* a = attribute(key);
    return a ? a->s : fallback;
}

std::vector<std::int64_t> Node::ints_attr(const std::string& key) const {
    const Attribute* a = attribute(key);
    return a ? a->ints : std::vector<std::int64_t>{};
}

std::int64_t ModelProto::opset(const std::string& domain) const {
    for (const auto& [d, v] : opsets)
        if (d == domain || (domain.empty() && d == "ai.onnx")) return v;
    return 0;
}

ModelProto parse_model(std::string_view bytes) {
    if (bytes.empty()) bad("the file is empty");
    if (bytes.size() > limits::onnx_bytes)
        bad("the file is " + std::to_string(bytes.size()) + " bytes, more than the limit of " +
            std::to_string(limits::onnx_bytes >> 20) + " MiB (export it with its weights as external data: "
            "only the .onnx file is needed)");
    ModelProto m;
    bool has_graph = false;
    try {
        pbf_reader r(bytes.data(), bytes.size());
        while (r.next()) {
            switch (r.tag()) {
                case 1: expect(r, pbf_wire_type::varint, "ir_version"); m.ir_version = r.get_int64(); break;
                case 2: m.producer_name = read_string(r, "producer_name"); break;
                case 3: m.producer_version = read_string(r, "producer_version"); break;
                case 7:
                    expect(r, pbf_wire_type::length_delimited, "graph");
                    if (has_graph) bad("the model holds two graphs");
                    m.graph = read_graph(r.get_message());
                    has_graph = true;
                    break;
                case 8: {
                    expect(r, pbf_wire_type::length_delimited, "opset_import");
                    pbf_reader op = r.get_message();
                    std::pair<std::string, std::int64_t> entry{"", 0};
                    while (op.next()) {
                        if (op.tag() == 1) entry.first = read_string(op, "opset domain");
                        else if (op.tag() == 2) { expect(op, pbf_wire_type::varint, "opset version"); entry.second = op.get_int64(); }
                        else op.skip();
                    }
                    if (m.opsets.size() >= 256) bad("more than 256 opset imports");
                    m.opsets.push_back(entry);
                    break;
                }
                default: r.skip();
            }
        }
    } catch (const protozero::exception& e) {
        bad(std::string("not a valid ONNX model: the protobuf is truncated or corrupt (") + e.what() + ")" +
            not_onnx_hint(bytes));
    }
    if (!has_graph || m.ir_version <= 0)
        bad(std::string("not an ONNX model: no ") + (has_graph ? "ir_version" : "graph") + " in the file" +
            not_onnx_hint(bytes));
    if (m.graph.nodes.empty()) bad("the graph has no nodes");
    return m;
}

}  // namespace prenet::onnx
