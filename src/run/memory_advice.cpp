#include "run/memory_advice.hpp"

#include <algorithm>
#include <cstdio>
#include <tuple>

#include "core/quantity_text.hpp"
#include "core/limits.hpp"
#include "hardware/precision_support.hpp"
#include "run/grad_accumulation.hpp"

namespace prenet {
namespace {

// "step +28%"
std::string step_cost(double increase) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "step %+.0f%%", increase * 100);
    return buf;
}

std::string batch_text(const BatchAdvice& a) {
    return "--batch " + std::to_string(a.batch) + " --grad-accum " + std::to_string(a.grad_accum);
}

// The largest micro-batch below `batch` whose peak fits, then the largest divisor of the global batch not above
// it (so that batch x grad_accum keeps the global batch exactly).
std::optional<BatchAdvice> largest_fitting(std::int64_t batch, std::int64_t grad_accum, double capacity,
                                           const std::function<double(std::int64_t)>& peak_at) {
    if (batch <= 1) return std::nullopt;
    auto fits = [&](std::int64_t b) { return peak_at(b) <= capacity; };
    if (!fits(1)) return std::nullopt;
    // Peak memory grows with the micro-batch: binary search the largest that fits below `batch`.
    std::int64_t lo = 1, hi = batch - 1;
    while (lo < hi) {
        std::int64_t mid = lo + (hi - lo + 1) / 2;
        if (fits(mid)) lo = mid;
        else hi = mid - 1;
    }
    std::int64_t global = global_batch(batch, grad_accum);
    std::int64_t best = 0;
    for (std::int64_t d = 1; d <= 1000000 && d * d <= global; ++d) {
        if (global % d) continue;
        if (d <= lo) best = std::max(best, d);
        if (global / d <= lo) best = std::max(best, global / d);
    }
    BatchAdvice a;
    a.batch = std::max<std::int64_t>(best, 1);  // 1 divides everything
    a.grad_accum = global / a.batch;
    a.largest_fitting_batch = lo;
    a.peak_bytes = peak_at(a.batch);
    return a;
}


}  // namespace

std::optional<BatchAdvice> largest_fitting_micro_batch(std::int64_t batch, std::int64_t grad_accum, bool checkpointing,
                                                       double capacity, const PeakAt& peak_at) {
    return largest_fitting(batch, grad_accum, capacity, [&](std::int64_t b) { return peak_at(b, checkpointing); });
}

bool SettingsChange::operator<(const SettingsChange& o) const {
    return std::tie(checkpointing, loss, batch, grad_accum, zero, dp, tp, pp, cp) <
           std::tie(o.checkpointing, o.loss, o.batch, o.grad_accum, o.zero, o.dp, o.tp, o.pp, o.cp);
}

std::vector<CheckpointKind> heavier_checkpointing(CheckpointKind kind) {
    // Lightest first: each keeps less than the one before (offload: one block's activations on the device).
    static const CheckpointKind order[] = {CheckpointKind::none, CheckpointKind::attention_core,
                                           CheckpointKind::op_level, CheckpointKind::full, CheckpointKind::offload};
    std::vector<CheckpointKind> out;
    bool past = false;
    for (CheckpointKind k : order) {
        if (past) out.push_back(k);
        past = past || k == kind;
    }
    return out;
}

std::vector<MemoryChange> ranked_changes(const ChangeRequest& q, const ChangeModel& model, size_t max_changes) {
    std::vector<MemoryChange> fitting;
    auto fits = [&](const SettingsChange& c, std::int64_t largest_fitting_batch = 0) {
        MemoryUse use = model.memory(c);
        if (!(use.peak <= q.capacity_bytes)) return false;
        MemoryChange m;
        m.change = model.resolve ? model.resolve(c) : c;
        if (c.batch && largest_fitting_batch > *c.batch) m.largest_fitting_batch = largest_fitting_batch;
        m.peak_bytes = use.peak;
        m.peak_reserved_bytes = use.peak_reserved;
        m.step_ms = model.step_ms(c);
        m.step_increase = q.step_ms > 0 ? m.step_ms / q.step_ms - 1 : 0;
        m.flags = model.flags(m.change);
        fitting.push_back(m);
        return true;
    };
    std::vector<CheckpointKind> kinds;
    if (q.has_checkpoint_blocks) kinds = heavier_checkpointing(q.checkpointing);
    // The largest fitting micro-batch with `base` (the global batch kept), and the largest that fits at all; none
    // when it already fits or none fits.
    auto smaller_batch = [&](SettingsChange base) -> std::optional<std::pair<SettingsChange, std::int64_t>> {
        auto b = largest_fitting(q.batch, q.grad_accum, q.capacity_bytes, [&](std::int64_t batch) {
            SettingsChange c = base;
            c.batch = batch;
            c.grad_accum = (global_batch(q.batch, q.grad_accum) + batch - 1) / batch;
            return model.memory(c).peak;
        });
        if (!b) return std::nullopt;
        base.batch = b->batch;
        base.grad_accum = b->grad_accum;
        return std::make_pair(base, b->largest_fitting_batch);
    };

    auto with_kind = [](CheckpointKind k) {
        SettingsChange c;
        c.checkpointing = k;
        return c;
    };
    // Single changes, in the tie-breaking order.
    if (q.has_full_loss_logits && q.loss == LossMode::full) {
        SettingsChange chunked;
        chunked.loss = LossMode::chunked;
        fits(chunked);
    }
    // Offload's host copies are not in the step model (it takes them as hidden behind compute), so by time it
    // would always rank first: it is offered only where no kind that stays on the device fits.
    bool on_device_fits = false;
    for (CheckpointKind k : kinds)
        if (k != CheckpointKind::offload) on_device_fits = fits(with_kind(k)) || on_device_fits;
        else if (!on_device_fits) fits(with_kind(k));
    if (auto c = smaller_batch({})) fits(c->first, c->second);
    for (const auto& c : q.more) fits(c);

    // No single change fits: combinations, bounded (at most 2 x 5 micro-batch searches).
    if (fitting.empty() && q.combinations) {
        std::vector<std::optional<LossMode>> losses = {std::nullopt};
        if (q.has_full_loss_logits && q.loss == LossMode::full) losses.push_back(LossMode::chunked);
        std::vector<std::optional<CheckpointKind>> with = {std::nullopt};
        for (CheckpointKind k : kinds) with.push_back(k);
        for (const auto& loss : losses) {
            bool on_device_pair_fits = false;  // offload as above: only where no on-device kind fits
            for (const auto& k : with) {
                if (!loss && !k) continue;  // the micro-batch alone: tried above
                if (k == CheckpointKind::offload && on_device_pair_fits) continue;
                SettingsChange base;
                base.checkpointing = k;
                base.loss = loss;
                        bool fitted = fits(base);  // the pair as it is, else with the largest micro-batch that fits
                if (!fitted)
                    if (auto c = smaller_batch(base)) fitted = fits(c->first, c->second);
                on_device_pair_fits = on_device_pair_fits || (fitted && k != CheckpointKind::offload);
            }
        }
    }
    // The cheapest first: the smallest step-time increase; equal times keep the order above (stable), then
    // the smaller peak.
    std::stable_sort(fitting.begin(), fitting.end(), [](const MemoryChange& a, const MemoryChange& b) {
        if (a.step_ms != b.step_ms) return a.step_ms < b.step_ms;
        return false;
    });
    if (fitting.size() > max_changes) fitting.resize(max_changes);
    return fitting;
}

std::string change_text(const MemoryChange& c) {
    std::string text = c.flags + ": fits at " + gib_text(c.peak_reserved_bytes) + " reserved, " + step_cost(c.step_increase);
    if (c.largest_fitting_batch > 0 && c.change.batch && c.change.grad_accum)
        text += " (" + std::to_string(*c.change.batch) + " is the largest micro-batch that divides the global batch of " +
                grouped(*c.change.batch * *c.change.grad_accum) + "; up to " + std::to_string(c.largest_fitting_batch) +
                " fit)";
    return text;
}

MemoryAdvice advise_memory(const AdviceRequest& q, const PeakAt& peak_at, const std::vector<HardwareSpec>& candidates) {
    MemoryAdvice a;
    a.over_bytes = std::max(0.0, q.peak_bytes - q.capacity_bytes);
    a.micro_batch = largest_fitting_micro_batch(q.batch, q.grad_accum, q.checkpointing, q.capacity_bytes, peak_at);
    if (!q.checkpointing && q.has_checkpoint_blocks) {
        CheckpointAdvice c;
        c.peak_bytes = peak_at(q.batch, true);
        c.fits = c.peak_bytes <= q.capacity_bytes;
        if (!c.fits) c.micro_batch = largest_fitting_micro_batch(q.batch, q.grad_accum, true, q.capacity_bytes, peak_at);
        a.checkpointing = c;
    }
    auto smallest_holding = [&](double peak, bool needs_nf4 = false) {
        const HardwareSpec* best = nullptr;
        for (const auto& hw : candidates) {
            if (hw.memory_bytes() < peak || (needs_nf4 && !has_nf4_kernels(hw))) continue;
            bool better = !best || hw.memory_bytes() < best->memory_bytes() ||
                          (hw.memory_bytes() == best->memory_bytes() && hw.price_per_hour() > 0 &&
                           (best->price_per_hour() <= 0 || hw.price_per_hour() < best->price_per_hour()));
            if (better) best = &hw;
        }
        return best;
    };
    HardwareAdvice h;
    h.batch = q.batch, h.grad_accum = q.grad_accum, h.checkpointing = q.checkpointing, h.peak_bytes = q.peak_bytes;
    const HardwareSpec* found = smallest_holding(q.peak_bytes);
    if (!found) {
        h.batch = 1;
        h.grad_accum = global_batch(q.batch, q.grad_accum);
        h.checkpointing = q.checkpointing || q.has_checkpoint_blocks;
        h.peak_bytes = peak_at(h.batch, h.checkpointing);
        found = smallest_holding(h.peak_bytes);
    }
    if (found) {
        h.hardware = *found;
        a.smallest_hardware = h;
    }

    if (!q.finetune_options.empty()) {
        FineTuneAdvice f;
        f.option = q.finetune_options.back();
        for (const auto& option : q.finetune_options)
            if (option.peak_bytes <= q.capacity_bytes && (q.nf4_kernels || !option.nf4_base)) {
                f.option = option;
                f.fits = true;
                break;
            }
        if (!f.fits)
            if (const HardwareSpec* hw = smallest_holding(f.option.peak_bytes, f.option.nf4_base)) f.hardware = *hw;
        a.finetune = f;
    }

    std::vector<std::string> ways;
    if (a.finetune && a.finetune->fits)
        ways.push_back("with " + a.finetune->option.words + " (" + a.finetune->option.flags + ", " +
                       gib_text(a.finetune->option.peak_bytes) + ")");
    // The ranked changes (named first, below) cover the micro-batch and checkpointing ways by the same model.
    for (size_t i = 1; i < q.changes.size(); ++i)
        ways.push_back("with " + q.changes[i].flags + " (" + step_cost(q.changes[i].step_increase) + ")");
    if (a.micro_batch && q.changes.empty()) ways.push_back("with " + batch_text(*a.micro_batch) + " (same global batch)");
    if (a.checkpointing && q.changes.empty()) {
        if (a.checkpointing->fits) ways.push_back("with --checkpointing (" + gib_text(a.checkpointing->peak_bytes) + ")");
        else if (a.checkpointing->micro_batch)
            ways.push_back("with --checkpointing " + batch_text(*a.checkpointing->micro_batch) + " (same global batch)");
    }
    if (a.smallest_hardware) {
        const HardwareAdvice& h = *a.smallest_hardware;
        std::string way = "on " + h.hardware.id + " (" + gib_text(h.hardware.memory_bytes()) + ")";
        std::string with;
        if (h.batch != q.batch) with += " " + batch_text({h.batch, h.grad_accum, 0, 0});
        if (h.checkpointing && !q.checkpointing) with += " --checkpointing";
        if (!with.empty()) way += " with" + with + (h.batch != q.batch ? " (same global batch)" : "");
        ways.push_back(way);
    }
    // Powers of two up to limits::advised_devices; the rest of the peak (activations, buffers, reserve) is not sharded.
    double rest = q.peak_bytes - q.model_state_bytes;
    if (q.model_state_bytes > 0 && rest < q.capacity_bytes)
        for (std::int64_t n = 2; n <= limits::advised_devices; n *= 2)
            if (rest + q.model_state_bytes / double(n) <= q.capacity_bytes) {
                a.fsdp_devices = n;
                ways.push_back("on " + std::to_string(n) + " of these with FSDP (--gpus " + std::to_string(n) +
                               " --zero 3)");
                break;
            }
    if (a.finetune && !a.finetune->fits && a.finetune->hardware)
        ways.push_back("with " + a.finetune->option.words + " (" + a.finetune->option.flags + ", " +
                       gib_text(a.finetune->option.peak_bytes) + ") on a " + gib_text(a.finetune->hardware->memory_bytes()) +
                       " card (" + a.finetune->hardware->id + ")");
    a.changes = q.changes;
    a.summary = "needs " + gib_text(q.peak_bytes) + ", " + gib_text(a.over_bytes) + " more than the " + gib_text(q.capacity_bytes) +
                " available; ";
    // The cheapest change by the same model first, then the other ways.
    if (!a.changes.empty()) {
        a.summary += "cheapest change " + change_text(a.changes.front());
        if (ways.empty()) return a;
        a.summary += "; also ";
    }
    if (ways.empty()) {
        a.summary += "no micro-batch, checkpointing, single catalogue accelerator or FSDP sharding makes it fit: "
                     "try --gpus N with tensor or pipeline parallelism (--tp, --pp), which also split activations";
    } else {
        a.summary += "fits ";
        for (size_t i = 0; i < ways.size(); ++i)
            a.summary += (i == 0 ? "" : (i + 1 == ways.size() ? ", or " : ", ")) + ways[i];
    }
    return a;
}

}  // namespace prenet
