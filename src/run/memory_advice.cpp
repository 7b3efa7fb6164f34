#include "run/memory_advice.hpp"

#include <algorithm>
#include <cstdio>

#include "core/limits.hpp"
#include "run/grad_accumulation.hpp"

namespace prenet {
namespace {

std::string gb(double bytes) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f GB", bytes / 1e9);
    return buf;
}

std::string batch_text(const BatchAdvice& a) {
    return "--batch " + std::to_string(a.batch) + " --grad-accum " + std::to_string(a.grad_accum);
}

}  // namespace

std::optional<BatchAdvice> largest_fitting_micro_batch(std::int64_t batch, std::int64_t grad_accum, bool checkpointing,
                                                       double capacity, const PeakAt& peak_at) {
    if (batch <= 1) return std::nullopt;
    auto fits = [&](std::int64_t b) { return peak_at(b, checkpointing) <= capacity; };
    if (!fits(1)) return std::nullopt;
    // Peak memory grows with the micro-batch: binary search the largest that fits below `batch`.
    std::int64_t lo = 1, hi = batch - 1;
    while (lo < hi) {
        std::int64_t mid = lo + (hi - lo + 1) / 2;
        if (fits(mid)) lo = mid;
        else hi = mid - 1;
    }
    std::int64_t global = global_batch(batch, grad_accum);
    // The largest divisor of the global batch not above `lo` keeps the global batch exactly.
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
    a.peak_bytes = peak_at(a.batch, checkpointing);
    return a;
}

MemoryAdvice advise_memory(const AdviceRequest& q, const PeakAt& peak_at, const std::vector<HardwareSpec>& catalogue) {
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
    auto smallest_holding = [&](double peak) {
        const HardwareSpec* best = nullptr;
        for (const auto& hw : catalogue) {
            if (hw.memory_bytes() < peak) continue;
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
            if (option.peak_bytes <= q.capacity_bytes) {
                f.option = option;
                f.fits = true;
                break;
            }
        if (!f.fits)
            if (const HardwareSpec* hw = smallest_holding(f.option.peak_bytes)) f.hardware = *hw;
        a.finetune = f;
    }

    std::vector<std::string> ways;
    if (a.finetune && a.finetune->fits)
        ways.push_back("with " + a.finetune->option.words + " (" + a.finetune->option.flags + ", " +
                       gb(a.finetune->option.peak_bytes) + ")");
    if (a.micro_batch) ways.push_back("with " + batch_text(*a.micro_batch) + " (same global batch)");
    if (a.checkpointing) {
        if (a.checkpointing->fits) ways.push_back("with --checkpointing (" + gb(a.checkpointing->peak_bytes) + ")");
        else if (a.checkpointing->micro_batch)
            ways.push_back("with --checkpointing " + batch_text(*a.checkpointing->micro_batch) + " (same global batch)");
    }
    if (a.smallest_hardware) {
        const HardwareAdvice& h = *a.smallest_hardware;
        std::string way = "on " + h.hardware.id + " (" + gb(h.hardware.memory_bytes()) + ")";
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
                       gb(a.finetune->option.peak_bytes) + ") on a " + gb(a.finetune->hardware->memory_bytes()) +
                       " card (" + a.finetune->hardware->id + ")");
    a.summary = "needs " + gb(q.peak_bytes) + ", " + gb(a.over_bytes) + " more than the " + gb(q.capacity_bytes) +
                " available; ";
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
