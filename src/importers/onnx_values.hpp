#pragma once
// What each ONNX op computes, as far as the importer needs it: the shapes of its outputs from its inputs' shapes
// (and, for shape computations, from their values), and the values of the small integer tensors that shape
// computations pass around (Shape -> Gather -> Concat -> Reshape). Used by importers/onnx.cpp.
#include <optional>
#include <string>
#include <vector>

#include "graph/model.hpp"
#include "importers/onnx_proto.hpp"

namespace prenet::onnx {

// One tensor of the graph as the importer sees it.
struct Value {
    bool data = false;           // computed from the graph's inputs (each step); else static: weights and constants
    bool requires_grad = false;  // a gradient flows to it (it depends on a trainable initializer)
    bool shape_known = false;
    Shape shape;                 // rank 0 is a scalar; dims may be 0 (empty tensors)
    int type = kFloat;
    std::vector<int> origins;    // static values: the initializers they are computed from
    bool has_values = false;     // small static tensors: their values (integers exactly, as doubles)
    std::vector<double> values;
};

// The inputs of one node (null where an optional input is absent) and its opset.
struct NodeInputs {
    const Node& node;
    std::vector<const Value*> in;
    std::int64_t opset = 0;

    const Value* at(std::size_t i) const { return i < in.size() ? in[i] : nullptr; }
    const Shape* shape(std::size_t i) const;  // null when absent or unknown
    // The integer values of input i, or of attribute `attr` when the node has it (older opsets): nullopt when
    // neither is known.
    std::optional<std::vector<std::int64_t>> ints(std::size_t i, const char* attr = nullptr) const;
};

// Output shapes in output order; nullopt where the importer cannot tell (an unknown op, or one whose shape
// depends on values only known at run time). Throws Error for inputs that contradict each other.
std::vector<std::optional<Shape>> infer_shapes(const NodeInputs& node);
// Fills the values of the outputs of a static node, where the op is a shape computation and its inputs' values
// are known; leaves them unset otherwise.
void fold_values(const NodeInputs& node, std::vector<Value>& outputs);
// The element type of output `index` (Cast's target, Shape's int64, comparisons' bool, else the first input's).
int output_type(const NodeInputs& node, std::size_t index);

// Shape helpers shared with the importer.
Shape broadcast(const Shape& a, const Shape& b, const std::string& where);
std::int64_t normalize_axis(std::int64_t axis, std::size_t rank, const std::string& where);

}  // namespace prenet::onnx
