#include "api/reply_json.hpp"

#include "api/options.hpp"
#include "parallel/layout.hpp"
#include "run/energy.hpp"

namespace prenet {

using nlohmann::json;

namespace {

// A fine-tuning change as the option values that make it (the page applies them as they are).
json option_values(const FineTuneOption& o) {
    json values = {{"finetune", o.mode}, {"lora_rank", o.rank}};
    if (o.checkpointing) values["checkpointing"] = true;
    return values;
}


json layers_json(const std::vector<LayerTime>& layers) {
    json out = json::array();
    for (const auto& l : layers)
        out.push_back({{"name", l.name},
                       {"block", l.block},
                       {"kind", l.kind},
                       {"repeat", l.repeat},
                       {"forward_ms", l.forward_ms},
                       {"backward_ms", l.backward_ms},
                       {"total_ms", l.total_ms()},
                       {"kernels", l.kernels}});
    return out;
}

json batch_advice_json(const std::optional<BatchAdvice>& a) {
    if (!a) return nullptr;
    return {{"batch", a->batch},
            {"grad_accum", a->grad_accum},
            {"peak_bytes", a->peak_bytes},
            {"largest_fitting_batch", a->largest_fitting_batch}};
}

}  // namespace

json unknown_ops_json(const Model& m) {
    json out = json::array();
    for (const auto& [op, count] : m.unknown_ops) out.push_back({{"op", op}, {"count", count}});
    return out;
}

json model_json(const Model& m, const ModelFeatures& f) {
    json out = {{"name", m.name},
                {"domain", m.domain},
                {"params", f.params},
                {"trainable_params", f.trainable_params},
                {"forward_flops", f.forward_flops},
                {"backward_flops", f.backward_flops()},
                {"tokens_per_sample", m.tokens_per_sample},
                {"import_notes", m.notes}};
    // An imported graph's ops that map to no layer kind (costed memory-bound), when there are any.
    if (!m.unknown_ops.empty()) out["unknown_ops"] = unknown_ops_json(m);
    // A diffusion pipeline, whose frozen encoders --encoders runs or leaves out (the page shows that field for it).
    if (m.pipeline_encoders) out["pipeline_encoders"] = true;
    return out;
}

namespace {
// Keyed by precision name, in the names' order.
json matmul_by_precision_json(const std::map<Precision, double>& ms) {
    json out = json::object();
    for (const auto& [precision, value] : ms) out[to_string(precision)] = value;
    return out;
}
}  // namespace

json step_json(const StepTime& t, bool input_limited, bool breakdown) {
    json out = {{"forward_ms", t.forward_ms},
            {"backward_ms", t.backward_ms},
            {"optimizer_ms", t.optimizer_ms},
            {"communication_ms", t.communication_ms},
            {"overhead_ms", t.overhead_ms},
            {"input_stall_ms", t.input_stall_ms},
            {"total_ms", t.total_ms()},
            {"micro_batch_ms", t.micro_batch_ms},
            {"grad_accum", t.grad_accum},
            {"recompute_ms", t.recompute_ms},
            {"grad_accumulation_ms", t.grad_accumulation_ms},
            {"input_ms", input_limited ? json(t.input_ms) : json(nullptr)},
            {"input_bound", t.input_bound()},
            {"matmul_ms", t.matmul_ms},
            {"kernels", t.kernels},
            {"by_family_ms", by_family_json(t.by_family_ms)},
            {"matmul_by_precision_ms", matmul_by_precision_json(t.matmul_by_precision_ms)},
            {"layers", breakdown ? layers_json(t.layers) : json(nullptr)}};
    // Only where a sheet's clock facts or power limit are in play (docs/clocks.md), so other replies keep their form.
    if (t.clock.shown)
        out["sustained_clock"] = {{"mhz", t.clock.sustained_mhz > 0 ? json(t.clock.sustained_mhz) : json(nullptr)},
                                  {"reference_mhz", t.clock.reference_mhz > 0 ? json(t.clock.reference_mhz) : json(nullptr)},
                                  {"matrix_factor", t.clock.factor},
                                  {"basis", t.clock.basis}};
    return out;
}

json memory_json(const MemoryUse& m, json advice) {
    return {{"peak_bytes_per_device", m.peak},
            {"peak_reserved_bytes", m.peak_reserved},
            {"peak_allocated_bytes", m.peak_allocated},
            {"capacity_bytes", m.capacity},
            {"fits", m.fits()},
            {"weights_bytes", m.weights},
            {"gradients_bytes", m.gradients},
            {"optimizer_state_bytes", m.optimizer_states},
            {"activation_bytes", m.activations},
            {"temporary_bytes", m.temporary},
            {"weight_copies_bytes", m.weight_copies},
            {"frozen_weights_bytes", m.frozen_weights},
            {"adapter_weights_bytes", m.adapter_weights},
            {"dequantization_bytes", m.dequantization},
            {"framework_reserve_bytes", m.framework_reserve},
            {"layer_temporary_bytes", m.layer_temporary},
            {"loss_temporary_bytes", m.loss_temporary},
            {"gathered_bytes", m.gathered},
            {"communication_buffer_bytes", m.communication_buffers},
            {"nccl_buffer_bytes", m.nccl_buffers},
            {"optimizer_scratch_bytes", m.optimizer_scratch},
            {"peak_phase", std::string(m.peak_phase)},
            {"optimizer_states_paged", m.optimizer_paged},
            {"checkpointed_blocks", m.checkpointed_blocks},
            {"advice", std::move(advice)}};
}

json change_options(const SettingsChange& c) {
    json values = json::object();
    if (c.checkpointing) values["checkpointing"] = to_string(named_recompute(*c.checkpointing));
    if (c.loss) values["loss"] = to_string(*c.loss);
    if (c.batch) values["batch"] = *c.batch;
    if (c.grad_accum) values["grad_accum"] = *c.grad_accum;
    if (c.zero) values["zero"] = *c.zero;
    if (c.dp) values["dp"] = *c.dp;
    if (c.tp) values["tp"] = *c.tp;
    if (c.pp) values["pp"] = *c.pp;
    if (c.cp) values["cp"] = *c.cp;
    return values;
}

json change_json(const MemoryChange& c) {
    return {{"flags", c.flags},
            {"options", change_options(c.change)},
            {"peak_bytes_per_device", c.peak_bytes},
            {"peak_reserved_bytes", c.peak_reserved_bytes},
            {"step_ms", c.step_ms},
            {"step_increase", c.step_increase},
            {"largest_fitting_batch", c.largest_fitting_batch > 0 ? json(c.largest_fitting_batch) : json(nullptr)}};
}

std::string change_flags(const SettingsChange& c) {
    std::string flags;
    const json values = change_options(c);
    for (const auto& [name, value] : values.items()) {
        const OptionDef* option = find_option(name);
        flags += (flags.empty() ? "--" : " --") + (option ? option->flag : name) + " " +
                 (value.is_string() ? value.get<std::string>() : value.dump());
    }
    return flags;
}

json timeline_json(const MemoryTimeline& t) {
    json points = json::array();
    for (const auto& p : t.points) {
        const TimelineParts& x = p.parts;
        points.push_back({{"phase", p.phase},
                          {"label", p.label},
                          {"allocated_bytes", p.allocated},
                          {"reserved_bytes", p.reserved},
                          {"device_bytes", p.device},
                          {"parts",
                           {{"weights", x.weights},
                            {"gradients", x.gradients},
                            {"optimizer_states", x.optimizer_states},
                            {"activations", x.activations},
                            {"buffers", x.buffers},
                            {"logits", x.logits},
                            {"workspace", x.workspace},
                            {"allocator", x.allocator},
                            {"outside", x.outside}}}});
    }
    return {{"peak_point", t.peak_point}, {"points", std::move(points)}};
}

json advice_json(const MemoryAdvice& a) {
    json ckpt = nullptr;
    if (a.checkpointing)
        ckpt = {{"peak_bytes", a.checkpointing->peak_bytes},
                {"fits", a.checkpointing->fits},
                {"micro_batch", batch_advice_json(a.checkpointing->micro_batch)}};
    json hw = nullptr;
    if (a.smallest_hardware)
        hw = {{"id", a.smallest_hardware->hardware.id},
              {"capacity_bytes", a.smallest_hardware->hardware.memory_bytes()},
              {"price_per_hour", a.smallest_hardware->hardware.price_per_hour()},
              {"batch", a.smallest_hardware->batch},
              {"grad_accum", a.smallest_hardware->grad_accum},
              {"checkpointing", a.smallest_hardware->checkpointing},
              {"peak_bytes", a.smallest_hardware->peak_bytes}};
    json finetune = nullptr;
    if (a.finetune)
        finetune = {{"setting", a.finetune->option.words},
                    {"flags", a.finetune->option.flags},
                    {"options", option_values(a.finetune->option)},
                    {"peak_bytes", a.finetune->option.peak_bytes},
                    {"fits", a.finetune->fits},
                    {"hardware", a.finetune->hardware ? json(a.finetune->hardware->id) : json(nullptr)}};
    json changes = json::array();
    for (const auto& c : a.changes) changes.push_back(change_json(c));
    return {{"over_bytes", a.over_bytes},
            {"micro_batch", batch_advice_json(a.micro_batch)},
            {"checkpointing", ckpt},
            {"smallest_hardware", hw},
            {"fsdp_devices", a.fsdp_devices ? json(*a.fsdp_devices) : json(nullptr)},
            {"finetune", finetune},
            {"changes", changes},
            {"summary", a.summary}};
}

json run_json(const RunEstimate& e, const StepTime& t) {
    return {{"steps", e.steps.steps},
            {"samples", e.steps.samples},
            {"tokens", e.steps.tokens > 0 ? json(e.steps.tokens) : json(nullptr)},
            {"hours", e.hours},
            {"gpu_hours", e.gpu_hours},
            {"price_per_hour_used", e.price_known ? json(e.price_per_hour) : json(nullptr)},
            {"cost_usd", e.price_known ? json(e.cost_usd) : json(nullptr)},
            {"power_share_of_tdp", power_share(t)},
            {"average_power_w", e.has_energy() ? json(e.average_power_w) : json(nullptr)},
            {"energy_kwh", e.has_energy() ? json(e.energy_kwh) : json(nullptr)}};
}

json uncertainty_json(const KernelPredictor& predictor, const StepTime& t, const HardwareSpec& hw) {
    std::optional<double> relative = predictor.relative_uncertainty(t.by_family_ms, hw);
    if (!relative) return nullptr;
    double r = *relative;
    return {{"low_ms", t.total_ms() / (1.0 + r)}, {"high_ms", t.total_ms() * (1.0 + r)}, {"relative", r}};
}

}  // namespace prenet
