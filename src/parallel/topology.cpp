#include "parallel/topology.hpp"

#include <algorithm>
#include <numeric>
#include <vector>

namespace prenet {
namespace {

// Mean distance from a place to every place of a ring of `e` (closed) or a line of `e` (open), in links.
double mean_hops(std::int64_t e, bool closed) {
    double n = double(e);
    if (closed) return double((e / 2) * ((e + 1) / 2)) / n;  // floor(e^2 / 4) / e
    return (n * n - 1) / (3 * n);
}

// Members a span enumerates at most, where no closed form applies (every slice sold is under 10,000 chips; a user's
// sheet may describe a pod of millions): a larger group's extents are extrapolated from its first members.
constexpr std::int64_t kMaxEnumerated = std::int64_t{1} << 16;

}  // namespace

TorusSpan torus_span(const CollectiveGroup& group, const Cluster& cluster) {
    const std::vector<std::int64_t>& shape = cluster.torus_shape;
    const std::int64_t domain = std::max<std::int64_t>(1, cluster.scale_up_domain);
    const std::int64_t size = std::max<std::int64_t>(1, group.size), stride = std::max<std::int64_t>(1, group.stride);
    const std::int64_t run = std::clamp<std::int64_t>(group.run, 1, size);
    const std::int64_t run_stride = std::max<std::int64_t>(1, group.run_stride);
    // Members past the first domain sit in the others the same way.
    auto rank_of = [&](std::int64_t i) { return run == 1 ? i * stride : (i / run) * stride + (i % run) * run_stride; };
    // Distinct coordinates along dimension k (prefix: the ranks one step along it spans) of the first `members`
    // members, counted one by one.
    auto enumerate = [&](std::size_t k, std::int64_t prefix, std::int64_t members) {
        std::vector<char> seen(std::size_t(shape[k]), 0);
        std::int64_t distinct = 0, counted = 0;
        for (std::int64_t i = 0; i < std::min(members, kMaxEnumerated); ++i, ++counted) {
            std::int64_t rank = rank_of(i);
            if (rank >= domain) break;
            char& at = seen[std::size_t((rank / prefix) % shape[k])];
            distinct += !at, at = 1;
        }
        if (counted < members && counted == kMaxEnumerated)  // more members than enumerated: extrapolate
            distinct = std::min<std::int64_t>(shape[k], distinct * ((members + counted - 1) / counted));
        return std::max<std::int64_t>(1, distinct);
    };
    TorusSpan span;
    std::int64_t prefix = 1;
    const std::int64_t members = run == 1 ? std::min(size, (domain + stride - 1) / stride) : size;
    for (std::size_t k = 0; k < shape.size(); ++k) {
        const std::int64_t side = shape[k];
        std::int64_t e;
        if (run == 1 && stride % prefix == 0) {
            // Coordinate (i x q) mod side, q = stride / prefix: a cycle of side / gcd(q, side) places.
            e = std::min(members, side / std::gcd(stride / prefix, side));
        } else if (run == 1 && prefix % stride == 0) {
            // Coordinate floor(i / t) mod side, t = prefix / stride: consecutive places, one per t members.
            e = std::min(side, (members - 1) / (prefix / stride) + 1);
        } else {
            e = enumerate(k, prefix, members);
        }
        span.extents.push_back(std::max<std::int64_t>(1, e));
        span.closed.push_back(k < cluster.torus_closed.size() && cluster.torus_closed[k] && e == side);
        prefix *= side;
    }
    return span;
}

RingTerms torus_terms(Collective op, double message_bytes, const TorusSpan& span) {
    RingTerms t;
    int used = 0;
    double lanes = 0;  // links each way per device the rings use: 2 on a closed ring, 1 on an open line
    double volume = 0, remaining = message_bytes, hops = 0;
    for (std::size_t k = 0; k < span.extents.size(); ++k) {
        std::int64_t e = span.extents[k];
        if (e <= 1) continue;
        bool closed = k < span.closed.size() && span.closed[k];
        ++used;
        lanes += closed ? 2.0 : 1.0;
        t.steps += double(e - 1);
        volume += remaining * double(e - 1) / double(e);
        remaining /= double(e);
        hops += mean_hops(e, closed);
    }
    if (used == 0 || message_bytes <= 0) return {};
    switch (op) {
        case Collective::all_reduce:
            t.steps *= 2;
            t.bus_bytes = 2 * volume / lanes;
            break;
        case Collective::all_gather:
        case Collective::reduce_scatter: t.bus_bytes = volume / lanes; break;
        case Collective::all_to_all:
            // Every byte travels its peer's distance; each device sends out on 2 links per dimension used.
            t.bus_bytes = message_bytes * hops / (2.0 * used);
            break;
        case Collective::send_recv:
            t.steps = 1;
            t.bus_bytes = message_bytes;  // to a neighbour, over one link
            break;
    }
    return t;
}

std::optional<LinkPhase> full_mesh_phase(Collective op, double message_bytes, std::int64_t members,
                                         const Cluster& cluster) {
    if (cluster.topology != HardwareSpec::Topology::full_mesh || !(cluster.link_gbps > 0) || cluster.links_per_peer < 1)
        return std::nullopt;
    LinkPhase m;
    m.gbps = cluster.link_gbps;
    if (members <= 1) return m;
    const std::int64_t per_peer = cluster.links_per_peer;
    if (op == Collective::send_recv) {
        m.terms = ring_terms(op, message_bytes, 2);
        m.gbps = double(per_peer) * cluster.link_gbps;
        return m;
    }
    std::int64_t links = (members - 1) * per_peer;
    if (cluster.links_per_device > 0) links = std::min(links, cluster.links_per_device);
    m.terms = ring_terms(op, message_bytes, members);
    m.gbps = double(links) * cluster.link_gbps;
    return m;
}

PhaseTerms inside_phase_terms(Collective op, double message_bytes, std::int64_t members, const CollectiveGroup& group,
                              const Cluster& cluster) {
    if (cluster.topology == HardwareSpec::Topology::torus && cluster.link_gbps > 0 && !cluster.torus_shape.empty())
        return phase_terms(torus_terms(op, message_bytes, torus_span(group, cluster)), cluster.link_gbps);
    if (auto mesh = full_mesh_phase(op, message_bytes, members, cluster)) return phase_terms(mesh->terms, mesh->gbps);
    return phase_terms(ring_terms(op, message_bytes, members), cluster.scale_up.gbps);
}

double inside_phase_ms(Collective op, double message_bytes, std::int64_t members, const CollectiveGroup& group,
                       const Cluster& cluster, const LinkFit& fit) {
    if (members <= 1 || message_bytes <= 0) return 0;
    return phase_ms(inside_phase_terms(op, message_bytes, members, group, cluster), fit);
}

}  // namespace prenet
