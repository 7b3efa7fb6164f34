// Histogram gradient boosting with squared loss: features are binned once at quantiles, each tree grows
// level by level choosing, per node, the split with the largest reduction in squared error.
#include <algorithm>
#include <cstdint>

#include "core/error.hpp"
#include "fit/learners.hpp"

namespace prenet {
namespace {

std::vector<std::vector<double>> quantile_thresholds(const Matrix& x, int bins) {
    const size_t n = x.size(), f = x[0].size();
    std::vector<std::vector<double>> thresholds(f);
    std::vector<double> column(n);
    for (size_t j = 0; j < f; ++j) {
        for (size_t i = 0; i < n; ++i) column[i] = x[i][j];
        std::sort(column.begin(), column.end());
        for (int b = 1; b < bins; ++b) {
            size_t i = std::min(n - 1, n * size_t(b) / size_t(bins));
            // Split halfway to the next distinct value: a feature computed a few ulps differently (wasm's libm
            // against glibc's) then never lands on the other side of a threshold that equals a training value.
            auto next = std::upper_bound(column.begin() + i, column.end(), column[i]);
            if (next == column.end()) continue;
            double t = 0.5 * (column[i] + *next);
            if (thresholds[j].empty() || t > thresholds[j].back()) thresholds[j].push_back(t);
        }
    }
    return thresholds;
}

struct NodeStats {
    double sum = 0;
    double count = 0;
};

}  // namespace

TreeEnsemble fit_gbt(const Matrix& x, const std::vector<double>& y, const GbtParams& p) {
    if (x.empty() || x.size() != y.size()) throw Error("gbt: need as many targets as rows, and at least one");
    const size_t n = x.size(), f = x[0].size();
    auto thresholds = quantile_thresholds(x, p.bins);
    std::vector<std::uint8_t> bin(n * f);
    for (size_t i = 0; i < n; ++i)
        for (size_t j = 0; j < f; ++j)
            bin[i * f + j] = std::uint8_t(std::lower_bound(thresholds[j].begin(), thresholds[j].end(), x[i][j]) -
                                          thresholds[j].begin());
    TreeEnsemble model;
    model.learning_rate = p.learning_rate;
    for (double v : y) model.base += v / double(n);
    std::vector<double> prediction(n, model.base), residual(n);
    std::vector<int> node_of(n);
    const size_t nb = size_t(p.bins) + 1;

    for (int t = 0; t < p.trees; ++t) {
        for (size_t i = 0; i < n; ++i) residual[i] = y[i] - prediction[i];
        std::fill(node_of.begin(), node_of.end(), 0);
        TreeEnsemble::Tree tree;
        tree.feature = {-1}, tree.left = {0}, tree.right = {0}, tree.threshold = {0}, tree.value = {0};
        std::vector<int> frontier = {0};
        for (int depth = 0; depth < p.depth && !frontier.empty(); ++depth) {
            // Histograms of residual sums and counts per frontier node, feature and bin.
            std::vector<int> slot(tree.feature.size(), -1);
            for (size_t s = 0; s < frontier.size(); ++s) slot[frontier[s]] = int(s);
            std::vector<NodeStats> hist(frontier.size() * f * nb);
            std::vector<NodeStats> total(frontier.size());
            for (size_t i = 0; i < n; ++i) {
                int s = node_of[i] < int(slot.size()) ? slot[node_of[i]] : -1;
                if (s < 0) continue;
                total[s].sum += residual[i], total[s].count += 1;
                NodeStats* h = &hist[size_t(s) * f * nb];
                for (size_t j = 0; j < f; ++j) {
                    NodeStats& c = h[j * nb + bin[i * f + j]];
                    c.sum += residual[i], c.count += 1;
                }
            }
            std::vector<int> next;
            for (size_t s = 0; s < frontier.size(); ++s) {
                const NodeStats& tot = total[s];
                double parent = tot.sum * tot.sum / (tot.count + p.l2), best_gain = 1e-12;
                int best_f = -1, best_b = -1;
                for (size_t j = 0; j < f; ++j) {
                    NodeStats left;
                    const NodeStats* h = &hist[(s * f + j) * nb];
                    for (size_t b = 0; b + 1 < nb && b < thresholds[j].size(); ++b) {
                        left.sum += h[b].sum, left.count += h[b].count;
                        double rc = tot.count - left.count;
                        if (left.count < p.min_leaf || rc < p.min_leaf) continue;
                        double rs = tot.sum - left.sum;
                        double gain = left.sum * left.sum / (left.count + p.l2) + rs * rs / (rc + p.l2) - parent;
                        if (gain > best_gain) best_gain = gain, best_f = int(j), best_b = int(b);
                    }
                }
                int node = frontier[s];
                tree.value[node] = tot.sum / (tot.count + p.l2);
                if (best_f < 0) continue;
                int l = int(tree.feature.size()), r = l + 1;
                tree.feature[node] = best_f;
                tree.threshold[node] = thresholds[best_f][best_b];
                tree.left[node] = l, tree.right[node] = r;
                for (int k = 0; k < 2; ++k) {
                    tree.feature.push_back(-1), tree.left.push_back(0), tree.right.push_back(0);
                    tree.threshold.push_back(0), tree.value.push_back(0);
                }
                next.push_back(l), next.push_back(r);
            }
            // Route rows to the children just made.
            for (size_t i = 0; i < n; ++i) {
                int node = node_of[i];
                if (tree.feature[node] < 0) continue;
                node_of[i] = bin[i * f + tree.feature[node]] <= std::uint8_t(std::lower_bound(
                                 thresholds[tree.feature[node]].begin(), thresholds[tree.feature[node]].end(),
                                 tree.threshold[node]) - thresholds[tree.feature[node]].begin())
                                 ? tree.left[node]
                                 : tree.right[node];
            }
            frontier = next;
        }
        // Leaves of the last level get their values from the final routing.
        std::vector<NodeStats> leaf(tree.feature.size());
        for (size_t i = 0; i < n; ++i) leaf[node_of[i]].sum += residual[i], leaf[node_of[i]].count += 1;
        for (size_t k = 0; k < tree.feature.size(); ++k)
            if (tree.feature[k] < 0) tree.value[k] = leaf[k].sum / (leaf[k].count + p.l2);
        for (size_t i = 0; i < n; ++i) prediction[i] += p.learning_rate * tree.value[node_of[i]];
        model.trees.push_back(std::move(tree));
    }
    return model;
}

}  // namespace prenet
