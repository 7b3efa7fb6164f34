#include "fit/svg_plot.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace prenet {

std::string scatter_svg(const std::string& title, const std::vector<ScatterSeries>& series) {
    const char* colours[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf"};
    double lo = 1e300, hi = -1e300;
    for (const auto& s : series)
        for (size_t i = 0; i < s.measured.size(); ++i) {
            for (double v : {s.measured[i], s.predicted[i]})
                if (v > 0) lo = std::min(lo, std::log10(v)), hi = std::max(hi, std::log10(v));
        }
    if (lo > hi) lo = -3, hi = 1;
    lo = std::floor(lo), hi = std::ceil(hi);
    const double size = 420, margin = 50;
    auto px = [&](double v) { return margin + (std::log10(std::max(v, 1e-30)) - lo) / (hi - lo) * size; };
    auto py = [&](double v) { return margin + size - (std::log10(std::max(v, 1e-30)) - lo) / (hi - lo) * size; };
    std::string out;
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "<svg xmlns='http://www.w3.org/2000/svg' width='%d' height='%d' font-family='sans-serif' "
                  "font-size='11'>\n<rect width='100%%' height='100%%' fill='white'/>\n",
                  int(size + 2 * margin + 130), int(size + 2 * margin));
    out += buf;
    out += "<text x='" + std::to_string(int(margin)) + "' y='20' font-size='13'>" + title + "</text>\n";
    for (double d = lo; d <= hi; d += 1) {
        double x = margin + (d - lo) / (hi - lo) * size, y = margin + size - (d - lo) / (hi - lo) * size;
        std::snprintf(buf, sizeof buf,
                      "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' stroke='#ddd'/><text x='%.1f' y='%.1f' "
                      "text-anchor='middle'>1e%d</text><line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' stroke='#ddd'/>"
                      "<text x='%.1f' y='%.1f' text-anchor='end'>1e%d</text>\n",
                      x, margin, x, margin + size, x, margin + size + 14, int(d), margin, y, margin + size, y,
                      margin - 4, y + 4, int(d));
        out += buf;
    }
    std::snprintf(buf, sizeof buf, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' stroke='black'/>\n", margin,
                  margin + size, margin + size, margin);
    out += buf;
    for (size_t s = 0; s < series.size(); ++s) {
        const char* c = colours[s % 7];
        for (size_t i = 0; i < series[s].measured.size(); ++i) {
            std::snprintf(buf, sizeof buf, "<circle cx='%.1f' cy='%.1f' r='1.3' fill='%s' fill-opacity='0.4'/>\n",
                          px(series[s].measured[i]), py(series[s].predicted[i]), c);
            out += buf;
        }
        std::snprintf(buf, sizeof buf, "<circle cx='%.1f' cy='%.1f' r='4' fill='%s'/><text x='%.1f' y='%.1f'>%s</text>\n",
                      margin + size + 20, margin + 20 + 16.0 * s, c, margin + size + 28, margin + 24 + 16.0 * s,
                      series[s].label.c_str());
        out += buf;
    }
    std::snprintf(buf, sizeof buf,
                  "<text x='%.1f' y='%.1f' text-anchor='middle'>measured ms</text><text x='12' y='%.1f' "
                  "transform='rotate(-90 12 %.1f)' text-anchor='middle'>predicted ms (device left out)</text>\n</svg>\n",
                  margin + size / 2, margin + size + 32, margin + size / 2, margin + size / 2);
    out += buf;
    return out;
}

}  // namespace prenet
