#pragma once
// The fitted kernel models compiled into the binary. models/kernels.json is the source of truth; at build time
// cmake/embed_kernel_models.py turns it into this: the document without the trees of its gradient-boosted models,
// as JSON text (a few KB), and those trees as flat integer arrays. The trees were 1.4 MB of JSON (373 KB gzip in
// the page) whose parsing took 380-730 ms of the page's first request; as arrays they take about half that in the
// gzipped page (170 KB less) and are read without a parser, into the very same doubles (docs/performance.md).
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "predict/regressor.hpp"

namespace prenet {

struct EmbeddedKernelModels {
    // Exponent marking a mantissa as an index into `exact`: a number that mantissa x 10^exponent would not give
    // bit for bit (none in the shipped models, whose numbers have six significant digits).
    static constexpr std::int8_t kExactDouble = -128;

    std::string_view document;  // models/kernels.json without the `trees` of its gbt models
    const char* const* families;  // the gbt models' families, in the document's order
    const std::int32_t* tree_counts;  // per family
    std::size_t family_count;
    // Per tree, all families' trees in order: its node count. Per node, in the tree's order (breadth first: the
    // k-th split's children are nodes 2k+1 and 2k+2): the split's feature (-1 at a leaf), and the split's
    // threshold or the leaf's value as mantissa x 10^exponent (or mantissa / 10^-exponent when negative).
    const std::int16_t* tree_sizes;
    const std::int8_t* feature;
    const std::int32_t* mantissa;
    const std::int8_t* exponent;
    const double* exact;
    std::size_t node_count, exact_count;
};

// Null when the build had no models/kernels.json. Defined in the generated source.
const EmbeddedKernelModels* embedded_kernel_model_data();

// The trees of each gbt family, as regressor_from_json reads them from the JSON (same features, thresholds and
// leaf values, bit for bit; a split's value, which nothing reads, is 0). Throws Error if the arrays are inconsistent.
std::map<std::string, std::vector<TreeEnsemble::Tree>> embedded_trees(const EmbeddedKernelModels& data);

}  // namespace prenet
