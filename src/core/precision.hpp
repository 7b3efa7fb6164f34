#pragma once
// Training precisions and the byte sizes they imply. "tf32" keeps fp32 storage and runs matmuls on TF32
// tensor cores; "fp8" runs matmuls on fp8 inputs and keeps bf16 everywhere else (the usual FP8 recipe).
#include <string>

namespace prenet {

enum class Precision { fp32, tf32, fp16, bf16, fp8 };

Precision parse_precision(const std::string& name);
const char* to_string(Precision p);

// Bytes of one activation / gradient element outside matmul inputs.
double activation_bytes(Precision p);
// Bytes of one matmul/conv input element as the kernel reads it.
double matmul_input_bytes(Precision p);
// Bytes of one stored weight as the forward pass reads it (fp32 master weights are counted by the optimizer).
double weight_bytes(Precision p);

}  // namespace prenet
