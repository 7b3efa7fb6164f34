#pragma once
// Time of one collective over a group of devices (docs/parallel.md): NCCL-style ring and tree algorithms with a
// latency term per step and a bandwidth term, composed hierarchically (inside the scale-up domain, then across
// it) when a group spans domains. Efficiency and latency per link kind are fitted on measured collectives
// (models/collectives.json, from data/collectives/).
//
// Message size follows nccl-tests: all_reduce the buffer each device holds; all_gather the gathered output;
// reduce_scatter the input each device holds; all_to_all the bytes each device sends in total; send_recv the
// bytes sent one way.
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "parallel/cluster.hpp"

namespace prenet {

enum class Collective { all_reduce, all_gather, reduce_scatter, all_to_all, send_recv };
const char* to_string(Collective c);
std::optional<Collective> collective_from_string(const std::string& name);

// Bytes each device moves over its link per byte of message, as nccl-tests' bus bandwidth counts it:
// 2(n-1)/n for all-reduce, (n-1)/n for all-gather, reduce-scatter and all-to-all, 1 for send/recv.
double bus_factor(Collective c, std::int64_t n);

// Where a group's members sit in rank order (ranks fill a node first: tensor-parallel groups are contiguous,
// stride 1; data-parallel groups step over the tp x cp devices of each replica). The members come in runs of
// `run` members `run_stride` apart, the runs `stride` apart: an expert-parallel group that spans the tp ranks
// with cp > 1 is runs of tp adjacent ranks, tp x cp apart. With `run` = 1, simply `size` members `stride` apart.
struct CollectiveGroup {
    std::int64_t size = 1;
    std::int64_t stride = 1;
    std::int64_t run = 1;
    std::int64_t run_stride = 1;
};

// An all-to-all whose items (tokens) each go to `copies` members (their top_k experts), chosen inside at most
// `blocks_per_item` of `blocks` equal runs of consecutive members (DeepSeek's node-limited routing: the experts in
// n_group groups, a token's in at most topk_group of them). Such a dispatch sends an item once to each remote
// domain that holds one of its members and forwards it inside that domain (DeepEP's), so the bytes across domains
// per item are bounded by the domains it reaches, not by `copies`. blocks_per_item = 0: a plain all-to-all, every
// copy sent to its member directly.
struct Fanout {
    double copies = 1;
    std::int64_t blocks = 0, blocks_per_item = 0;
    bool limited() const { return blocks_per_item > 0 && blocks > 0; }
};

// How a group lies on the cluster: members per scale-up domain and domains spanned.
struct GroupSpan {
    std::int64_t per_domain = 1, domains = 1;
};
GroupSpan group_span(const CollectiveGroup& group, const Cluster& cluster);

// The most domains (of `domains`, members filling them in order) one item of a node-limited `fanout` reaches:
// its copies, its blocks times the domains a block spans, and the domains there are, whichever is least.
double domains_per_item(const Fanout& fanout, std::int64_t domains);

// Fitted parameters per link kind: achieved fraction of the link's bandwidth and latency per algorithm step;
// base_us, a fixed cost per collective (kernel launch and synchronisation), which NCCL's small-message
// times show apart from the per-step latency (A100: ~8 us + ~1 us per ring step); `fitted` says whether the
// values came from measurements of this link kind or from the pooled fit of the others.
struct LinkFit {
    double efficiency = 0.8;
    double latency_us = 5.0;
    double base_us = 0.0;
    // `pipeline`: NCCL moves a buffer in chunks through the steps, so mid-size messages pay part of the latency per
    // chunk; with chunks sized to the message that overhead grows as sqrt(latency x transfer) (the optimum of
    // a pipelined transfer). Dimensionless; 0 = none.
    double pipeline = 0.0;
    bool fitted = false;
};

class CollectiveModel {
public:
    // The fitted model compiled in (models/collectives.json).
    static const CollectiveModel& shipped();
    static CollectiveModel from_json(const nlohmann::json& doc);
    nlohmann::json to_json() const;

    // Milliseconds for one collective of `message_bytes` over `group` on `cluster`; 0 for a group of one. `fanout`
    // applies to all_to_all only.
    double time_ms(Collective c, double message_bytes, const CollectiveGroup& group, const Cluster& cluster,
                   const Fanout& fanout = {}) const;

    std::map<LinkKind, LinkFit> links;
    // The fit used for a link kind missing from `links`.
    LinkFit fallback;
    // Fits per collective where the data has it (NCCL's algorithms differ by collective: all-to-all is
    // pairwise, all-reduce on NVSwitch uses NVLS); a collective without one uses its kind's fit.
    std::map<LinkKind, std::map<Collective, LinkFit>> by_op;
    std::map<Collective, LinkFit> fallback_by_op;
    // The fit for `kind` (links[kind], or the fallback), and for `op` on `kind`: by_op[kind][op], else
    // links[kind], else fallback_by_op[op], else the fallback.
    const LinkFit& fit(LinkKind kind) const;
    const LinkFit& fit(LinkKind kind, Collective op) const;
};

// The latency-step count and per-device bus bytes of one flat ring (or pairwise, for all-to-all) phase of
// `c` over `n` devices, which the fit regresses on (one fact, one place: time_ms uses the same terms).
struct RingTerms {
    double steps = 0, bus_bytes = 0;
};
RingTerms ring_terms(Collective c, double message_bytes, std::int64_t n);

// One phase's time is linear in the fitted parameters: latency_us x `latency` + `transfer` / efficiency
// + pipeline x `pipeline` (milliseconds). The fit regresses on these same terms.
struct PhaseTerms {
    double latency = 0;   // ms per us of step latency (steps / 1000)
    double transfer = 0;  // ms to move the bus bytes at the link's full one-direction rate
    double pipeline = 0;  // sqrt(steps x 1 us x transfer), ms
};
PhaseTerms phase_terms(const RingTerms& t, double gbps);
double phase_ms(const PhaseTerms& p, const LinkFit& f);

}  // namespace prenet
