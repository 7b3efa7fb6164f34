#include "predict/regressor.hpp"

#include <cstdio>
#include <cstdlib>

#include "core/error.hpp"

namespace prenet {

using nlohmann::json;

namespace {
// Six significant digits are far below the models' error and keep the shipped JSON (and the page) small.
std::vector<double> rounded(const std::vector<double>& v) {
    std::vector<double> out;
    out.reserve(v.size());
    char buf[32];
    for (double x : v) {
        std::snprintf(buf, sizeof buf, "%.6g", x);
        out.push_back(std::strtod(buf, nullptr));
    }
    return out;
}
}  // namespace

double RidgeModel::predict(const std::vector<double>& x) const {
    double y = bias;
    for (size_t i = 0; i < weights.size() && i < x.size(); ++i) y += weights[i] * (x[i] - mean[i]) / scale[i];
    return y;
}

json RidgeModel::to_json() const {
    return {{"type", "ridge"}, {"mean", mean}, {"scale", scale}, {"weights", weights}, {"bias", bias}};
}

void TreeEnsemble::pack() {
    nodes_.clear();
    roots_.clear();
    for (const auto& t : trees) {
        int offset = int(nodes_.size());
        roots_.push_back(offset);
        for (size_t i = 0; i < t.feature.size(); ++i) {
            bool leaf = t.feature[i] < 0;
            nodes_.push_back({leaf ? -1 : t.feature[i], offset + t.left[i], offset + t.right[i],
                              leaf ? learning_rate * t.value[i] : t.threshold[i]});
        }
    }
}

double TreeEnsemble::predict(const std::vector<double>& x) const {
    if (!roots_.empty() && roots_.size() == trees.size()) {
        double y = base;
        for (int node : roots_) {
            while (nodes_[node].feature >= 0)
                node = x[nodes_[node].feature] <= nodes_[node].threshold ? nodes_[node].left : nodes_[node].right;
            y += nodes_[node].threshold;
        }
        return y;
    }
    double y = base;
    for (const auto& t : trees) {
        int node = 0;
        while (t.feature[node] >= 0) node = x[t.feature[node]] <= t.threshold[node] ? t.left[node] : t.right[node];
        y += learning_rate * t.value[node];
    }
    return y;
}

json TreeEnsemble::to_json() const {
    json trees_json = json::array();
    for (const auto& t : trees)
        trees_json.push_back({{"feature", t.feature}, {"threshold", t.threshold}, {"left", t.left},
                              {"right", t.right}, {"value", rounded(t.value)}});
    return {{"type", "gbt"}, {"base", base}, {"learning_rate", learning_rate}, {"trees", trees_json}};
}

std::unique_ptr<Regressor> regressor_from_json(const json& j) {
    try {
        std::string type = j.at("type");
        if (type == "ridge") {
            auto r = std::make_unique<RidgeModel>();
            r->mean = j.at("mean").get<std::vector<double>>();
            r->scale = j.at("scale").get<std::vector<double>>();
            r->weights = j.at("weights").get<std::vector<double>>();
            r->bias = j.at("bias");
            if (r->mean.size() != r->weights.size() || r->scale.size() != r->weights.size())
                throw Error("ridge model: vectors of different lengths");
            return r;
        }
        if (type == "gbt") {
            std::vector<TreeEnsemble::Tree> trees;
            for (const auto& t : j.at("trees"))
                trees.push_back({t.at("feature").get<std::vector<int>>(), t.at("left").get<std::vector<int>>(),
                                 t.at("right").get<std::vector<int>>(), t.at("threshold").get<std::vector<double>>(),
                                 t.at("value").get<std::vector<double>>()});
            return tree_ensemble_from_json(j, std::move(trees));
        }
        throw Error("unknown regressor type '" + type + "'");
    } catch (const json::exception& e) {
        throw Error(std::string("malformed regressor: ") + e.what());
    }
}

std::unique_ptr<Regressor> tree_ensemble_from_json(const json& j, std::vector<TreeEnsemble::Tree> trees) {
    try {
        auto g = std::make_unique<TreeEnsemble>();
        g->base = j.at("base");
        g->learning_rate = j.at("learning_rate");
        for (auto& tree : trees) {
            size_t n = tree.feature.size();
            if (n == 0 || tree.left.size() != n || tree.right.size() != n || tree.threshold.size() != n ||
                tree.value.size() != n)
                throw Error("gbt model: malformed tree");
            for (size_t i = 0; i < n; ++i)
                if (tree.feature[i] >= 0 && (tree.left[i] <= int(i) || tree.right[i] <= int(i) ||
                                             tree.left[i] >= int(n) || tree.right[i] >= int(n)))
                    throw Error("gbt model: tree links out of range");
            g->trees.push_back(std::move(tree));
        }
        g->pack();
        return g;
    } catch (const json::exception& e) {
        throw Error(std::string("malformed regressor: ") + e.what());
    }
}

}  // namespace prenet
