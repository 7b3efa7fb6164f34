#include "parallel/cluster.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <vector>

#include "core/error.hpp"

namespace prenet {
namespace {

// What a sheet without interconnect fields (a user's own) is assumed to be: one PCIe card per node, the
// servers joined by 100 Gb Ethernet (docs/parallel.md, "Collectives").
constexpr const char* kDefaultNetwork = "ethernet-100g";
constexpr double kDefaultPcieGbpsOneWay = 32;  // PCIe 4.0 x16, when the sheet gives no link figure at all

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

// Placement rules (docs/parallel.md): nodes are filled first; a node's devices all sit in one scale-up domain.
// - PCIe cards: the domain is the node (the server's PCIe joins all its cards).
// - A fabric inside the node (HGX, MI300X, Gaudi 2): the domain is the node, at most the fabric's size.
// - A fabric across nodes (NVL72, TPU pods): the domain is the sheet's, and a node must divide it.
// Beyond one domain, whole nodes: gpus a multiple of gpus_per_node.
bool is_rack_scale(const HardwareSpec& hw) {
    LinkKind kind = link_kind_from_string(hw.scale_up_link).value_or(LinkKind::pcie);
    std::int64_t node = hw.gpus_per_node > 0 ? hw.gpus_per_node : 1;
    return kind != LinkKind::pcie && hw.scale_up_domain > node;
}

Cluster make_cluster(const HardwareSpec& hw, const ClusterRequest& request) {
    if (request.gpus < 1)
        throw Error("gpus must be at least 1, got " + std::to_string(request.gpus), ErrorCode::invalid_value, "gpus");
    Cluster c;
    c.gpus = request.gpus;
    LinkKind up_kind = link_kind_from_string(hw.scale_up_link).value_or(LinkKind::pcie);
    std::int64_t sheet_node = hw.gpus_per_node > 0 ? hw.gpus_per_node : 1;
    std::int64_t sheet_domain = hw.scale_up_domain > 0 ? hw.scale_up_domain : sheet_node;
    c.gpus_per_node = request.gpus_per_node.value_or(sheet_node);
    if (c.gpus_per_node < 1)
        throw Error("gpus_per_node must be at least 1, got " + std::to_string(c.gpus_per_node),
                    ErrorCode::invalid_value, "gpus_per_node");
    bool rack_scale = is_rack_scale(hw);
    if (up_kind == LinkKind::pcie) {
        c.scale_up_domain = c.gpus_per_node;
    } else if (!rack_scale) {
        if (c.gpus_per_node > sheet_domain)
            throw Error(hw.name + ": a node holds at most " + std::to_string(sheet_domain) + " devices (its " +
                            hw.scale_up_link + " domain), not " + std::to_string(c.gpus_per_node),
                        ErrorCode::invalid_value, "gpus_per_node");
        c.scale_up_domain = c.gpus_per_node;
    } else {
        if (sheet_domain % c.gpus_per_node != 0)
            throw Error(hw.name + ": nodes of " + std::to_string(c.gpus_per_node) + " do not tile its " +
                            std::to_string(sheet_domain) + "-device " + hw.scale_up_link + " domain",
                        ErrorCode::invalid_value, "gpus_per_node");
        c.scale_up_domain = sheet_domain;
    }
    // Whole nodes once the devices span more than one domain (inside an NVL72 rack, part of a tray is fine).
    if (c.gpus > c.scale_up_domain && c.gpus % c.gpus_per_node != 0)
        throw Error(std::to_string(c.gpus) + " devices do not fill whole nodes of " + std::to_string(c.gpus_per_node) +
                        " (use a multiple of " + std::to_string(c.gpus_per_node) + " or set gpus_per_node)",
                    ErrorCode::invalid_value, "gpus");
    c.scale_up.kind = up_kind;
    c.scale_up.gbps = hw.scale_up_gbps_one_way();
    c.scale_up.name = hw.scale_up_link;
    if (c.scale_up.gbps <= 0) {
        if (up_kind != LinkKind::pcie && std::min(c.gpus, c.scale_up_domain) > 1)
            throw Error(hw.name + ": the sheet publishes no scale-up bandwidth (interconnect.intra_node_gbps); "
                                  "give one in a custom sheet",
                        ErrorCode::invalid_hardware, "hardware");
        c.scale_up.gbps = kDefaultPcieGbpsOneWay;
    }
    if (request.network) {
        c.scale_out = parse_network(*request.network);
    } else if (!hw.scale_out_network.empty()) {
        // The sheet's network belongs to its reference node; a node of another size keeps each device's share.
        c.scale_out = parse_network(hw.scale_out_network);
        if (c.gpus_per_node != sheet_node) {
            c.scale_out.gbps *= double(c.gpus_per_node) / double(sheet_node);
            c.scale_out.name += " per " + std::to_string(sheet_node) + " devices";
        }
    } else {
        c.scale_out = parse_network(kDefaultNetwork);  // per node, whatever its size: one NIC per server
    }
    return c;
}

}  // namespace prenet
