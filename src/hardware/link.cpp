#include "hardware/link.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <vector>

#include "core/error.hpp"
#include "hardware/spec.hpp"

namespace prenet {
namespace {

std::string lower(std::string s) {
    for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

[[noreturn]] void bad_network(const std::string& spec, const std::string& why) {
    throw Error("network '" + spec + "' " + why +
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
        case LinkKind::pcie: return "pcie";
        case LinkKind::infiniband: return "infiniband";
        case LinkKind::roce: return "roce";
        case LinkKind::ethernet: return "ethernet";
    }
    return "pcie";
}

std::optional<LinkKind> link_kind_from_string(const std::string& name) {
    for (LinkKind k : {LinkKind::nvlink, LinkKind::infinity_fabric, LinkKind::ici, LinkKind::pcie,
                       LinkKind::infiniband, LinkKind::roce, LinkKind::ethernet})
        if (name == to_string(k)) return k;
    return std::nullopt;
}

// Tokens split at '-' (or '_'); one names the kind, one the rate with an optional "<count>x" in front, in
// either order: "8x400g-ib", "ib-8x400g", "roce-3200g", "ethernet-100g", "4x200gb-roce", "ib-1.6t".
Link parse_network(const std::string& spec) {
    std::string s = lower(spec);
    std::vector<std::string> tokens;
    std::string cur;
    for (char c : s) {
        if (c == '-' || c == '_' || c == ' ') {
            if (!cur.empty()) tokens.push_back(cur), cur.clear();
        } else {
            cur += c;
        }
    }
    if (!cur.empty()) tokens.push_back(cur);
    if (tokens.size() != 2) bad_network(spec, "is not of the form <NICs>x<Gb/s>g-<kind>");
    std::optional<LinkKind> kind;
    std::string rate;
    for (const auto& t : tokens) {
        if (auto k = network_kind(t)) {
            if (kind) bad_network(spec, "names two kinds");
            kind = k;
        } else {
            rate = t;
        }
    }
    if (!kind) bad_network(spec, "names no kind (ib, roce or ethernet)");
    if (rate.empty()) bad_network(spec, "names no rate");
    double nics = 1;
    if (size_t x = rate.find('x'); x != std::string::npos) {
        std::string count = rate.substr(0, x);
        if (count.empty() || count.find_first_not_of("0123456789") != std::string::npos || count.size() > 6)
            bad_network(spec, "has a NIC count that is not a whole number");
        nics = std::strtod(count.c_str(), nullptr);
        rate = rate.substr(x + 1);
    }
    double gbps = rate_gbps(rate);
    if (std::isnan(gbps)) bad_network(spec, "has no rate in Gb/s (like 400g) or Tb/s (like 3.2t)");
    if (!(nics >= 1) || !(gbps > 0)) bad_network(spec, "must have at least one NIC and a positive rate");
    if (!(nics * gbps / 8 <= kPlausibleGBps))
        bad_network(spec, "is faster than any network: more than " + std::to_string(int(kPlausibleGBps)) +
                              " GB/s per node (the plausible maximum)");
    Link link;
    link.kind = *kind;
    link.gbps = nics * gbps / 8;  // Gb/s as NICs are sold -> GB/s, 8 bits a byte
    link.name = spec;
    return link;
}

}  // namespace prenet
