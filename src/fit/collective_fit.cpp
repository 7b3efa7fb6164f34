#include "fit/collective_fit.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include <Eigen/Dense>

#include "core/csv.hpp"
#include "core/error.hpp"
#include "hardware/spec.hpp"
#include "parallel/collective_rows.hpp"
#include "parallel/topology.hpp"
#include "predict/op_rows.hpp"

namespace prenet {
namespace {

// Held back for an independent check of the project (data/README.md): never fitted, never read here. H100 rows
// are fitted since the shared data gained them (2026-12-01); the other Hopper parts' are still held back.
bool held_back(const std::string& device) {
    for (const char* p : {"h200", "h800"})
        if (device.rfind(p, 0) == 0) return true;
    return false;
}

CollectiveRow row_of(const CollectiveSample& s) {
    return collective_row(s.op, s.message_bytes, s.gpus, std::nullopt, std::nullopt, find_hardware(s.device));
}

// One sample's regressors: time = base_us f0 + latency_us f1 + (1 / efficiency) f2 + pipeline f3, all in ms.
struct Design {
    LinkKind kind;
    Collective op;
    double f[4];
    double t;
};

std::vector<Design> designs(const std::vector<CollectiveSample>& samples) {
    std::vector<Design> out;
    for (const auto& s : samples) {
        CollectiveRow r = row_of(s);
        GroupSpan span = group_span(r.group, r.cluster);
        if (span.domains != 1) continue;  // the fit reads one domain's link only
        // The terms time_ms uses inside one domain, as the domain is wired (parallel/topology.hpp).
        PhaseTerms p = inside_phase_terms(r.op, r.message_bytes, r.group.size, r.group, r.cluster);
        out.push_back({r.cluster.scale_up.kind, r.op, {1e-3, p.latency, p.transfer, p.pipeline}, s.measured_ms});
    }
    return out;
}

// Least squares of the relative error (each row divided by its measured time), the coefficients >= 0: every
// subset of the free terms (1/efficiency always in) is solved and the best non-negative solution kept.
LinkFit fit_designs(const std::vector<const Design*>& rows) {
    LinkFit best;
    double best_sse = INFINITY;
    for (int mask = 0; mask < 8; ++mask) {
        std::vector<int> cols = {2};
        if (mask & 1) cols.push_back(0);
        if (mask & 2) cols.push_back(1);
        if (mask & 4) cols.push_back(3);
        Eigen::MatrixXd a(rows.size(), cols.size());
        Eigen::VectorXd b = Eigen::VectorXd::Ones(rows.size());
        for (size_t i = 0; i < rows.size(); ++i)
            for (size_t j = 0; j < cols.size(); ++j) a(i, j) = rows[i]->f[cols[j]] / rows[i]->t;
        Eigen::VectorXd x = a.colPivHouseholderQr().solve(b);
        if ((x.array() < 0).any() || !(x(0) > 0)) continue;
        double sse = (a * x - b).squaredNorm();
        if (sse < best_sse) {
            best_sse = sse;
            double coef[4] = {0, 0, 0, 0};
            for (size_t j = 0; j < cols.size(); ++j) coef[cols[j]] = x(j);
            best.base_us = coef[0];
            best.latency_us = coef[1];
            best.efficiency = 1.0 / coef[2];
            best.pipeline = coef[3];
            best.fitted = true;
        }
    }
    if (!best.fitted) throw Error("collective fit: no non-negative solution");
    return best;
}

double median(std::vector<double> v) {
    if (v.empty()) return NAN;
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::string pct(double x) {
    if (std::isnan(x)) return "-";
    std::ostringstream o;
    o << std::fixed << std::setprecision(x < 0.1 ? 1 : 0) << 100 * x << "%";
    return o.str();
}

// Four parameters from fewer rows than a size sweep (NCCL's 21 sizes) would follow noise.
constexpr size_t kMinRowsPerFit = 20;

const char* kOps[] = {"all_reduce", "all_gather", "reduce_scatter", "all_to_all"};

// Per device and op, the APEs of `rows` predicted by a model fitted without that device.
using Errors = std::map<std::string, std::map<std::string, std::vector<double>>>;

}  // namespace

std::vector<CollectiveSample> load_collective_samples(const std::string& csv_path) {
    CsvTable t = read_csv_file(csv_path);
    int src = t.column("source"), dev = t.column("device"), op = t.column("op"), gpus = t.column("gpus"),
        size = t.column("message_size"), ms = t.column("latency_ms");
    if (dev < 0 || op < 0 || gpus < 0 || size < 0 || ms < 0)
        throw Error(csv_path + ": needs columns device, op, gpus, message_size, latency_ms");
    std::vector<CollectiveSample> out;
    for (size_t r = 0; r < t.rows.size(); ++r) {
        const auto& row = t.rows[r];
        if (held_back(row[dev])) continue;
        std::string where = csv_path + " row " + std::to_string(r + 2);
        CollectiveSample s;
        s.source = src >= 0 ? row[src] : "";
        s.device = row[dev];
        s.op = row[op];
        s.gpus = std::int64_t(parse_number(row[gpus], where));
        s.message_bytes = parse_number(row[size], where);
        s.measured_ms = parse_number(row[ms], where);
        if (s.measured_ms > 0 && s.gpus > 1) out.push_back(std::move(s));
    }
    return out;
}

double predict_sample(const CollectiveModel& model, const CollectiveSample& s) {
    CollectiveRow r = row_of(s);
    return model.time_ms(r.op, r.message_bytes, r.group, r.cluster);
}

std::vector<int> message_size_halves(const std::vector<CollectiveSample>& samples, const std::string& device) {
    std::set<double> sizes;
    for (const auto& s : samples)
        if (s.device == device) sizes.insert(s.message_bytes);
    std::map<double, int> half;
    int i = 0;
    for (double b : sizes) half[b] = i++ % 2;
    std::vector<int> out;
    for (const auto& s : samples) out.push_back(s.device == device ? half[s.message_bytes] : -1);
    return out;
}

CollectiveModel fit_collective_model(const std::vector<CollectiveSample>& samples) {
    std::vector<Design> all = designs(samples);
    if (all.empty()) throw Error("collective fit: no samples");
    CollectiveModel m;
    std::vector<const Design*> pooled;
    std::map<LinkKind, std::vector<const Design*>> by_kind;
    std::map<LinkKind, std::map<Collective, std::vector<const Design*>>> by_kind_op;
    std::map<Collective, std::vector<const Design*>> by_op;
    for (const auto& d : all) {
        pooled.push_back(&d);
        by_kind[d.kind].push_back(&d);
        by_kind_op[d.kind][d.op].push_back(&d);
        by_op[d.op].push_back(&d);
    }
    // Not fitted on the kind they stand in for.
    auto unfitted = [](LinkFit f) {
        f.fitted = false;
        return f;
    };
    m.fallback = unfitted(fit_designs(pooled));
    for (const auto& [op, rows] : by_op)
        if (rows.size() >= kMinRowsPerFit) m.fallback_by_op[op] = unfitted(fit_designs(rows));
    for (const auto& [kind, rows] : by_kind) m.links[kind] = fit_designs(rows);
    for (const auto& [kind, ops] : by_kind_op)
        for (const auto& [op, rows] : ops)
            if (rows.size() >= kMinRowsPerFit) m.by_op[kind][op] = fit_designs(rows);
    return m;
}

CollectiveFitReport fit_collectives(const std::string& data_dir, bool verbose) {
    CollectiveFitReport rep;
    const std::string nccl = data_dir + "/collectives/nccl.csv", xla = data_dir + "/collectives/xla.csv";
    std::vector<CollectiveSample> fitting = load_collective_samples(nccl), check;
    rep.files.push_back(nccl);
    if (std::filesystem::exists(xla)) {
        rep.files.push_back(xla);
        for (auto& s : load_collective_samples(xla)) {
            if (find_hardware(s.device).scale_up_link == "infinity_fabric") fitting.push_back(std::move(s));
            else check.push_back(std::move(s));
        }
    }
    rep.model = fit_collective_model(fitting);
    std::set<std::string> devices;
    for (const auto& s : fitting) devices.insert(s.device);
    std::set<std::string> check_devices;
    for (const auto& s : check) check_devices.insert(s.device);

    // Leave one accelerator out: each device's rows (fitting and check) predicted by a model fitted without it.
    std::map<std::string, CollectiveModel> without;
    auto model_without = [&](const std::string& device) -> const CollectiveModel& {
        auto it = without.find(device);
        if (it != without.end()) return it->second;
        std::vector<CollectiveSample> train;
        for (const auto& s : fitting)
            if (s.device != device) train.push_back(s);
        return without.emplace(device, fit_collective_model(train)).first->second;
    };
    auto errors_of = [&](const std::vector<CollectiveSample>& rows) {
        Errors e;
        for (const auto& s : rows) {
            double p = predict_sample(model_without(s.device), s);
            double ape = std::abs(p - s.measured_ms) / s.measured_ms;
            e[s.device][s.op].push_back(ape);
            e[s.device]["all"].push_back(ape);
            e["(all devices)"][s.op].push_back(ape);
            e["(all devices)"]["all"].push_back(ape);
        }
        return e;
    };
    Errors loao = errors_of(fitting), xla_check = errors_of(check);

    // The same leave-one-out errors by message size: small messages pay the base cost and the step latencies,
    // large ones the link's bandwidth (which of the two a left-out device's error comes from).
    const char* kBands[] = {"<= 1 MiB", "1-16 MiB", "> 16 MiB"};
    auto band_of = [](double bytes) { return bytes <= 1048576.0 ? 0 : bytes <= 16777216.0 ? 1 : 2; };
    std::map<std::string, std::vector<double>[3]> by_size;
    auto add_sizes = [&](std::map<std::string, std::vector<double>[3]>& into, const std::string& device,
                         const CollectiveModel& m, const CollectiveSample& s) {
        double ape = std::abs(predict_sample(m, s) - s.measured_ms) / s.measured_ms;
        into[device][band_of(s.message_bytes)].push_back(ape);
    };
    for (const auto& s : fitting) add_sizes(by_size, s.device, model_without(s.device), s);
    // A device whose link kind no other device measured is predicted by the pooled fit: the same rows with only
    // the base cost per collective taken from the device's own fit (rep.model) show how much of its error is that
    // one number. A diagnostic, not a leave-one-out figure: it reads the device's own rows.
    auto kind_of = [](const std::string& device) {
        return link_kind_from_string(find_hardware(device).scale_up_link).value_or(LinkKind::pcie);
    };
    std::map<LinkKind, std::set<std::string>> devices_of_kind;
    for (const auto& s : fitting) devices_of_kind[kind_of(s.device)].insert(s.device);
    std::map<std::string, std::vector<double>[3]> own_base;
    std::map<std::string, std::vector<double>> own_base_all;
    for (const auto& s : fitting) {
        LinkKind kind = kind_of(s.device);
        if (devices_of_kind[kind].size() != 1) continue;
        CollectiveModel m = model_without(s.device);
        for (Collective op : {Collective::all_reduce, Collective::all_gather, Collective::reduce_scatter,
                              Collective::all_to_all, Collective::send_recv}) {
            LinkFit f = m.fit(kind, op);
            f.base_us = rep.model.fit(kind, op).base_us;
            m.by_op[kind][op] = f;
        }
        add_sizes(own_base, s.device, m, s);
        own_base_all[s.device].push_back(std::abs(predict_sample(m, s) - s.measured_ms) / s.measured_ms);
    }
    // A device alone on its link kind cannot be left out of that kind's fit (nothing would be left to fit it on),
    // so its rows are also scored held out by message size: the device's distinct message sizes in order, every
    // second one held out; the model is fitted on the other half of its rows with every other device's, and the
    // held-out half predicted, then the halves swap. No row is scored by a fit that read it; the device is seen.
    Errors halves;
    std::map<std::string, std::vector<double>[3]> halves_by_size;
    for (const auto& [kind, devs] : devices_of_kind) {
        if (devs.size() != 1) continue;
        const std::string& device = *devs.begin();
        std::vector<int> half = message_size_halves(fitting, device);
        for (int held : {0, 1}) {
            std::vector<CollectiveSample> train;
            for (size_t i = 0; i < fitting.size(); ++i)
                if (half[i] != held) train.push_back(fitting[i]);
            CollectiveModel m = fit_collective_model(train);
            for (size_t i = 0; i < fitting.size(); ++i) {
                if (half[i] != held) continue;
                const CollectiveSample& s = fitting[i];
                double ape = std::abs(predict_sample(m, s) - s.measured_ms) / s.measured_ms;
                halves[device][s.op].push_back(ape);
                halves[device]["all"].push_back(ape);
                add_sizes(halves_by_size, device, m, s);
            }
        }
    }
    if (verbose)
        std::cerr << "collectives: " << fitting.size() << " fitting rows on " << devices.size() << " devices, "
                  << check.size() << " check rows\n";

    auto table = [&](const Errors& e, const std::set<std::string>& devs) {
        std::ostringstream t;
        t << "| device | link | all_reduce | all_gather | reduce_scatter | all_to_all | all ops |\n"
             "|---|---|---|---|---|---|---|\n";
        std::vector<std::string> order(devs.begin(), devs.end());
        order.push_back("(all devices)");
        for (const auto& d : order) {
            if (!e.count(d)) continue;
            const auto& by_op = e.at(d);
            t << "| " << d << " | " << (d[0] == '(' ? "" : find_hardware(d).scale_up_link);
            for (const char* op : kOps) {
                auto it = by_op.find(op);
                t << " | " << (it == by_op.end() ? "-" : pct(median(it->second)) + " (" +
                                                              std::to_string(it->second.size()) + ")");
            }
            t << " | " << pct(median(by_op.at("all"))) << " |\n";
        }
        return t.str();
    };

    std::ostringstream md;
    md << "\n## Collectives\n\n"
       << "The collective model (`src/parallel/collectives.cpp`, formulas in `docs/parallel.md`) fitted per link kind "
          "on measured collectives (`data/collectives/`): " << fitting.size() << " rows on " << devices.size()
       << " accelerators (NCCL inside one node from NVIDIA's aiconfigurator; MI300X from XLA's tables, the only "
          "Infinity Fabric data). H200 and H800 rows are held back and never read. Every number is **leave one "
          "accelerator out**: each device's rows are predicted by the model fitted without that device (where no "
          "other device shares its link kind, by the fit pooled over every other device). Median APE (rows):\n\n"
       << table(loao, devices)
       << "\nThe same errors by message size (median APE, rows): up to 1 MiB a collective's time is mostly its base "
          "cost and step latencies, above 16 MiB mostly the link's bandwidth.\n\n"
       << "| device | " << kBands[0] << " | " << kBands[1] << " | " << kBands[2] << " |\n|---|---|---|---|\n";
    for (const auto& [device, bands] : by_size) {
        md << "| " << device;
        for (const auto& b : bands) md << " | " << pct(median(b)) << " (" << b.size() << ")";
        md << " |\n";
    }
    for (const auto& [device, bands] : own_base) {
        LinkKind kind = kind_of(device);
        // The base cost per collective (the four measured ones) a model gives `kind`: "lo-hi us".
        auto base_range = [&](const CollectiveModel& m) {
            double lo = INFINITY, hi = 0;
            for (Collective op : {Collective::all_reduce, Collective::all_gather, Collective::reduce_scatter,
                                  Collective::all_to_all}) {
                lo = std::min(lo, m.fit(kind, op).base_us);
                hi = std::max(hi, m.fit(kind, op).base_us);
            }
            std::ostringstream o;
            o << std::fixed << std::setprecision(0) << lo << "-" << hi << " us";
            return o.str();
        };
        md << "\n" << device << " is the only device on its link kind, so it is predicted by the fits pooled over "
           << "the others, whose base cost per collective is NCCL's, " << base_range(model_without(device))
           << ", where its own fit has " << base_range(rep.model)
           << ". With only the base taken from its own fit (a diagnostic that reads its own rows, not a "
              "leave-one-out figure) its median APE is " << pct(median(own_base_all[device])) << " (";
        for (int i = 0; i < 3; ++i) md << (i ? ", " : "") << kBands[i] << ": " << pct(median(bands[i]));
        md << ").\n";
    }
    for (const auto& [device, e] : halves) {
        md << "\n" << device << " held out by message size (no other device shares its link kind, so no leave-one-out "
              "fit of that kind exists: its distinct message sizes in order, every second one held out, the model fitted "
              "on the other half of its rows with every other device's, then the halves swapped; no row is scored by a "
              "fit that read it, but the device itself is seen): median APE";
        for (const char* op : kOps) {
            auto it = e.find(op);
            if (it != e.end()) md << " " << op << " " << pct(median(it->second)) << " (" << it->second.size() << "),";
        }
        md << " all ops " << pct(median(e.at("all"))) << " (";
        for (int i = 0; i < 3; ++i) md << (i ? ", " : "") << kBands[i] << ": " << pct(median(halves_by_size[device][i]));
        md << ").\n";
    }
    md
       << "\nXLA's NVLink collective tables (B200 8-GPU node, GB200 and GB300 NVL72 groups of 2-72) are timed "
          "another way (XLA's B200 8-GPU all-reduce runs ~1.6x faster than NCCL's here; its collectives up to 256 KiB "
          "take 25-50 us where NCCL's B200 rows take 10-27 us), so they are not fitted; they are predicted here by "
          "the model fitted without the device, as a check of the larger NVL72 groups. Their reduce-scatter rows are "
          "the input each device holds (devices x the table's `bytes`, the scattered output), the bytes XLA's "
          "throughput is counted on (tools/prepare_collectives.py):\n\n"
       << table(xla_check, check_devices)
       << "\nThe shipped fit (`models/collectives.json`), on all fitting rows: per phase, steps x latency + bus bytes / "
          "(efficiency x one-direction link bandwidth) + pipeline x sqrt(steps x 1 us x transfer), plus a base cost "
          "per collective (docs/parallel.md):\n\n"
       << "| link kind | efficiency | latency per step (us) | base (us) | pipeline | fitted on |\n|---|---|---|---|---|---|\n";
    auto fit_row = [&](const std::string& name, const LinkFit& f, const std::string& on) {
        md << "| " << name << " | " << std::fixed << std::setprecision(3) << f.efficiency << " | "
           << std::setprecision(2) << f.latency_us << " | " << f.base_us << " | " << f.pipeline << " | " << on << " |\n";
    };
    for (const auto& [kind, f] : rep.model.links) {
        fit_row(std::string(to_string(kind)) + " (send_recv, any other)", f, "its own measurements");
        if (rep.model.by_op.count(kind))
            for (const auto& [op, fo] : rep.model.by_op.at(kind))
                fit_row(std::string(to_string(kind)) + " " + to_string(op), fo, "its own measurements of " + std::string(to_string(op)));
    }
    fit_row("every other kind (infiniband, roce, ethernet, ici, ...)", rep.model.fallback,
            "all measurements pooled: no measured collectives cross a node here, so scale-out links are not fitted");
    for (const auto& [op, fo] : rep.model.fallback_by_op)
        fit_row(std::string("every other kind, ") + to_string(op), fo, "all measurements of " + std::string(to_string(op)) + " pooled");
    md.unsetf(std::ios::fixed);
    md << "\nNot used: DeepBench's all-reduce table (`../shared/data/deepbench/allreduce.csv`) times 2017-era PCIe "
          "GPUs (M40, TITAN X, P100, 1080 Ti) on 1-4 nodes, but does not say what network joined the nodes; without "
          "the link's bandwidth its rows cannot fit an efficiency.\n";
    rep.markdown = md.str();
    return rep;
}

}  // namespace prenet
