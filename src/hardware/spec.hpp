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

// The plausible range of any bandwidth in GB/s, memory or link, a sheet's or a user's network (docs/limits.md).
// The maximum, 10^14 B/s, is some 10x past the fastest HBM and scale-up fabrics shipping; the minimum, 10^6 B/s
// (8 Mb/s), is below any accelerator's memory or any datacentre NIC. Outside it is a typo or hostile: 8 NICs of
// 10^-31 Gb/s gave a step of 9.7e35 ms (issue #27).
inline constexpr double kMinPlausibleGBps = 1e-3;
inline constexpr double kPlausibleGBps = 1e5;

struct CloudPrice {
    double usd_per_hour = 0;
    std::string provider, date;
};

struct HardwareSpec {
    std::string id, name, vendor, kind, architecture;
    // Dense peaks present on the sheet (fp32, tf32, fp16, bf16, fp8, ...). fp32 is the vector rate; fp32_matrix and
    // fp64_matrix, where a datasheet gives them (AMD CDNA's MFMA), the matrix-unit rates.
    std::map<std::string, double> peak_tflops;
    double memory_gb = 0, bandwidth_gbps = 0, l2_cache_mb = 0;
    bool inline_ecc = false;  // ECC check bits stored in the memory itself (GDDR with ECC on): 1/16 of it
    double compute_units = 0, cores_per_unit = 0, base_clock_mhz = 0, boost_clock_mhz = 0;  // 0 = not published
    // The clock the matrix-unit peaks are quoted at, where the vendor's arithmetic shows it differs from the boost
    // clock (H100 SXM: 1,830 MHz against 1,980), and a published sustained clock under matrix load; 0 = not
    // published (hardware/clocks.hpp uses the boost clock, and the peaks' clock at TDP, instead).
    double matrix_peak_clock_mhz = 0, sustained_matrix_clock_mhz = 0;
    double tdp_w = 0;
    // A power limit the host sets below the TDP (`power.limit_w`, user sheets: hosts that cap H100s at 500 W);
    // 0 = none. It lowers the sustained matrix clock (hardware/clocks.hpp), never the sheet's peaks.
    double power_limit_w = 0;
    // interconnect (hardware/README.md). intra_node_gbps is both directions added, as vendors quote it; 0 = not
    // published. The sheet's scale-out network is per node; inter_node_gbps is its share per device, one
    // direction (0 when the sheet names no network).
    double intra_node_gbps = 0, inter_node_gbps = 0;
    std::string scale_up_link = "pcie";  // nvlink | infinity_fabric | ici | neuronlink | pcie | roce
    std::int64_t scale_up_domain = 0;    // devices one scale-up fabric joins; 0 = set by the server (the node)
    std::int64_t gpus_per_node = 0;      // the usual node; 0 = set by the server
    std::string scale_out_network;       // "8x400g-ib" (the reference node's NICs); empty = set by the server
    // How the scale-up links join the devices (docs/parallel.md, "Topologies"): a switch gives each device its whole
    // bandwidth to any peer; a full mesh gives it one link per peer; a torus links each device to its neighbours
    // in `torus_dims` dimensions, closed rings where `torus_wraparound`. links_per_device: 0 = not published.
    enum class Topology { switched, full_mesh, torus };
    Topology topology = Topology::switched;
    std::int64_t links_per_device = 0;
    int torus_dims = 0;
    bool torus_wraparound = false;
    // One scale-up link's GB/s in one direction (full mesh and torus): the sheet's total over its links.
    double link_gbps_one_way() const {
        return links_per_device > 0 ? scale_up_gbps_one_way() / double(links_per_device) : 0;
    }
    std::vector<CloudPrice> cloud_prices;
    // The sheet's citations, key -> citation with its URL (hardware/README.md): what the page shows as sources.
    std::map<std::string, std::string> sources;
    std::string launch_date;

    // Dense FLOP/s of matrix-unit kernels (GEMM, convolution, attention, RNN) at `p`, or at the precision `p` runs
    // as on this device where it has no units for `p` (precision_support, hardware/precision_support.hpp): bf16
    // on a V100 runs at its fp32 rate. fp32 runs on the matrix units where the sheet gives fp32_matrix (CDNA
    // MFMA), else at the vector rate. `used` receives the peak's key.
    double matmul_flops(Precision p, std::string* used = nullptr) const;
    // Whether the sheet publishes a peak for `key` (a precision with no peak has no units).
    bool has_peak(const std::string& key) const { return peak_tflops.count(key) > 0; }
    // The core clock the sheet's peaks are quoted at: the published boost clock, or, where the vendor publishes
    // none (NVIDIA's Blackwell data-centre parts), the one the FP32 vector peak implies (peak / (2 FLOPs x units x
    // lanes per unit)), which reproduces every published boost clock it can be checked against; 0 if unknown.
    double clock_mhz() const;
    double vector_flops() const;           // plain fp32 vector FLOP/s, for elementwise work
    double emulated_fp32_flops(std::string* used) const;
    double bandwidth_bytes_per_s() const;  // memory bandwidth in bytes/s
    // GB/s per device over the scale-up link in one direction: half the both-directions figure vendors quote
    // (the one place that halving is done).
    double scale_up_gbps_one_way() const { return intra_node_gbps / 2; }
    double memory_bytes() const;
    // The cheapest on-demand cloud price on the sheet, 0 if none.
    double price_per_hour() const;
};

const char* to_string(HardwareSpec::Topology t);

// Parses and validates a spec sheet; `origin` names it in errors.
HardwareSpec parse_hardware(const nlohmann::json& sheet, const std::string& origin);

// The built-in catalogue (compiled in from hardware/*.json), sorted by id.
const std::vector<HardwareSpec>& hardware_catalogue();
const HardwareSpec& find_hardware(const std::string& id);  // throws Error listing ids
nlohmann::json to_json(const HardwareSpec& spec);

}  // namespace prenet
