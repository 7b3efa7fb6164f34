#include "hardware/clocks.hpp"

#include <algorithm>
#include <cmath>

namespace prenet {
namespace {

std::string mhz(double x) { return std::to_string(std::lround(x)) + " MHz"; }
std::string watts(double x) { return std::to_string(std::lround(x)) + " W"; }

}  // namespace

double power_limited_clock_mhz(double clock_at_tdp_mhz, double base_mhz, double tdp_w, double limit_w) {
    if (!(limit_w > 0) || !(tdp_w > 0) || limit_w >= tdp_w) return clock_at_tdp_mhz;
    double cube_root = clock_at_tdp_mhz * std::cbrt(limit_w / tdp_w);
    if (base_mhz <= 0 || base_mhz >= clock_at_tdp_mhz || cube_root >= base_mhz) return cube_root;
    // The power the base clock draws on the cube law, then linear in f below it.
    double base_power_w = tdp_w * std::pow(base_mhz / clock_at_tdp_mhz, 3.0);
    return base_mhz * limit_w / base_power_w;
}

SustainedClock sustained_matrix_clock(const HardwareSpec& hw) {
    SustainedClock c;
    c.reference_mhz = hw.matrix_peak_clock_mhz > 0 ? hw.matrix_peak_clock_mhz : hw.clock_mhz();
    bool asks_limit = hw.power_limit_w > 0;
    c.shown = asks_limit || hw.sustained_matrix_clock_mhz > 0;
    if (c.reference_mhz <= 0) {
        c.basis = "no clock on the sheet (boost, or the one its peaks are quoted at): matrix-unit time unchanged";
        return c;
    }
    // Without a published sustained clock the kernel data stand for the reference clock at the TDP (the fitted
    // microbenchmarks ran at the vendor's power limit), so at the TDP nothing changes.
    double at_tdp = hw.sustained_matrix_clock_mhz > 0 ? std::min(hw.sustained_matrix_clock_mhz, c.reference_mhz)
                                                      : c.reference_mhz;
    c.basis = hw.sustained_matrix_clock_mhz > 0 ? "published sustained clock " + mhz(at_tdp)
                                                : "no published sustained clock: the peaks' " + mhz(at_tdp) + " at TDP";
    c.sustained_mhz = at_tdp;
    if (asks_limit) {
        if (hw.tdp_w <= 0) {
            c.basis += "; power.limit_w ignored: the sheet has no TDP";
        } else if (hw.power_limit_w >= hw.tdp_w) {
            c.basis += "; power.limit_w " + watts(hw.power_limit_w) + " at or above the TDP " + watts(hw.tdp_w) +
                       " changes nothing";
        } else {
            c.sustained_mhz = power_limited_clock_mhz(at_tdp, hw.base_clock_mhz, hw.tdp_w, hw.power_limit_w);
            c.basis += "; power limit " + watts(hw.power_limit_w) + " of TDP " + watts(hw.tdp_w) + " gives " +
                       mhz(c.sustained_mhz);
        }
    }
    c.factor = c.sustained_mhz / c.reference_mhz;
    return c;
}

}  // namespace prenet
