#pragma once
// The machines a parallel run spans (docs/parallel.md): `gpus` accelerators in nodes of `gpus_per_node`, joined
// inside a scale-up domain by the accelerator's own fabric (NVLink + NVSwitch, Infinity Fabric, TPU ICI, or just
// PCIe for PCIe cards) and across domains by the scale-out network of each node (NICs x speed). Datasheet facts
// come from the accelerator's sheet (hardware/*.json `interconnect`); the user may override the node size and the
// network (`--gpus-per-node`, `--network 8x400g-ib`).
#include <cstdint>
#include <optional>
#include <string>

#include "hardware/link.hpp"
#include "hardware/spec.hpp"

namespace prenet {

struct Cluster {
    std::int64_t gpus = 1;
    std::int64_t gpus_per_node = 1;
    // Devices one scale-up fabric joins: a node for HGX boards (8), 72 for GB200 NVL72; >= gpus_per_node.
    std::int64_t scale_up_domain = 1;
    Link scale_up;   // per device
    Link scale_out;  // per node (all its NICs together)
    std::int64_t nodes() const { return (gpus + gpus_per_node - 1) / gpus_per_node; }
};

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
