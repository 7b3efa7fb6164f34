#include "predict/embedded_models.hpp"

#include "core/error.hpp"

namespace prenet {

namespace {
// Powers of ten a double holds exactly (5^22 < 2^53): m x 10^e is then one correctly rounded operation, the
// double strtod gives for the decimal (cmake/embed_kernel_models.py checks each number against it).
constexpr double kExactPowersOfTen[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                        1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

double number(const EmbeddedKernelModels& d, std::size_t i) {
    int e = d.exponent[i];
    std::int32_t m = d.mantissa[i];
    if (e == EmbeddedKernelModels::kExactDouble) {
        if (m < 0 || std::size_t(m) >= d.exact_count) throw Error("embedded kernel models: bad exact number index");
        return d.exact[m];
    }
    if (e < -22 || e > 22) throw Error("embedded kernel models: exponent out of range");
    return e < 0 ? double(m) / kExactPowersOfTen[-e] : double(m) * kExactPowersOfTen[e];
}
}  // namespace

std::map<std::string, std::vector<TreeEnsemble::Tree>> embedded_trees(const EmbeddedKernelModels& d) {
    std::map<std::string, std::vector<TreeEnsemble::Tree>> out;
    std::size_t tree_index = 0, node = 0;
    for (std::size_t f = 0; f < d.family_count; ++f) {
        std::vector<TreeEnsemble::Tree>& trees = out[d.families[f]];
        for (std::int32_t t = 0; t < d.tree_counts[f]; ++t, ++tree_index) {
            std::size_t n = std::size_t(d.tree_sizes[tree_index]);
            if (n == 0 || node + n > d.node_count) throw Error("embedded kernel models: tree out of range");
            TreeEnsemble::Tree tree;
            tree.feature.assign(d.feature + node, d.feature + node + n);
            tree.left.assign(n, 0), tree.right.assign(n, 0);
            tree.threshold.assign(n, 0.0), tree.value.assign(n, 0.0);
            int splits = 0;
            for (std::size_t i = 0; i < n; ++i, ++node) {
                if (tree.feature[i] >= 0) {
                    tree.left[i] = 2 * splits + 1, tree.right[i] = 2 * splits + 2;
                    if (std::size_t(tree.right[i]) >= n) throw Error("embedded kernel models: tree links out of range");
                    ++splits;
                    tree.threshold[i] = number(d, node);
                } else {
                    tree.value[i] = number(d, node);
                }
            }
            trees.push_back(std::move(tree));
        }
    }
    if (node != d.node_count) throw Error("embedded kernel models: nodes left over");
    return out;
}

}  // namespace prenet
