#pragma once
// A log-log scatter of predicted against measured times, one colour per device, with the y = x line.
#include <string>
#include <vector>

namespace prenet {

struct ScatterSeries {
    std::string label;
    std::vector<double> measured, predicted;
};

std::string scatter_svg(const std::string& title, const std::vector<ScatterSeries>& series);

}  // namespace prenet
