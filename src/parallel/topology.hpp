#pragma once
// One collective phase inside a scale-up domain, as the domain is wired (docs/parallel.md, "Topologies"):
// - switched (NVSwitch, a PCIe switch): a ring over the members, each at its whole scale-up bandwidth;
// - full mesh (AMD Infinity Fabric, Gaudi's RoCE ports): the members' direct links to each other;
// - torus (TPU ICI, Trainium NeuronLink): a ring per dimension of the members' sub-torus.
// collectives.cpp composes these phases with the scale-out phases across domains.
#include <cstdint>
#include <vector>

#include "parallel/cluster.hpp"
#include "parallel/collectives.hpp"

namespace prenet {

// How many distinct places a group's members in the first domain take along each torus dimension (the group's
// sub-torus: a tensor-parallel group of 8 on a 4x4x4 slice is 4 x 2 x 1). Members in rank order as
// CollectiveGroup lays them out; ranks fill x first, then y, then z.
std::vector<std::int64_t> torus_extents(const CollectiveGroup& group, const Cluster& cluster);

// The ring terms of `op` over a sub-torus of `extents` (docs/parallel.md, "Collectives on a torus"): one ring per
// dimension, dimension after dimension (reduce-scatter shrinks the buffer by each side in turn, all-gather grows
// it back), the data split over as many orders of the dimensions as are used, so that every dimension's links
// carry a share at once. A closed ring moves data both ways (2 links each way per device and dimension); an open
// line as fast as one closed ring used one way. bus_bytes are per device over ONE link's one-direction rate.
RingTerms torus_terms(Collective op, double message_bytes, const std::vector<std::int64_t>& extents, bool wraparound);

// One phase of `op` among `members` members of one domain of `cluster` (`group` says where they sit), timed
// with `fit`: the domain's topology picks the algorithm.
double inside_phase_ms(Collective op, double message_bytes, std::int64_t members, const CollectiveGroup& group,
                       const Cluster& cluster, const LinkFit& fit);

}  // namespace prenet
