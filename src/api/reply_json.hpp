#pragma once
// The JSON forms of the core's results, as the reply documents carry them (README: the CLI contract).
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "graph/model.hpp"
#include "ops/features.hpp"
#include "predict/predictor.hpp"
#include "run/memory.hpp"
#include "run/memory_advice.hpp"
#include "run/memory_timeline.hpp"
#include "run/run_estimate.hpp"
#include "run/step.hpp"

namespace prenet {

nlohmann::json model_json(const Model& m, const ModelFeatures& f);
// [{"op", "count"}] for an imported graph's ops without a layer kind (Model::unknown_ops).
nlohmann::json unknown_ops_json(const Model& m);
nlohmann::json step_json(const StepTime& t, bool input_limited, bool breakdown);
nlohmann::json memory_json(const MemoryUse& m, nlohmann::json advice);
nlohmann::json advice_json(const MemoryAdvice& a);
// A memory-advice change as the option table's values (the page applies them as they are), and as the CLI
// flags those values are (written from them, so both name the same change).
nlohmann::json change_options(const SettingsChange& change);
std::string change_flags(const SettingsChange& change);
// {flags, options, peak_reserved_bytes, step_ms, step_increase}
nlohmann::json change_json(const MemoryChange& change);
// `memory.timeline`: {"peak_point", "points": [{"phase", "label", "allocated_bytes", "reserved_bytes",
// "device_bytes", "parts": {...}}]} (README); replies with `breakdown` carry it.
nlohmann::json timeline_json(const MemoryTimeline& t);
nlohmann::json run_json(const RunEstimate& e, const StepTime& t);
// The range a learned prediction carries (docs/accuracy.md explains it); null for the roofline.
nlohmann::json uncertainty_json(const KernelPredictor& predictor, const StepTime& t, const HardwareSpec& hw);

}  // namespace prenet
