#include "parallel/cluster.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "core/error.hpp"

namespace prenet {
using nlohmann::json;
namespace {

// What a sheet without interconnect fields (a user's own) is assumed to be: one PCIe card per node, the
// servers joined by 100 Gb Ethernet (docs/parallel.md, "Collectives").
constexpr const char* kDefaultNetwork = "ethernet-100g";
constexpr double kDefaultPcieGbpsOneWay = 32;  // PCIe 4.0 x16, when the sheet gives no link figure at all

}  // namespace

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
            // A plausible network shared by a sheet's huge node (up to 10^9 devices) can leave a smaller node less
            // than any network carries (or a 4,096-device node more): the same range as a network given.
            if (!plausible_gbps(c.scale_out.gbps))
                throw Error(hw.name + ": its reference network (" + hw.scale_out_network + " for " +
                                std::to_string(sheet_node) + " devices) gives a node of " +
                                std::to_string(c.gpus_per_node) + " devices " + json(c.scale_out.gbps).dump() +
                                " GB/s; " + plausible_range_text() + ". Give the network of such a node",
                            ErrorCode::invalid_value, "network");
        }
    } else {
        c.scale_out = parse_network(kDefaultNetwork);  // per node, whatever its size: one NIC per server
    }
    return c;
}

}  // namespace prenet
