#include "api/kernels_command.hpp"

#include <cstdio>
#include <memory>
#include <sstream>
#include <vector>

#include "api/settings.hpp"
#include "calibration/calibration.hpp"
#include "core/csv.hpp"
#include "core/error.hpp"
#include "hardware/spec.hpp"
#include "parallel/collective_rows.hpp"
#include "parallel/collectives.hpp"
#include "predict/op_rows.hpp"
#include "predict/predictor.hpp"

namespace prenet {
namespace {

HardwareSpec one_accelerator(const nlohmann::json& hardware, const std::string& origin) {
    if (hardware.is_object()) return parse_hardware(hardware, origin);
    if (hardware.is_array() && hardware.size() == 1) return find_hardware(hardware[0].get<std::string>());
    throw Error("--hardware must name one accelerator (an id or a spec file)");
}

}  // namespace

std::string kernel_predictions_csv(const KernelsRequest& request) {
    HardwareSpec hw = one_accelerator(request.hardware, request.hardware_origin);
    std::unique_ptr<KernelPredictor> predictor =
        make_predictor(request.predictor.value_or(default_predictor_name()), request.kernel_models);
    if (!request.calibration.is_null()) {
        auto calibration = read_calibration(request.calibration, predictor->name(), request.kernel_models);
        predictor = std::make_unique<CalibratedPredictor>(std::move(predictor), calibration);
    }
    const std::string& csv = request.csv_path;
    CsvTable table = read_csv_file(csv);
    std::vector<Kernel> kernels = kernels_from_table(table, request.precision, csv, is_collective_row_op, &hw);
    int op_col = table.column("op");
    std::vector<double> predicted(table.rows.size());
    for (size_t r = 0; r < table.rows.size(); ++r) {
        if (is_collective_row_op(table.rows[r][op_col])) {
            CollectiveRow c = collective_row_of(table, r, hw, csv + " row " + std::to_string(r + 2));
            predicted[r] = CollectiveModel::shipped().time_ms(c.op, c.message_bytes, c.group, c.cluster) *
                           predictor->communication_factor(hw);
        } else {
            predicted[r] = predictor->kernel_ms(kernels[r], hw);
        }
    }
    std::ostringstream out;
    for (size_t i = 0; i < table.header.size(); ++i) out << (i ? "," : "") << csv_field(table.header[i]);
    out << ",matmul_precision_used,predicted_ms\n";
    char buf[32];
    for (size_t r = 0; r < table.rows.size(); ++r) {
        for (size_t i = 0; i < table.rows[r].size(); ++i) out << (i ? "," : "") << csv_field(table.rows[r][i]);
        std::snprintf(buf, sizeof buf, "%.6g", predicted[r]);
        bool matrix = !is_collective_row_op(table.rows[r][op_col]) && uses_matrix_units(kernels[r].family);
        out << "," << (matrix ? to_string(kernels[r].precision) : "") << "," << buf << "\n";
    }
    return out.str();
}

}  // namespace prenet
