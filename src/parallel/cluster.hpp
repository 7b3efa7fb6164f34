#pragma once
// The machines a parallel run spans (docs/parallel.md): `gpus` accelerators in nodes of `gpus_per_node`, joined
// inside a scale-up domain by the accelerator's own fabric (NVLink + NVSwitch, Infinity Fabric, TPU ICI, or just
// PCIe for PCIe cards) and across domains by the scale-out network of each node (NICs x speed). Datasheet facts
// come from the accelerator's sheet (hardware/*.json `interconnect`); the user may override the node size and the
// network (`--gpus-per-node`, `--network 8x400g-ib`).
#include <cstdint>
#include <optional>
#include <string>

#include "hardware/spec.hpp"

namespace prenet {

// The kind of link, which the fitted collective model keys its efficiency and latency on.
enum class LinkKind { nvlink, infinity_fabric, ici, pcie, infiniband, roce, ethernet };
const char* to_string(LinkKind kind);
std::optional<LinkKind> link_kind_from_string(const std::string& name);

struct Link {
    LinkKind kind = LinkKind::pcie;
    double gbps = 0;  // GB/s (1e9 bytes/s) one direction: per device inside the domain, per node for scale-out
    std::string name;  // as the sheet or the user names it, for the reply
};

struct Cluster {
    std::int64_t gpus = 1;
    std::int64_t gpus_per_node = 1;
    // Devices one scale-up fabric joins: a node for HGX boards (8), 72 for GB200 NVL72; >= gpus_per_node.
    std::int64_t scale_up_domain = 1;
    Link scale_up;   // per device
    Link scale_out;  // per node (all its NICs together)
    std::int64_t nodes() const { return (gpus + gpus_per_node - 1) / gpus_per_node; }
};

// "8x400g-ib" (8 NICs of 400 Gb/s InfiniBand), "roce-3200g" (3.2 Tb/s RoCE per node), "ethernet-100g".
// Gb/s in the spec (as NICs are sold), GB/s in the Link. Throws Error (field "network") for anything else.
Link parse_network(const std::string& spec);

struct ClusterRequest {
    std::int64_t gpus = 1;
    std::optional<std::int64_t> gpus_per_node;  // default: the sheet's usual node
    std::optional<std::string> network;         // default: the sheet's reference node network
};

// Whether the sheet's scale-up fabric joins more devices than one node holds (GB200/GB300 NVL72 racks).
bool is_rack_scale(const HardwareSpec& hw);

// The cluster for `hw`; throws Error (fields "gpus", "gpus_per_node", "network") for impossible requests.
Cluster make_cluster(const HardwareSpec& hw, const ClusterRequest& request);

}  // namespace prenet
