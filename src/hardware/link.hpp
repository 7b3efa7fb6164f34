#pragma once
// The links between accelerators, as a spec sheet's `interconnect` (hardware/spec.hpp) and the user's
// `--network` name them; parallel/cluster.hpp joins the devices of a run with them.
#include <optional>
#include <string>

namespace prenet {

// The kind of link, which the fitted collective model keys its efficiency and latency on.
enum class LinkKind { nvlink, infinity_fabric, ici, neuronlink, pcie, infiniband, roce, ethernet };
const char* to_string(LinkKind kind);
std::optional<LinkKind> link_kind_from_string(const std::string& name);

struct Link {
    LinkKind kind = LinkKind::pcie;
    double gbps = 0;  // GB/s (1e9 bytes/s) one direction: per device inside the domain, per node for scale-out
    std::string name;  // as the sheet or the user names it, for the reply
};

// "8x400g-ib" (8 NICs of 400 Gb/s InfiniBand), "roce-3200g" (3.2 Tb/s RoCE per node), "ethernet-100g".
// Gb/s in the spec (as NICs are sold), GB/s in the Link: 1 to 999,999 NICs, the node's total within the
// plausible range of any bandwidth (kMinPlausibleGBps .. kPlausibleGBps, hardware/spec.hpp). Throws Error
// (field "network") for anything else, its message naming the network as `spelling` (the option as the user
// gave it: --network, 'network', cluster.network).
Link parse_network(const std::string& spec, const std::string& spelling = "network");

// Whether a link's GB/s is within the plausible range above (a node's share of a sheet's network is checked too).
bool plausible_gbps(double gbps);
// That range in words, for messages.
std::string plausible_range_text();

}  // namespace prenet
