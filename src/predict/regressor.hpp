#pragma once
// Fitted regressors as the predictor stores and evaluates them (fitting lives in src/fit/, native only).
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace prenet {

class Regressor {
public:
    virtual ~Regressor() = default;
    virtual double predict(const std::vector<double>& x) const = 0;
    virtual nlohmann::json to_json() const = 0;
};

// Ridge regression on standardised features.
struct RidgeModel : Regressor {
    std::vector<double> mean, scale, weights;
    double bias = 0;
    double predict(const std::vector<double>& x) const override;
    nlohmann::json to_json() const override;
};

// Gradient-boosted regression trees; each tree is stored as flat arrays (leaf: feature = -1).
struct TreeEnsemble : Regressor {
    struct Tree {
        std::vector<int> feature, left, right;
        std::vector<double> threshold, value;
    };
    double base = 0, learning_rate = 0.1;
    std::vector<Tree> trees;
    double predict(const std::vector<double>& x) const override;
    nlohmann::json to_json() const override;
    // Lays every tree's nodes out side by side in one array (children as absolute indices), which predict()
    // then walks: a prediction visits ~900 nodes, and five separate arrays per tree cost it cache misses.
    void pack();

private:
    struct Node {
        int feature;  // -1 at a leaf
        int left, right;
        double threshold;  // the leaf's value (times the learning rate) at a leaf
    };
    std::vector<Node> nodes_;
    std::vector<int> roots_;
};

std::unique_ptr<Regressor> regressor_from_json(const nlohmann::json& j);  // throws Error on malformed input
// A gbt model whose trees were read elsewhere (the embedded models, predict/embedded_models.hpp): `base` and
// `learning_rate` from its JSON object, every tree checked as regressor_from_json checks them.
std::unique_ptr<Regressor> tree_ensemble_from_json(const nlohmann::json& j, std::vector<TreeEnsemble::Tree> trees);

}  // namespace prenet
