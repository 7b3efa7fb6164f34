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


// A torus pod is cut into slices (docs/parallel.md, "Topologies"): one slice of the request's shape, or as few
// equal slices of at most the pod as the chips allow, each of the most even shape; the slices are joined by the
// scale-out network, so a slice is the scale-up domain.
void place_on_torus(Cluster& c, const HardwareSpec& hw, const ClusterRequest& request, std::int64_t pod) {
    std::int64_t slice = 0;
    if (request.topology) {
        c.torus_shape = parse_torus_shape(*request.topology);
        if (int(c.torus_shape.size()) > hw.torus_dims)
            throw Error(hw.name + ": its torus has " + std::to_string(hw.torus_dims) + " dimensions, not " +
                            std::to_string(c.torus_shape.size()) + " (--topology " + *request.topology + ")",
                        ErrorCode::invalid_value, "topology");
        slice = 1;
        for (std::int64_t d : c.torus_shape) slice = slice > pod ? slice : slice * d;  // past the pod: refused below
        if (slice > pod)
            throw Error(hw.name + ": a slice of " + torus_shape_text(c.torus_shape) + " is more chips than its pod of " +
                            std::to_string(pod),
                        ErrorCode::invalid_value, "topology");
        if (c.gpus % slice != 0)
            throw Error(std::to_string(c.gpus) + " chips are not whole slices of " + torus_shape_text(c.torus_shape) + " (" +
                            std::to_string(slice) + " chips)",
                        ErrorCode::invalid_value, "gpus");
    } else {
        std::int64_t slices = (c.gpus + pod - 1) / pod;
        if (c.gpus % slices != 0)
            throw Error(std::to_string(c.gpus) + " chips do not split into " + std::to_string(slices) +
                            " equal slices of at most " + std::to_string(pod) + " (its pod); give --topology",
                        ErrorCode::invalid_value, "gpus");
        slice = c.gpus / slices;
        c.torus_shape = even_torus_shape(slice, hw.torus_dims, 4);
    }
    if (slice < c.gpus && slice % c.gpus_per_node != 0)
        throw Error("slices of " + std::to_string(slice) + " chips are not whole hosts of " +
                        std::to_string(c.gpus_per_node),
                    ErrorCode::invalid_value, "topology");
    c.scale_up_domain = slice;
    // Which of the slice's rings close (docs/parallel.md, "Topologies"): with wrap-around links through optical
    // switches (`torus_wraparound`: TPU v4, v5p), every side in whole 4-chip blocks; without, only a side as long
    // as the pod's own (TPU v3, v5e: the full pod's axes).
    std::vector<std::int64_t> pod_shape = even_torus_shape(pod, hw.torus_dims, 4);
    for (std::int64_t side : c.torus_shape) {
        bool whole_axis = std::find(pod_shape.begin(), pod_shape.end(), side) != pod_shape.end();
        c.torus_closed.push_back(side > 2 && (hw.torus_wraparound ? side % 4 == 0 : whole_axis));
    }
}

}  // namespace

std::string torus_shape_text(const std::vector<std::int64_t>& shape) {
    std::string t;
    for (std::int64_t d : shape) t += (t.empty() ? "" : "x") + std::to_string(d);
    return t;
}

std::vector<std::int64_t> parse_torus_shape(const std::string& text, const std::string& spelling) {
    std::vector<std::int64_t> shape;
    std::size_t at = 0;
    auto bad = [&] {
        return Error(spelling + " must be 1 to 3 whole numbers joined by x (4x4x8), got '" + text + "'",
                     ErrorCode::invalid_value, "topology");
    };
    while (at <= text.size()) {
        std::size_t end = text.find('x', at);
        if (end == std::string::npos) end = text.size();
        std::string part = text.substr(at, end - at);
        if (part.empty() || part.size() > 7 || part.find_first_not_of("0123456789") != std::string::npos) throw bad();
        std::int64_t d = std::stoll(part);
        if (d < 1) throw bad();
        shape.push_back(d);
        at = end + 1;
    }
    if (shape.empty() || shape.size() > 3) throw bad();
    return shape;
}

std::vector<std::int64_t> even_torus_shape(std::int64_t devices, int dims, std::int64_t block) {
    if (dims <= 1 || devices <= 1) {
        std::vector<std::int64_t> line(std::max(dims, 1), 1);
        line.back() = std::max<std::int64_t>(devices, 1);
        return line;
    }
    std::vector<std::int64_t> divisors;
    for (std::int64_t k = 1; k * k <= devices; ++k)
        if (devices % k == 0) {
            divisors.push_back(k);
            if (k != devices / k) divisors.push_back(devices / k);
        }
    std::sort(divisors.begin(), divisors.end());
    // Sides in whole blocks only where every side can be one (TPU v4's 4x4x4 cubes: 3072 = 12 x 16 x 16, 8 = 2 x 2 x 2).
    std::int64_t cube = 1;
    for (int k = 0; k < dims; ++k) cube *= block;
    const bool in_blocks = devices % cube == 0;
    std::vector<std::int64_t> best;
    // The most even candidate (smallest largest-to-smallest ratio, then the smallest largest side) among the allowed.
    auto better = [&](const std::vector<std::int64_t>& s) {
        if (in_blocks && std::any_of(s.begin(), s.end(), [&](std::int64_t d) { return d % block != 0; })) return false;
        if (best.empty()) return true;
        return s.back() * best.front() < best.back() * s.front() ||
               (s.back() * best.front() == best.back() * s.front() && s.back() < best.back());
    };
    for (std::int64_t a : divisors) {
        if (dims == 2) {
            std::int64_t b = devices / a;
            if (a <= b && better({a, b})) best = {a, b};
            continue;
        }
        for (std::int64_t b : divisors) {
            if (b < a || (devices / a) % b != 0) continue;
            std::int64_t cc = devices / a / b;
            if (cc >= b && better({a, b, cc})) best = {a, b, cc};
        }
    }
    return best;
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
    c.topology = hw.topology;
    c.links_per_device = hw.links_per_device;
    c.link_gbps = hw.link_gbps_one_way();
    if (hw.topology == HardwareSpec::Topology::full_mesh && hw.links_per_device > 0)
        c.links_per_peer = std::max<std::int64_t>(1, hw.links_per_device / std::max<std::int64_t>(1, sheet_domain - 1));
    if (request.topology && hw.topology != HardwareSpec::Topology::torus)
        throw Error(hw.name + ": --topology shapes a torus slice; its scale-up fabric is " +
                        (hw.topology == HardwareSpec::Topology::full_mesh ? "a full mesh" : "switched"),
                    ErrorCode::invalid_value, "topology");
    if (hw.topology == HardwareSpec::Topology::torus) place_on_torus(c, hw, request, sheet_domain);
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
