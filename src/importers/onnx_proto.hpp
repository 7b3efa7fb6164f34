#pragma once
// The parts of an ONNX file (a protobuf ModelProto, onnx/onnx.proto) the importer needs, read with protozero
// over the wire format: the opsets, the graph's nodes with their attributes, its inputs and outputs with their
// shapes, value_info, and the initializers' names, types and dims. Weight values are never copied; only small
// tensors (constants a shape computation reads: Reshape targets, Slice bounds, a dropout ratio) keep theirs.
// docs/importers.md says why protozero; docs/limits.md lists the limits checked here.
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace prenet::onnx {

// TensorProto.DataType values used by name.
enum DataType : int {
    kUndefined = 0, kFloat = 1, kUint8 = 2, kInt8 = 3, kUint16 = 4, kInt16 = 5, kInt32 = 6, kInt64 = 7,
    kString = 8, kBool = 9, kFloat16 = 10, kDouble = 11, kUint32 = 12, kUint64 = 13, kBfloat16 = 16,
};
bool is_float_type(int data_type);  // float, half, double, bfloat16, the float8 and float4 types
bool is_integer_type(int data_type);

// Tensors with at most this many elements keep their values (enough for any shape or index tensor).
inline constexpr std::int64_t kMaxValueElements = 4096;

struct Tensor {
    std::string name;
    int data_type = kUndefined;
    std::vector<std::int64_t> dims;
    std::int64_t elements = 1;  // the product of dims, checked against limits::tensor_elements
    bool external = false;       // data_location EXTERNAL: the values are in another file (not read)
    bool has_values = false;     // small numeric tensors only: their values, as integers or as doubles
    std::vector<std::int64_t> ints;
    std::vector<double> floats;
};

struct Attribute {
    enum Type : int { kUnset = 0, kFloat = 1, kInt = 2, kString = 3, kTensor = 4, kGraph = 5, kFloats = 6,
                      kInts = 7, kStrings = 8, kTensors = 9, kGraphs = 10 };
    std::string name;
    int type = kUnset;
    double f = 0;
    std::int64_t i = 0;
    std::string s;
    std::vector<double> floats;
    std::vector<std::int64_t> ints;
    std::vector<Tensor> tensors;  // the `t` attribute (a Constant's value), at most one
    bool has_graph = false;       // a subgraph (If, Loop, Scan): not read; the node's shapes are still checked
};

struct Node {
    std::string name, op_type, domain;
    std::vector<std::string> inputs, outputs;  // an empty name is an absent optional input
    std::vector<Attribute> attributes;

    const Attribute* attribute(const std::string& name) const;
    std::int64_t int_attr(const std::string& name, std::int64_t fallback) const;
    double float_attr(const std::string& name, double fallback) const;
    std::string string_attr(const std::string& name, const std::string& fallback) const;
    std::vector<std::int64_t> ints_attr(const std::string& name) const;  // empty when absent
};

struct Dim {
    std::int64_t value = -1;  // -1: not a fixed value (symbolic or unknown)
    std::string param;        // the symbol (dim_param), when named
};

struct ValueInfo {
    std::string name;
    int elem_type = kUndefined;
    bool has_shape = false;
    std::vector<Dim> dims;
};

struct Graph {
    std::string name;
    std::vector<Node> nodes;
    std::vector<Tensor> initializers;  // sparse initializers too, by their dense dims
    std::vector<ValueInfo> inputs, outputs, value_info;
};

struct ModelProto {
    std::int64_t ir_version = 0;
    std::string producer_name, producer_version;
    std::vector<std::pair<std::string, std::int64_t>> opsets;  // (domain, version); "" and "ai.onnx" are ONNX's
    Graph graph;

    std::int64_t opset(const std::string& domain = "") const;  // 0 when not imported
};

// Parses an ONNX ModelProto. Throws prenet::Error with a readable message for anything that is not one:
// truncated or corrupt protobuf, another kind of file (JSON, a PyTorch zip checkpoint), no graph, a tensor
// whose data does not match its dims or that declares data it does not hold, and anything over the limits.
ModelProto parse_model(std::string_view bytes);

}  // namespace prenet::onnx
