#pragma once
// Accelerator spec sheets (hardware/<id>.json, schema in hardware/README.md): datasheet facts only.
// A user may describe their own accelerator in the same schema; plain numbers are accepted in place of
// {"value", "source"} objects there.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/precision.hpp"

namespace prenet {

struct CloudPrice {
    double usd_per_hour = 0;
    std::string provider, date;
};

struct HardwareSpec {
    std::string id, name, vendor, kind, architecture;
    std::map<std::string, double> peak_tflops;  // dense peaks present on the sheet (fp32, tf32, fp16, bf16, fp8, ...)
    double memory_gb = 0, bandwidth_gbps = 0, l2_cache_mb = 0;
    double compute_units = 0, cores_per_unit = 0, boost_clock_mhz = 0;
    double tdp_w = 0, intra_node_gbps = 0, inter_node_gbps = 0;
    std::vector<CloudPrice> cloud_prices;
    std::string launch_date;

    // Dense matrix-unit FLOP/s used for matmuls at `p`, falling back to the nearest slower supported mode
    // (e.g. bf16 on a V100 runs at its fp32 rate). `used` receives the peak's key.
    double matmul_flops(Precision p, std::string* used = nullptr) const;
    double vector_flops() const;           // plain fp32 FLOP/s, for elementwise work
    double emulated_fp32_flops(std::string* used) const;
    double bandwidth_bytes_per_s() const;  // memory bandwidth in bytes/s
    double memory_bytes() const;
    // The cheapest on-demand cloud price on the sheet, 0 if none.
    double price_per_hour() const;
};

// Parses and validates a spec sheet; `origin` names it in errors.
HardwareSpec parse_hardware(const nlohmann::json& sheet, const std::string& origin);

// The built-in catalogue (compiled in from hardware/*.json), sorted by id.
const std::vector<HardwareSpec>& hardware_catalogue();
const HardwareSpec& find_hardware(const std::string& id);  // throws Error listing ids
nlohmann::json to_json(const HardwareSpec& spec);

}  // namespace prenet
