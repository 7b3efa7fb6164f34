#include "parallel/collectives.hpp"

#include <algorithm>
#include <cmath>

#include "core/embedded.hpp"
#include "core/error.hpp"
#include "parallel/topology.hpp"

namespace prenet {
namespace {

using nlohmann::json;

constexpr Collective kAll[] = {Collective::all_reduce, Collective::all_gather, Collective::reduce_scatter,
                               Collective::all_to_all, Collective::send_recv};

// Milliseconds of one phase (no base cost: that is paid once per collective, in time_ms).
double phase_ms(const RingTerms& t, double gbps, const LinkFit& f) { return phase_ms(phase_terms(t, gbps), f); }

// All-reduce across domains: NCCL picks ring or tree by size; the tree's latency grows with log2 of the members
// but each member moves the whole buffer twice (up and down), the ring's 2(n-1)/n of it in 2(n-1) steps.
double across_all_reduce_ms(double bytes, std::int64_t d, double gbps, const LinkFit& f) {
    double ring = phase_ms(ring_terms(Collective::all_reduce, bytes, d), gbps, f);
    RingTerms tree{2 * std::ceil(std::log2(double(d))), 2 * bytes};
    return std::min(ring, phase_ms(tree, gbps, f));
}

}  // namespace

PhaseTerms phase_terms(const RingTerms& t, double gbps) {
    PhaseTerms p;
    p.latency = t.steps * 1e-3;
    p.transfer = t.bus_bytes / (gbps * 1e9) * 1e3;
    p.pipeline = std::sqrt(p.latency * p.transfer);
    return p;
}

double phase_ms(const PhaseTerms& p, const LinkFit& f) {
    return f.latency_us * p.latency + p.transfer / f.efficiency + f.pipeline * p.pipeline;
}

const char* to_string(Collective c) {
    switch (c) {
        case Collective::all_reduce: return "all_reduce";
        case Collective::all_gather: return "all_gather";
        case Collective::reduce_scatter: return "reduce_scatter";
        case Collective::all_to_all: return "all_to_all";
        case Collective::send_recv: return "send_recv";
    }
    return "all_reduce";
}

std::optional<Collective> collective_from_string(const std::string& name) {
    for (Collective c : kAll)
        if (name == to_string(c)) return c;
    if (name == "alltoall") return Collective::all_to_all;  // nccl-tests' spelling
    return std::nullopt;
}

double bus_factor(Collective c, std::int64_t n) {
    if (n <= 1) return 0;
    double f = double(n - 1) / double(n);
    switch (c) {
        case Collective::all_reduce: return 2 * f;
        case Collective::all_gather:
        case Collective::reduce_scatter:
        case Collective::all_to_all: return f;
        case Collective::send_recv: return 1;
    }
    return f;
}

// Ring all-reduce: reduce-scatter then all-gather, n-1 steps each; all-gather and reduce-scatter: n-1 steps;
// all-to-all: n-1 pairwise exchanges; send/recv: one transfer.
RingTerms ring_terms(Collective c, double message_bytes, std::int64_t n) {
    if (n <= 1) return {};
    double steps = c == Collective::all_reduce ? 2.0 * double(n - 1) : c == Collective::send_recv ? 1.0 : double(n - 1);
    return {steps, message_bytes * bus_factor(c, n)};
}

// A domain holds the ranks [k D, (k+1) D). Members at ranks 0, stride, 2 stride, ...: with stride < D, a domain
// holds ceil(D / stride) of them (all of them if fewer); with stride >= D, one. Runs of members (a run spans at
// most `stride`, so a run lies in one domain when stride < D): with stride < D, ceil(D / stride) whole runs share
// a domain; with stride >= D, each run is spread over domains as a group of its own.
GroupSpan group_span(const CollectiveGroup& group, const Cluster& cluster) {
    GroupSpan s;
    std::int64_t size = std::max<std::int64_t>(1, group.size), stride = std::max<std::int64_t>(1, group.stride);
    std::int64_t run = std::clamp<std::int64_t>(group.run, 1, size);
    std::int64_t domain = std::max<std::int64_t>(1, cluster.scale_up_domain);
    auto per_domain = [domain](std::int64_t members, std::int64_t apart) {
        return std::min(members, apart >= domain ? 1 : (domain + apart - 1) / apart);
    };
    if (run == 1) s.per_domain = per_domain(size, stride);
    else if (stride >= domain) s.per_domain = per_domain(run, std::max<std::int64_t>(1, group.run_stride));
    else s.per_domain = std::min(size, per_domain(size, stride) * run);
    s.domains = (size + s.per_domain - 1) / s.per_domain;
    return s;
}

// Members fill domains in order, so with experts laid out in member order a domain holds blocks / domains whole
// blocks when that divides, and a block spans domains / blocks domains when that does; otherwise a block may
// straddle one more domain than its share.
double domains_per_item(const Fanout& f, std::int64_t domains) {
    double d = double(std::max<std::int64_t>(1, domains));
    if (!f.limited()) return std::min(f.copies, d);
    std::int64_t blocks = f.blocks;
    double per_block = blocks % domains == 0 ? 1.0
                       : domains % blocks == 0 ? double(domains / blocks)
                                              : std::ceil(d / double(blocks)) + 1.0;
    return std::min({f.copies, d, double(f.blocks_per_item) * per_block});
}

const LinkFit& CollectiveModel::fit(LinkKind kind) const {
    auto it = links.find(kind);
    return it != links.end() ? it->second : fallback;
}

const LinkFit& CollectiveModel::fit(LinkKind kind, Collective op) const {
    if (auto k = by_op.find(kind); k != by_op.end())
        if (auto o = k->second.find(op); o != k->second.end()) return o->second;
    if (links.count(kind)) return links.at(kind);
    if (auto o = fallback_by_op.find(op); o != fallback_by_op.end()) return o->second;
    return fallback;
}

// docs/parallel.md, "Collectives". P members per domain, D domains. Inside a domain each member has the
// scale-up link's one-direction bandwidth; across domains each member has its share of its node's NICs: every
// device of a node takes part in a collective of the same kind at the same time in a parallel step (the dp
// groups of all tp ranks together), so the node's scale-out bandwidth is split over all its devices.
double CollectiveModel::time_ms(Collective c, double message_bytes, const CollectiveGroup& group,
                                const Cluster& cluster, const Fanout& fanout) const {
    if (group.size <= 1 || message_bytes <= 0) return 0;
    GroupSpan span = group_span(group, cluster);
    const std::int64_t p = span.per_domain, d = span.domains, n = p * d;
    const LinkKind up_kind = cluster.scale_up.kind, out_kind = cluster.scale_out.kind;
    const LinkFit& up = fit(up_kind, c);
    const LinkFit& out = fit(out_kind, c);
    const double out_gbps = cluster.scale_out.gbps / double(std::max<std::int64_t>(1, std::min(cluster.gpus_per_node,
                                                                                              cluster.gpus)));
    // Inside a domain the topology picks the algorithm (parallel/topology.hpp); across domains, rings on the NICs.
    auto inside = [&](Collective op, double bytes) {
        return inside_phase_ms(op, bytes, p, group, cluster, fit(up_kind, op));
    };
    if (d == 1) return up.base_us * 1e-3 + inside(c, message_bytes);
    const double base = std::max(up.base_us, out.base_us) * 1e-3;
    const double shard = message_bytes / double(p);  // what each member carries across domains
    // Each phase timed with the fit of the collective it is.
    auto across = [&](Collective op, double bytes) {
        return phase_ms(ring_terms(op, bytes, d), out_gbps, fit(out_kind, op));
    };
    switch (c) {
        case Collective::all_reduce:
            // reduce-scatter inside, all-reduce of 1/P across, all-gather inside
            return base + inside(Collective::reduce_scatter, message_bytes) +
                   across_all_reduce_ms(shard, d, out_gbps, out) + inside(Collective::all_gather, message_bytes);
        case Collective::all_gather:
            // gather the 1/P slices across domains (output S/P), then inside (output S)
            return base + across(Collective::all_gather, shard) + inside(Collective::all_gather, message_bytes);
        case Collective::reduce_scatter:
            return base + inside(Collective::reduce_scatter, message_bytes) + across(Collective::reduce_scatter, shard);
        case Collective::all_to_all: {
            if (fanout.limited()) {
                // Node-limited dispatch (Fanout): each item crosses once to each remote domain it reaches, to the
                // member of the same local index there (one peer per other domain, d - 1 exchanges), and every
                // copy not for the sender is delivered inside a domain: (P-1)/P of S over the scale-up link.
                // Of the domains an item reaches, (d-1)/d are remote on average: S / copies x reached x (d-1)/d.
                double reached = domains_per_item(fanout, d);
                RingTerms remote{double(d - 1), message_bytes / fanout.copies * reached * double(d - 1) / double(d)};
                return base + std::max(inside(Collective::all_to_all, message_bytes), phase_ms(remote, out_gbps, out));
            }
            // S/n to every peer, one pairwise exchange each: P-1 peers inside the domain ((P-1)/n of S), n-P
            // across ((n-P)/n of S). The two sets of exchanges run at once, each a phase with its own steps,
            // transfer and pipelining term (as one domain's all-to-all is), on its own link; the slower binds.
            RingTerms remote{double(n - p), message_bytes * double(n - p) / double(n)};
            return base + std::max(inside(Collective::all_to_all, message_bytes * double(p) / double(n)),
                                   phase_ms(remote, out_gbps, out));
        }
        case Collective::send_recv:
            return out.base_us * 1e-3 + phase_ms(ring_terms(c, message_bytes, 2), out_gbps, out);
    }
    return 0;
}

CollectiveModel CollectiveModel::from_json(const json& doc) {
    CollectiveModel m;
    auto read = [](const json& j) {
        LinkFit f;
        f.efficiency = j.at("efficiency").get<double>();
        f.latency_us = j.at("latency_us").get<double>();
        f.base_us = j.value("base_us", 0.0);
        f.pipeline = j.value("pipeline", 0.0);
        f.fitted = j.value("fitted", false);
        if (!(f.efficiency > 0) || !(f.latency_us >= 0) || !(f.base_us >= 0) || !(f.pipeline >= 0))
            throw Error("collective model: efficiency must be > 0 and latencies >= 0");
        return f;
    };
    if (!doc.is_object() || !doc.contains("links")) throw Error("collective model: no 'links' object");
    for (auto it = doc["links"].begin(); it != doc["links"].end(); ++it) {
        auto kind = link_kind_from_string(it.key());
        if (!kind) throw Error("collective model: unknown link kind '" + it.key() + "'");
        m.links[*kind] = read(*it);
    }
    if (doc.contains("fallback")) m.fallback = read(doc["fallback"]);
    auto read_ops = [&](const json& j, std::map<Collective, LinkFit>& into) {
        if (!j.contains("by_op")) return;
        for (auto it = j["by_op"].begin(); it != j["by_op"].end(); ++it) {
            auto op = collective_from_string(it.key());
            if (!op) throw Error("collective model: unknown collective '" + it.key() + "'");
            into[*op] = read(*it);
        }
    };
    for (auto it = doc["links"].begin(); it != doc["links"].end(); ++it) {
        std::map<Collective, LinkFit> ops;
        read_ops(*it, ops);
        if (!ops.empty()) m.by_op[*link_kind_from_string(it.key())] = ops;
    }
    if (doc.contains("fallback")) read_ops(doc["fallback"], m.fallback_by_op);
    return m;
}

json CollectiveModel::to_json() const {
    auto write = [](const LinkFit& f) {
        return json{{"efficiency", f.efficiency}, {"latency_us", f.latency_us}, {"base_us", f.base_us},
                    {"pipeline", f.pipeline}, {"fitted", f.fitted}};
    };
    auto write_ops = [&](json& into, const std::map<Collective, LinkFit>& ops) {
        for (const auto& [op, f] : ops) into["by_op"][to_string(op)] = write(f);
    };
    json links_doc = json::object();
    for (const auto& [kind, f] : links) {
        links_doc[to_string(kind)] = write(f);
        if (by_op.count(kind)) write_ops(links_doc[to_string(kind)], by_op.at(kind));
    }
    json fallback_doc = write(fallback);
    write_ops(fallback_doc, fallback_by_op);
    return {{"format", 1}, {"links", links_doc}, {"fallback", fallback_doc}};
}

const CollectiveModel& CollectiveModel::shipped() {
    static const CollectiveModel model = [] {
        for (const auto& f : embedded_files())
            if (f.path == "models/collectives.json") return from_json(json::parse(f.contents));
        return CollectiveModel{};  // not fitted yet: the defaults of LinkFit
    }();
    return model;
}

}  // namespace prenet
