#pragma once
// One collective phase inside a scale-up domain, as the domain is wired (docs/parallel.md, "Topologies"):
// - switched (NVSwitch, a PCIe switch): a ring over the members, each at its whole scale-up bandwidth;
// - full mesh (AMD Infinity Fabric, Gaudi's RoCE ports): the members' direct links to each other;
// - torus (TPU ICI, Trainium NeuronLink): a ring per dimension of the members' sub-torus.
// collectives.cpp composes these phases with the scale-out phases across domains.
#include <cstdint>
#include <optional>
#include <vector>

#include "parallel/cluster.hpp"
#include "parallel/collectives.hpp"

namespace prenet {

// Where a group's members in the first domain lie on the torus (the group's sub-torus): how many distinct places
// they take along each dimension (a tensor-parallel group of 8 on a 4x4x4 slice is 4 x 2 x 1), and whether their
// ring along it closes: the slice's ring there closes (Cluster::torus_closed) and the members fill the whole side. Members
// in rank order as CollectiveGroup lays them out; ranks fill x first, then y, then z.
struct TorusSpan {
    std::vector<std::int64_t> extents;
    std::vector<bool> closed;
};
TorusSpan torus_span(const CollectiveGroup& group, const Cluster& cluster);

// The ring terms of `op` over a sub-torus (docs/parallel.md, "Collectives on a torus"): one ring per dimension,
// dimension after dimension (reduce-scatter shrinks the buffer by each side in turn, all-gather grows it back),
// the data split over as many orders of the dimensions as are used, so that every dimension's links carry a share
// at once. A closed ring moves data both ways (2 links each way per device); an open line as fast as one closed
// ring used one way. bus_bytes are per device over ONE link's one-direction rate.
RingTerms torus_terms(Collective op, double message_bytes, const TorusSpan& span);

// One phase inside a full mesh (docs/parallel.md, "Inside a full mesh"): the ring terms of `op` over the
// members (steps and nccl-tests' bus bytes per member) and the rate they move at, the one-direction GB/s of the
// links a member has to the other members. A member reaches its p-1 peers over links_per_peer links each (at most
// links_per_device in all); RCCL's rings over the members (one per channel, each on other links) or HCCL's direct
// mesh algorithm keep all of them busy at once, so the bus bytes move over (p-1) x links_per_peer links. All-to-all
// sends S/p to each peer over that peer's own links: the same terms. A send goes over the links to one peer.
// nullopt where the cluster is not a full mesh with published links (the switched ring applies).
struct LinkPhase {
    RingTerms terms;
    double gbps = 0;
};
std::optional<LinkPhase> full_mesh_phase(Collective op, double message_bytes, std::int64_t members,
                                         const Cluster& cluster);

// The terms of one phase of `op` among `members` members of one domain of `cluster` (`group` says where they
// sit): the domain's topology picks the algorithm. What inside_phase_ms times and the collective fit regresses on.
PhaseTerms inside_phase_terms(Collective op, double message_bytes, std::int64_t members, const CollectiveGroup& group,
                              const Cluster& cluster);

// That phase timed with `fit`; 0 for one member or no bytes.
double inside_phase_ms(Collective op, double message_bytes, std::int64_t members, const CollectiveGroup& group,
                       const Cluster& cluster, const LinkFit& fit);

}  // namespace prenet
