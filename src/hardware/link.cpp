#include "hardware/link.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "hardware/spec.hpp"

namespace prenet {
namespace {

// A number as JSON writes it (1e-31, 0.001, 100000.0): short, exact enough to see what was read.
std::string json_number(double x) { return nlohmann::json(x).dump(); }

std::string lower(std::string s) {
    for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

// `spelling` is the network as the user gave it (--network, 'network', cluster.network; a sheet's errors add
// the sheet's field), so the message names what to fix.
[[noreturn]] void bad_network(const std::string& spelling, const std::string& spec, const std::string& why) {
    throw Error(spelling + " '" + spec + "' " + why +
                    " (expected NICs x Gb/s and a kind, e.g. 8x400g-ib, 4x200g-roce, roce-3200g, ethernet-100g)",
                ErrorCode::invalid_value, "network");
}

// "400g", "400gb", "400gbps", "3.2t", "3.2tb" -> Gb/s; NaN if the token is not a rate.
double rate_gbps(const std::string& token) {
    size_t i = 0;
    while (i < token.size() && (std::isdigit(static_cast<unsigned char>(token[i])) || token[i] == '.')) ++i;
    if (i == 0) return NAN;
    std::string number = token.substr(0, i), unit = token.substr(i);
    if (std::count(number.begin(), number.end(), '.') > 1) return NAN;
    double x = std::strtod(number.c_str(), nullptr);
    if (unit == "g" || unit == "gb" || unit == "gbps" || unit == "gbit") return x;
    if (unit == "t" || unit == "tb" || unit == "tbps" || unit == "tbit") return x * 1000;
    return NAN;
}

std::optional<LinkKind> network_kind(const std::string& token) {
    if (token == "ib" || token == "infiniband") return LinkKind::infiniband;
    if (token == "roce") return LinkKind::roce;
    if (token == "ethernet" || token == "eth" || token == "ether") return LinkKind::ethernet;
    return std::nullopt;
}

}  // namespace

const char* to_string(LinkKind kind) {
    switch (kind) {
        case LinkKind::nvlink: return "nvlink";
        case LinkKind::infinity_fabric: return "infinity_fabric";
        case LinkKind::ici: return "ici";
        case LinkKind::neuronlink: return "neuronlink";
        case LinkKind::pcie: return "pcie";
        case LinkKind::infiniband: return "infiniband";
        case LinkKind::roce: return "roce";
        case LinkKind::ethernet: return "ethernet";
    }
    return "pcie";
}

std::optional<LinkKind> link_kind_from_string(const std::string& name) {
    for (LinkKind k : {LinkKind::nvlink, LinkKind::infinity_fabric, LinkKind::ici, LinkKind::neuronlink, LinkKind::pcie,
                       LinkKind::infiniband, LinkKind::roce, LinkKind::ethernet})
        if (name == to_string(k)) return k;
    return std::nullopt;
}

bool plausible_gbps(double gbps) { return gbps >= kMinPlausibleGBps && gbps <= kPlausibleGBps; }

std::string plausible_range_text() {
    return "the plausible range is " + json_number(kMinPlausibleGBps) + " to " + json_number(kPlausibleGBps) +
           " GB/s per node, as a spec sheet's bandwidth (docs/limits.md)";
}

// Tokens split at '-' (or '_'); one names the kind, one the rate with an optional "<count>x" in front, in
// either order: "8x400g-ib", "ib-8x400g", "roce-3200g", "ethernet-100g", "4x200gb-roce", "ib-1.6t". No token
// may be empty: "-8x400g-ib" is a sign, not a separator, and NIC counts and rates are positive.
Link parse_network(const std::string& spec, const std::string& spelling) {
    std::string s = lower(spec);
    if (s.empty()) bad_network(spelling, spec, "is empty");
    std::vector<std::string> tokens(1);
    for (char c : s) {
        if (c == '-' || c == '_' || c == ' ') tokens.emplace_back();
        else tokens.back() += c;
    }
    for (const auto& t : tokens)
        if (t.empty())
            bad_network(spelling, spec, "has an empty part (a leading, trailing or doubled '-'): NIC counts and "
                                        "rates are positive, with no sign");
    if (tokens.size() != 2) bad_network(spelling, spec, "is not of the form <NICs>x<Gb/s>g-<kind>");
    std::optional<LinkKind> kind;
    std::string rate;
    for (const auto& t : tokens) {
        if (auto k = network_kind(t)) {
            if (kind) bad_network(spelling, spec, "names two kinds");
            kind = k;
        } else {
            rate = t;
        }
    }
    if (!kind) bad_network(spelling, spec, "names no kind (ib, roce or ethernet)");
    if (rate.empty()) bad_network(spelling, spec, "names no rate");
    double nics = 1;
    if (size_t x = rate.find('x'); x != std::string::npos) {
        std::string count = rate.substr(0, x);
        if (count.empty() || count.find_first_not_of("0123456789") != std::string::npos || count.size() > 6)
            bad_network(spelling, spec, "has a NIC count that is not a whole number from 1 to 999999");
        nics = std::strtod(count.c_str(), nullptr);
        rate = rate.substr(x + 1);
    }
    double gbps = rate_gbps(rate);
    if (std::isnan(gbps)) bad_network(spelling, spec, "has no rate in Gb/s (like 400g) or Tb/s (like 3.2t)");
    if (!(nics >= 1) || !(gbps > 0)) bad_network(spelling, spec, "must have at least one NIC and a positive rate");
    double node_gbps = nics * gbps / 8;  // Gb/s as NICs are sold -> GB/s, 8 bits a byte
    if (!(node_gbps <= kPlausibleGBps))
        bad_network(spelling, spec, "is faster than any network: " + json_number(node_gbps) + " GB/s per node; " +
                                        plausible_range_text());
    if (!plausible_gbps(node_gbps))
        bad_network(spelling, spec, "is slower than any network: " + json_number(node_gbps) + " GB/s per node; " +
                                        plausible_range_text());
    Link link;
    link.kind = *kind;
    link.gbps = node_gbps;
    link.name = spec;
    return link;
}

}  // namespace prenet
