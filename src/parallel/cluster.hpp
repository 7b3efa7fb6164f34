#pragma once
// The machines a parallel run spans (docs/parallel.md): `gpus` accelerators in nodes of `gpus_per_node`, joined
// inside a scale-up domain by the accelerator's own fabric (NVLink + NVSwitch, Infinity Fabric, TPU ICI, or just
// PCIe for PCIe cards) and across domains by the scale-out network of each node (NICs x speed). Datasheet facts
// come from the accelerator's sheet (hardware/*.json `interconnect`); the user may override the node size and the
// network (`--gpus-per-node`, `--network 8x400g-ib`).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

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
    // How the scale-up domain is wired (HardwareSpec::Topology; docs/parallel.md, "Topologies"). A full mesh and
    // a torus give each device `links_per_device` links of `link_gbps` each way; a torus domain is a slice of
    // the pod, `torus_shape` devices along each dimension (x first: ranks fill x, then y, then z), its rings
    // closed along the dimensions `torus_closed` marks. Slices are joined by the scale-out network (multislice).
    HardwareSpec::Topology topology = HardwareSpec::Topology::switched;
    std::int64_t links_per_device = 0;
    double link_gbps = 0;
    // Full mesh: the links between one pair of devices, the sheet's links spread evenly over the peers of its
    // whole mesh (scale_up_domain - 1 of the sheet, whatever the node requested): MI300X 7 / 7 = 1, Gaudi 2's
    // 21 RoCE ports / 7 = 3. 0 elsewhere.
    std::int64_t links_per_peer = 0;
    std::vector<std::int64_t> torus_shape;
    std::vector<bool> torus_closed;
    std::int64_t nodes() const { return (gpus + gpus_per_node - 1) / gpus_per_node; }
};

struct ClusterRequest {
    std::int64_t gpus = 1;
    std::optional<std::int64_t> gpus_per_node;  // default: the sheet's usual node
    std::optional<std::string> network;         // default: the sheet's reference node network
    std::optional<std::string> topology;        // a torus slice's shape, "4x4x8"; default: the most even one
};

// "4x4x8" -> {4, 4, 8}: 1 to 3 whole numbers >= 1 of at most 7 digits each; throws Error (field "topology", named as
// `spelling`) otherwise.
std::vector<std::int64_t> parse_torus_shape(const std::string& text, const std::string& spelling = "topology");

// {4, 4, 8} -> "4x4x8", as Cloud TPU names slices.
std::string torus_shape_text(const std::vector<std::int64_t>& shape);

// The most even shape of `devices` chips in `dims` dimensions (sides as equal as whole numbers allow, multiples
// of `block` where they can be), sorted small to large: 3072 chips in 3 -> 12 x 16 x 16.
std::vector<std::int64_t> even_torus_shape(std::int64_t devices, int dims, std::int64_t block);

// Whether the sheet's scale-up fabric joins more devices than one node holds (GB200/GB300 NVL72 racks).
bool is_rack_scale(const HardwareSpec& hw);

// The cluster for `hw`; throws Error (fields "gpus", "gpus_per_node", "network") for impossible requests.
Cluster make_cluster(const HardwareSpec& hw, const ClusterRequest& request);

}  // namespace prenet
