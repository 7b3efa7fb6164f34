#pragma once
// The links between accelerators, as a spec sheet's `interconnect` (hardware/spec.hpp) and the user's
// `--network` name them; parallel/cluster.hpp joins the devices of a run with them.
#include <optional>
#include <string>

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

// "8x400g-ib" (8 NICs of 400 Gb/s InfiniBand), "roce-3200g" (3.2 Tb/s RoCE per node), "ethernet-100g".
// Gb/s in the spec (as NICs are sold), GB/s in the Link. Throws Error (field "network") for anything else.
Link parse_network(const std::string& spec);

}  // namespace prenet
