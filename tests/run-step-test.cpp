// Step composition (run/step.hpp): micro-batches, gradient accumulation, recompute, loss scaling, the
// optimizer implementations, the input-pipeline cap and the framework overhead's part, on the roofline.
#include <gtest/gtest.h>

#include "test-helpers.hpp"

#include <map>
#include <memory>
#include <utility>

#include "graph/builder.hpp"
#include "importers/resolve.hpp"
#include "hardware/spec.hpp"
#include "ops/catalogue.hpp"
#include "ops/features.hpp"
#include "predict/predictor.hpp"
#include "run/checkpointing.hpp"
#include "run/grad_accumulation.hpp"
#include "run/step.hpp"

using namespace prenet;

namespace {

// Features point into their model: both live here, for the whole test.
struct Built {
    Model model;
    ModelFeatures features;
};

const ModelFeatures& blocks_features(std::int64_t batch, Precision p) {
    static std::map<std::pair<std::int64_t, int>, std::unique_ptr<Built>> cache;
    auto& slot = cache[{batch, int(p)}];
    if (slot) return slot->features;
    ModelBuilder b("blocks", {batch, 128, 512}, infer_shape);
    b.add("linear", "in", {{"out_features", 512}});
    b.begin_block("layers", 4);
    b.add("layernorm", "ln");
    b.add("linear", "up", {{"out_features", 2048}});
    b.add("activation", "act", {{"function", "gelu"}});
    b.add("linear", "down", {{"out_features", 512}});
    b.add("residual_add", "res");
    b.end_block();
    b.add("linear", "head", {{"out_features", 10}});
    slot = std::make_unique<Built>();
    slot->model = b.finish("custom", 128);
    slot->features = compute_features(slot->model, p);
    return slot->features;
}

StepOptions step_options(Precision p, const char* optimizer) {
    StepOptions o;
    o.precision = p;
    o.optimizer = &find_optimizer(optimizer);
    return o;
}

const HardwareSpec& a100() { return find_hardware("a100-sxm4-80gb"); }

}  // namespace

TEST(TrainingStep, PlainStepMatchesTheOldComposition) {
    const ModelFeatures& f = blocks_features(8, Precision::bf16);
    RooflinePredictor roofline;
    StepTime a = predict_step(f, a100(), roofline, step_options(Precision::bf16, "adamw"));
    StepTime b = predict_step(f, a100(), roofline, Precision::bf16, find_optimizer("adamw"));
    EXPECT_DOUBLE_EQ(a.total_ms(), b.total_ms());
    EXPECT_DOUBLE_EQ(a.micro_batch_ms, a.forward_ms + a.backward_ms);
    EXPECT_DOUBLE_EQ(a.recompute_ms, 0);
    EXPECT_DOUBLE_EQ(a.grad_accumulation_ms, 0);
    EXPECT_DOUBLE_EQ(a.input_stall_ms, 0);
    EXPECT_FALSE(a.input_bound());
    EXPECT_GT(a.matmul_ms, 0);
    EXPECT_LT(a.matmul_ms, a.total_ms());
}

TEST(TrainingStep, GradientAccumulationRunsMicroBatchesAndTheOptimizerOnce) {
    const ModelFeatures& f = blocks_features(8, Precision::bf16);
    RooflinePredictor roofline;
    StepOptions o = step_options(Precision::bf16, "adamw");
    StepTime one = predict_step(f, a100(), roofline, o);
    o.grad_accum = 4;
    StepTime four = predict_step(f, a100(), roofline, o);
    EXPECT_NEAR(four.forward_ms, 4 * one.forward_ms, 1e-9);
    EXPECT_DOUBLE_EQ(four.optimizer_ms, one.optimizer_ms);
    EXPECT_DOUBLE_EQ(four.micro_batch_ms, one.micro_batch_ms);
    // Three accumulation passes, each reading two gradients and writing one: fp32 under autocast, 2-byte in a
    // half-precision model.
    Kernel acc = gradient_accumulation_kernel(precision_recipe(Precision::bf16), f.params);
    EXPECT_DOUBLE_EQ(acc.bytes, 12.0 * double(f.params));
    EXPECT_DOUBLE_EQ(
        gradient_accumulation_kernel(precision_recipe(Precision::bf16, MixedRecipe::half_model), f.params).bytes,
        6.0 * double(f.params));
    EXPECT_NEAR(four.grad_accumulation_ms, 3 * roofline.kernel_ms(acc, a100()), 1e-12);
    EXPECT_NEAR(four.backward_ms, 4 * one.backward_ms + four.grad_accumulation_ms, 1e-9);
    EXPECT_NEAR(four.total_ms(), 4 * four.micro_batch_ms + four.grad_accumulation_ms + four.optimizer_ms, 1e-9);
    double by_family = 0;
    for (const auto& [family, ms] : four.by_family_ms) by_family += ms;
    EXPECT_NEAR(by_family, four.total_ms(), 1e-9 * four.total_ms());
    EXPECT_EQ(global_batch(8, 4), 32);
}

TEST(TrainingStep, CheckpointingAddsOneForwardOfEachBlockToBackward) {
    const ModelFeatures& f = blocks_features(8, Precision::bf16);
    RooflinePredictor roofline;
    StepOptions o = step_options(Precision::bf16, "adamw");
    StepTime plain = predict_step(f, a100(), roofline, o);
    o.checkpointing = true;
    StepTime ckpt = predict_step(f, a100(), roofline, o);
    double block_forward = 0;
    for (const auto& lf : f.layers)
        if (is_checkpointed(lf))
            for (const auto& k : lf.cost.kernels)
                if (k.phase == Phase::forward) block_forward += double(lf.repeat) * roofline.kernel_ms(k, a100());
    EXPECT_GT(block_forward, 0);
    EXPECT_NEAR(ckpt.recompute_ms, block_forward, 1e-12);
    EXPECT_DOUBLE_EQ(ckpt.forward_ms, plain.forward_ms);
    EXPECT_NEAR(ckpt.backward_ms, plain.backward_ms + block_forward, 1e-12);
    EXPECT_LT(ckpt.recompute_ms, plain.forward_ms);  // the input layer and head are not recomputed
    EXPECT_NEAR(ckpt.micro_batch_ms, plain.micro_batch_ms + block_forward, 1e-12);
    EXPECT_GT(ckpt.kernels, plain.kernels);
}

TEST(TrainingStep, Fp16AddsTheUnscalePassAndForeachCostsMore) {
    const ModelFeatures& f = blocks_features(8, Precision::fp16);
    RooflinePredictor roofline;
    StepTime fp16 = predict_step(f, a100(), roofline, step_options(Precision::fp16, "adamw"));
    StepTime bf16 = predict_step(blocks_features(8, Precision::bf16), a100(), roofline,
                                 step_options(Precision::bf16, "adamw"));
    Kernel unscale = loss_scaling_kernels(precision_recipe(Precision::fp16), f.params).at(0);
    EXPECT_NEAR(fp16.optimizer_ms - bf16.optimizer_ms, roofline.kernel_ms(unscale, a100()), 1e-12);

    StepOptions o = step_options(Precision::bf16, "adamw");
    o.optimizer_impl = OptimizerImpl::foreach;
    StepTime foreach = predict_step(blocks_features(8, Precision::bf16), a100(), roofline, o);
    EXPECT_GT(foreach.optimizer_ms, 2.5 * bf16.optimizer_ms);  // 92 vs 28 bytes per parameter, 10 launches
    EXPECT_DOUBLE_EQ(foreach.forward_ms, bf16.forward_ms);
}

TEST(TrainingStep, InputPipelineCapsTheStepRate) {
    const ModelFeatures& f = blocks_features(8, Precision::bf16);
    RooflinePredictor roofline;
    StepOptions o = step_options(Precision::bf16, "adamw");
    o.grad_accum = 2;
    o.micro_batch = 8;
    StepTime free = predict_step(f, a100(), roofline, o);
    // A pipeline that delivers the 16 samples in exactly twice the compute time.
    o.input_samples_per_s = 16.0 / (2.0 * free.compute_ms() / 1e3);
    StepTime slow = predict_step(f, a100(), roofline, o);
    EXPECT_TRUE(slow.input_bound());
    EXPECT_NEAR(slow.input_ms, 2.0 * free.compute_ms(), 1e-9);
    EXPECT_NEAR(slow.total_ms(), slow.input_ms, 1e-9);
    EXPECT_NEAR(slow.input_stall_ms, free.compute_ms(), 1e-9);
    EXPECT_DOUBLE_EQ(slow.compute_ms(), free.compute_ms());
    // A fast pipeline changes nothing.
    o.input_samples_per_s = 1e12;
    StepTime fast = predict_step(f, a100(), roofline, o);
    EXPECT_FALSE(fast.input_bound());
    EXPECT_DOUBLE_EQ(fast.total_ms(), free.total_ms());
}

// The framework overhead (run/overhead.hpp) is a part of its own: a gap per launch (recomputes, accumulation and
// optimizer kernels counted) plus the fixed cost; every other part stays as the kernels have it.
TEST(TrainingStep, OverheadIsItsOwnPartOfTheStep) {
    const ModelFeatures& f = blocks_features(8, Precision::bf16);
    RooflinePredictor roofline;
    StepOptions o = step_options(Precision::bf16, "adamw");
    o.grad_accum = 3;
    o.checkpointing = true;
    StepTime base = predict_step(f, a100(), roofline, o);
    EXPECT_EQ(base.overhead_ms, 0.0);  // none by default in the core
    o.overhead.launch_gap_ms = 0.01;
    o.overhead.step_fixed_ms = 7;
    o.overhead.overlap_loss = 0.5;  // one device: nothing overlaps, nothing lost
    StepTime slow = predict_step(f, a100(), roofline, o);
    EXPECT_NEAR(slow.overhead_ms, 0.01 * base.kernels + 7, 1e-12);
    EXPECT_NEAR(slow.total_ms() - base.total_ms(), slow.overhead_ms, 1e-9);
    EXPECT_EQ(slow.forward_ms, base.forward_ms);
    EXPECT_EQ(slow.backward_ms, base.backward_ms);
    EXPECT_EQ(slow.optimizer_ms, base.optimizer_ms);
    EXPECT_EQ(slow.by_family_ms, base.by_family_ms);
    EXPECT_NEAR(slow.total_ms(), slow.forward_ms + slow.backward_ms + slow.optimizer_ms + slow.overhead_ms, 1e-9);
}

// The step times each distinct kernel once (a GQA layer's key and value projections are identical); the sum is
// what timing every kernel on its own gives.
TEST(TrainingStep, RepeatedKernelsAreTimedOnceAndCountedEachTime) {
    ModelBuilder b("gqa", {2, 64, 256}, infer_shape);
    b.add("layernorm", "ln");
    b.add("attention", "attn", {{"heads", 8}, {"kv_heads", 2}, {"projections", "separate"}});
    b.add("residual_add", "res");
    Model m = b.finish("custom", 64);
    ModelFeatures f = compute_features(m, Precision::bf16);
    RooflinePredictor roofline;
    double direct = 0;
    int kernels = 0;
    for (const auto& lf : f.layers)
        for (const auto& k : lf.cost.kernels) direct += roofline.kernel_ms(k, a100()), ++kernels;
    StepTime t = predict_step(f, a100(), roofline, step_options(Precision::bf16, "adamw"));
    EXPECT_DOUBLE_EQ(t.micro_batch_ms, direct);
    EXPECT_GE(t.kernels, kernels);
}

// The per-layer breakdown adds up to the step's forward and backward (recompute included, accumulation passes
// and the optimizer not being any layer's), in model order, and costs nothing when not asked for.
TEST(TrainingStep, AStepIsItsMicroBatchTimedOnceThenAccumulatedAndUpdated) {
    const ModelFeatures& f = blocks_features(8, Precision::bf16);
    RooflinePredictor roofline;
    StepOptions o = step_options(Precision::bf16, "adamw");
    o.checkpointing = true;
    o.layer_breakdown = true;
    MicroBatchTime mb = predict_micro_batch(f, a100(), roofline, o);
    EXPECT_GT(mb.recompute_ms, 0);
    for (std::int64_t accum : {1, 4}) {
        o.grad_accum = accum;
        StepTime whole = predict_step(f, a100(), roofline, o);
        StepTime given = predict_step(f, a100(), roofline, o, mb);  // the micro-batch does not change with accum
        EXPECT_EQ(given.total_ms(), whole.total_ms());
        EXPECT_EQ(given.by_family_ms, whole.by_family_ms);
        EXPECT_EQ(given.kernels, whole.kernels);
        EXPECT_EQ(given.forward_ms, double(accum) * mb.forward_ms);
        EXPECT_EQ(given.micro_batch_ms, mb.forward_ms + mb.backward_ms + mb.recompute_ms);
        ASSERT_EQ(given.layers.size(), mb.layers.size());
        EXPECT_EQ(given.layers[1].forward_ms, double(accum) * mb.layers[1].forward_ms);
    }
    // The update is not the micro-batch's: another optimizer changes the step, not its micro-batch.
    StepOptions sgd = o;
    sgd.optimizer = &find_optimizer("sgd");
    EXPECT_LT(predict_step(f, a100(), roofline, sgd, mb).optimizer_ms, predict_step(f, a100(), roofline, o, mb).optimizer_ms);
}

TEST(TrainingStep, LayerBreakdownSumsToTheStep) {
    const ModelFeatures& f = blocks_features(8, Precision::bf16);
    RooflinePredictor roofline;
    StepOptions o = step_options(Precision::bf16, "adamw");
    o.grad_accum = 3;
    o.checkpointing = true;
    EXPECT_TRUE(predict_step(f, a100(), roofline, o).layers.empty());
    o.layer_breakdown = true;
    StepTime t = predict_step(f, a100(), roofline, o);
    ASSERT_EQ(t.layers.size(), f.layers.size());
    double forward = 0, backward = 0, kernels = 0;
    for (size_t i = 0; i < t.layers.size(); ++i) {
        EXPECT_EQ(t.layers[i].name, f.layers[i].layer.name);
        forward += t.layers[i].forward_ms, backward += t.layers[i].backward_ms, kernels += t.layers[i].kernels;
    }
    EXPECT_NEAR(forward, t.forward_ms, 1e-9 * t.forward_ms);
    EXPECT_NEAR(backward, t.backward_ms - t.grad_accumulation_ms, 1e-9 * t.backward_ms);
    EXPECT_GT(t.recompute_ms, 0);
    EXPECT_LT(kernels, t.kernels);  // the accumulation and optimizer launches are no layer's
    EXPECT_EQ(t.layers[1].repeat, 4);  // a layer of the 4-times repeated block
}

TEST(Step, SumsForwardBackwardAndOptimizerConsistently) {
    Model model = prenet::testing::small_model();
    ModelFeatures f = compute_features(model, Precision::bf16);
    const HardwareSpec& hw = find_hardware("a100-sxm4-80gb");
    RooflinePredictor roofline;
    const OptimizerDef& adamw = find_optimizer("adamw");
    StepTime t = predict_step(f, hw, roofline, Precision::bf16, adamw);

    EXPECT_GT(t.forward_ms, 0);
    EXPECT_GT(t.backward_ms, 0);
    EXPECT_GT(t.optimizer_ms, 0);
    EXPECT_DOUBLE_EQ(t.communication_ms, 0);
    EXPECT_DOUBLE_EQ(t.total_ms(), t.forward_ms + t.backward_ms + t.optimizer_ms + t.communication_ms);

    double by_family = 0;
    for (const auto& [family, ms] : t.by_family_ms) {
        EXPECT_GT(ms, 0) << to_string(family);
        by_family += ms;
    }
    EXPECT_NEAR(by_family, t.total_ms(), 1e-12 * t.total_ms());
    // The JSON form is keyed by the families' names, with the same times.
    json by_name = by_family_json(t.by_family_ms);
    ASSERT_TRUE(by_name.is_object());
    EXPECT_EQ(by_name.size(), t.by_family_ms.size());
    for (const auto& [family, ms] : t.by_family_ms) EXPECT_EQ(by_name.at(to_string(family)).get<double>(), ms);
    EXPECT_TRUE(t.by_family_ms.count(Family::gemm));
    EXPECT_TRUE(t.by_family_ms.count(Family::optimizer));
    EXPECT_NEAR(t.by_family_ms.at(Family::optimizer), t.optimizer_ms, 1e-15);

    // Recompute by hand: every kernel of every layer, times its block's repeat count.
    double forward = 0, backward = 0;
    std::map<std::string, double> families;
    bool saw_repeat = false;
    for (const auto& lf : f.layers) {
        saw_repeat |= lf.repeat == 3;
        for (const auto& k : lf.cost.kernels) {
            double ms = double(lf.repeat) * roofline.kernel_ms(k, hw);
            (k.phase == Phase::forward ? forward : backward) += ms;
            families[to_string(k.family)] += ms;
        }
    }
    EXPECT_TRUE(saw_repeat);
    EXPECT_NEAR(t.forward_ms, forward, 1e-12 * forward);
    EXPECT_NEAR(t.backward_ms, backward, 1e-12 * backward);
    double optimizer = 0;
    for (const auto& k : optimizer_kernels(adamw, f.params, Precision::bf16)) optimizer += roofline.kernel_ms(k, hw);
    EXPECT_NEAR(t.optimizer_ms, optimizer, 1e-15);
    // The optimizer pass is one memory-bound sweep: 28 bytes per parameter for AdamW.
    EXPECT_NEAR(t.optimizer_ms, 1e3 * 28.0 * double(f.params) / (hw.bandwidth_gbps * 1e9) + RooflinePredictor::kLaunchMs,
                1e-12);
}

TEST(Step, RepeatedBlocksCostTheirRepeatCount) {
    auto build = [](std::int64_t repeat) {
        ModelBuilder b("r", {32, 512}, infer_shape);
        b.add("linear", "in", {{"out_features", 512}});
        b.begin_block("blocks", repeat);
        b.add("linear", "fc", {{"out_features", 512}});
        b.end_block();
        return compute_features(b.finish("custom", 0), Precision::fp32);
    };
    const HardwareSpec& hw = find_hardware("t4");
    RooflinePredictor roofline;
    const OptimizerDef& sgd = find_optimizer("sgd");
    StepTime one = predict_step(build(1), hw, roofline, Precision::fp32, sgd);
    StepTime five = predict_step(build(5), hw, roofline, Precision::fp32, sgd);
    // Four more copies of the repeated layer: forward grows by exactly 4 x its time.
    double fc_forward = five.forward_ms - one.forward_ms;
    EXPECT_GT(fc_forward, 0);
    StepTime three = predict_step(build(3), hw, roofline, Precision::fp32, sgd);
    EXPECT_NEAR(three.forward_ms - one.forward_ms, fc_forward / 2, 1e-9);
}

TEST(Step, BatchAndHardwareMoveTheStepTheRightWay) {
    auto features = [](std::int64_t batch) {
        ModelBuilder b("mlp", {batch, 1024}, infer_shape);
        b.add("linear", "fc1", {{"out_features", 4096}});
        b.add("activation", "act", {{"function", "gelu"}});
        b.add("linear", "fc2", {{"out_features", 1024}});
        return compute_features(b.finish("custom", 0), Precision::bf16);
    };
    RooflinePredictor roofline;
    const OptimizerDef& adamw = find_optimizer("adamw");
    const HardwareSpec& h100 = find_hardware("h100-sxm5-80gb");
    const HardwareSpec& t4 = find_hardware("t4");
    StepTime small = predict_step(features(8), h100, roofline, Precision::bf16, adamw);
    StepTime large = predict_step(features(4096), h100, roofline, Precision::bf16, adamw);
    EXPECT_GT(large.forward_ms, small.forward_ms);
    EXPECT_GT(large.backward_ms, small.backward_ms);
    EXPECT_DOUBLE_EQ(large.optimizer_ms, small.optimizer_ms);  // same parameters
    StepTime on_t4 = predict_step(features(4096), t4, roofline, Precision::bf16, adamw);
    EXPECT_GT(on_t4.total_ms(), large.total_ms());
}

// Fine-tuning's time: frozen layers drop their weight-gradient GEMMs, adapters add small GEMMs, QLoRA adds a
// memory-bound dequantisation before each base matmul, and the optimizer updates the adapters only.
TEST(TrainingStep, FineTuningDropsWeightGradientsAndUpdatesTheAdaptersOnly) {
    ModelInputs in;
    in.seq = 512;
    in.batch = 2;
    in.flash_attention = true;
    Model m = resolve_model(json("llama2-7b"), in);
    auto features = [&](FineTuneMode mode) {
        FineTune ft;
        ft.mode = mode;
        ft.rank = 16;
        ft.targets = parse_lora_targets("all");
        if (mode == FineTuneMode::qlora) ft.quantization = Quantization::nf4;
        return compute_features(m, Precision::bf16, MixedRecipe::half_model, ft);
    };
    ModelFeatures full = features(FineTuneMode::full), lora = features(FineTuneMode::lora),
                  qlora = features(FineTuneMode::qlora);
    RooflinePredictor roofline;
    StepOptions o = step_options(Precision::bf16, "adamw");
    o.mixed = MixedRecipe::half_model;
    StepTime t_full = predict_step(full, a100(), roofline, o);
    o.adapters = true;
    StepTime t_lora = predict_step(lora, a100(), roofline, o);
    o.half_adapters = true;
    StepTime t_qlora = predict_step(qlora, a100(), roofline, o);
    // LoRA's backward is about the forward (input gradients only) where full training's is about twice it.
    EXPECT_LT(t_lora.backward_ms, 0.75 * t_full.backward_ms);
    // Its forward adds the adapters' small GEMMs and memory-bound scale-and-add passes (seven targets here).
    EXPECT_GT(t_lora.forward_ms, t_full.forward_ms);
    EXPECT_LT(t_lora.forward_ms, 1.5 * t_full.forward_ms);
    EXPECT_LT(t_lora.total_ms(), t_full.total_ms());
    // The update runs over the adapters only.
    EXPECT_LT(t_lora.optimizer_ms, 0.05 * t_full.optimizer_ms);
    double dequantize_ms = 0;
    for (const auto& lf : qlora.layers)
        for (const auto& k : lf.cost.kernels)
            if (k.op == "nf4_dequantize") dequantize_ms += double(lf.repeat) * roofline.kernel_ms(k, a100());
    EXPECT_GT(dequantize_ms, 0.0);
    EXPECT_NEAR(t_qlora.forward_ms + t_qlora.backward_ms - t_lora.forward_ms - t_lora.backward_ms, dequantize_ms,
                1e-6 * dequantize_ms);
}

// Sustained clocks (hardware/clocks.hpp, docs/clocks.md): a power limit below the TDP slows the step's
// matrix-unit kernels by at most the clock ratio and leaves the rest alone; without clock facts, nothing changes.
TEST(SustainedClockStep, H100At500WIsSlowerThanAt700WInMatrixKernelsOnly) {
    RooflinePredictor roofline;
    const ModelFeatures& f = blocks_features(64, Precision::bf16);
    StepOptions o = step_options(Precision::bf16, "adamw");
    HardwareSpec at700 = find_hardware("h100-sxm5-80gb"), at500 = at700;
    at700.power_limit_w = 700;
    at500.power_limit_w = 500;
    StepTime catalogue = predict_step(f, find_hardware("h100-sxm5-80gb"), roofline, o);
    StepTime full = predict_step(f, at700, roofline, o);
    StepTime capped = predict_step(f, at500, roofline, o);
    EXPECT_DOUBLE_EQ(full.total_ms(), catalogue.total_ms());  // a limit at the TDP changes nothing
    EXPECT_GT(capped.total_ms(), full.total_ms());
    double factor = capped.clock.factor;  // 1579.05 / 1830 (hardware-clocks-test)
    EXPECT_NEAR(factor, 0.86287, 1e-5);
    // The GEMMs: the compute-bound ones take 1/factor longer, the memory-bound ones (the 10-wide head) keep
    // their time, so the family grows by more than nothing and less than 1/factor.
    double gemm = capped.by_family_ms.at(Family::gemm) / full.by_family_ms.at(Family::gemm);
    EXPECT_GT(gemm, 1.05);
    EXPECT_LT(gemm, 1.0 / factor);
    EXPECT_DOUBLE_EQ(capped.by_family_ms.at(Family::elementwise), full.by_family_ms.at(Family::elementwise));
    EXPECT_DOUBLE_EQ(capped.optimizer_ms, full.optimizer_ms);
}

TEST(SustainedClockStep, ASheetWithoutClockFactsPredictsExactlyAsBefore) {
    RooflinePredictor roofline;
    const ModelFeatures& f = blocks_features(64, Precision::bf16);
    StepOptions o = step_options(Precision::bf16, "adamw");
    HardwareSpec bare = a100();
    bare.boost_clock_mhz = bare.base_clock_mhz = bare.compute_units = 0;  // no clock, published or implied
    StepTime before = predict_step(f, bare, roofline, o);
    bare.power_limit_w = 200;  // of its 400 W: ignored, there is no clock to scale
    StepTime after = predict_step(f, bare, roofline, o);
    EXPECT_DOUBLE_EQ(after.total_ms(), before.total_ms());
    EXPECT_DOUBLE_EQ(after.matmul_ms, before.matmul_ms);
    EXPECT_DOUBLE_EQ(after.clock.factor, 1.0);
}
