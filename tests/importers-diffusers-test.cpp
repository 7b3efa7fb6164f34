// diffusers config import: the denoisers' parameter counts are the published ones, their multiply-accumulates a
// hand count's, the latents follow --image, the pipeline's frozen encoders run forward only, LoRA adapts the
// attention projections as diffusers' scripts do, and bad configs are refused naming the field.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "importers/diffusers.hpp"
#include "importers/resolve.hpp"
#include "ops/features.hpp"
#include "test-helpers.hpp"

using namespace prenet;

namespace {

json fixture(const std::string& file) { return prenet::testing::source_json("tests/fixtures/diffusers/" + file); }

ModelInputs at_image(std::int64_t image, std::int64_t batch = 1) {
    ModelInputs in;
    in.batch = batch, in.image = image;
    return in;
}

// Parameters of the layers that train (the denoiser) and of the frozen components.
struct Split {
    double denoiser = 0, frozen = 0;
};
Split split(const ModelFeatures& f) {
    Split s;
    for (const auto& lf : f.layers) (lf.layer.frozen_component ? s.frozen : s.denoiser) += double(lf.cost.params * lf.repeat);
    return s;
}

ModelFeatures features_of(const std::string& file, ModelInputs in = {}, const FineTune& ft = FineTune{}) {
    return compute_features(resolve_model(fixture(file), in), Precision::fp32, MixedRecipe::autocast, ft);
}

// The input [batch, C, H, W] of the denoiser's conv_in (or SD3's patch embedding).
Shape latent_input(const Model& m, const std::string& layer_name) {
    for (const auto& b : m.blocks)
        for (const auto& l : b.layers)
            if (l.name == layer_name) return l.input;
    return {};
}

std::string error_of(json config, ModelInputs in = at_image(0)) { return prenet::testing::import_error(config, in); }

}  // namespace

// diffusers' own documentation of ModelMixin.num_parameters: UNet2DConditionModel.from_pretrained(
// "stable-diffusion-v1-5/stable-diffusion-v1-5", subfolder="unet").num_parameters() == 859520964.
TEST(DiffusersUNet, StableDiffusion15ParameterCountIsDiffusersOwn) {
    ModelFeatures f = features_of("sd15_unet.json");
    EXPECT_EQ(f.trainable_params, 859520964);
    EXPECT_EQ(split(f).denoiser, 859520964.0);
}

// 865,910,724: the SD 2.x UNet's tensor count pinned in a public UNet weight-schema test (SdUnetConfig.Sd2); the
// same as SD 1.5 but 1024-wide text states (to_k, to_v) and linear proj_in/proj_out.
TEST(DiffusersUNet, StableDiffusion21ParameterCount) {
    EXPECT_EQ(features_of("sd21_unet.json").trainable_params, 865910724);
}

// 2,567,463,684: the SDXL base UNet as a DreamBooth run logs it ("unet params = 2567463684") and as the
// checkpoint's UNet tensors sum (a 10.27 GB fp32 export of sd_xl_base_1.0's model.diffusion_model: 4 bytes each).
TEST(DiffusersUNet, SdxlParameterCount) {
    EXPECT_EQ(features_of("sdxl_unet.json").trainable_params, 2567463684);
}

// stable-diffusion-3-medium-diffusers, a published module summary (its pipeline inspected module by module):
// transformer 2,028,328,000; text_encoder 123,650,304 (CLIP-L with its projection), text_encoder_2 694,659,840,
// text_encoder_3 4,762,310,656 (T5 v1.1 XXL's encoder). The VAE encoder is a hand count: SD's AutoencoderKL
// encoder 34,163,592 with conv_out 512 -> 8 (36,872) replaced by 512 -> 32 (147,488): 34,274,208; no quant_conv.
TEST(DiffusersSD3, MediumParameterCountsOfDenoiserAndFrozenEncoders) {
    ModelFeatures f = features_of("sd3_medium_transformer.json");
    EXPECT_EQ(f.trainable_params, 2028328000);
    EXPECT_EQ(split(f).frozen, 123650304.0 + 694659840.0 + 4762310656.0 + 34274208.0);
}

// SD 1.5's frozen parts: the CLIP ViT-L/14 text encoder (123,060,480: token table 49408 x 768, positions 77 x 768,
// 12 layers of 7,087,872, final norm 1536) and the VAE encoder with quant_conv. The encoder by hand: conv_in 3,584;
// levels of 738,944, 2,690,304, 10,754,560, 9,443,328; mid block 10,494,976; norm 1,024; conv_out 36,872:
// 34,163,592, and quant_conv 8 x 8 + 8.
TEST(DiffusersPipeline, StableDiffusion15FrozenPartsAreTheVaeEncoderAndClipText) {
    EXPECT_EQ(split(features_of("sd15_unet.json")).frozen, 123060480.0 + 34163592.0 + 72.0);
}

// SDXL: CLIP-L (123,060,480) and OpenCLIP bigG with its projection (694,659,840): 817,720,320, the text
// conditioning of the published SDXL profile; plus the VAE encoder.
TEST(DiffusersPipeline, SdxlRunsBothTextEncoders) {
    EXPECT_EQ(split(features_of("sdxl_unet.json")).frozen, 817720320.0 + 34163592.0 + 72.0);
}

// An independent count of SD 1.5's multiply-accumulates at 64 x 64 latents (512 px), written per module:
// a k x k conv from a to b channels at s x s is k^2 a b s^2; a ResNet block (a -> b, at s) two 3x3 convs, the
// time projection 1280 b, a 1x1 shortcut when a != b; a spatial transformer (c channels, n = s^2 tokens,
// 77 text tokens of 768) proj_in and proj_out 2 n c^2, self-attention's q, k, v, out 4 n c^2, cross-attention's
// q and out 2 n c^2 and k, v 2 x 77 x 768 c, GEGLU n c 8c + n 4c c. The weights' MACs are 338,610,585,600; the
// attention products (scores and context: 2 n^2 c self, 2 x 77 n c cross) 63,026,135,040 more, in the forward
// FLOPs.
TEST(DiffusersUNet, StableDiffusion15MacsMatchAHandCount) {
    auto conv = [](double a, double b, double k, double s) { return k * k * a * b * s * s; };
    auto resnet = [&](double a, double b, double s) {
        return conv(a, b, 3, s) + conv(b, b, 3, s) + 1280 * b + (a != b ? conv(a, b, 1, s) : 0);
    };
    double attention_products = 0;
    auto transformer = [&](double c, double s) {
        double n = s * s;
        attention_products += 2 * n * n * c + 2 * 77 * n * c;
        return 2 * n * c * c + 4 * n * c * c + 2 * n * c * c + 2 * 77 * 768 * c + n * c * 8 * c + n * 4 * c * c;
    };
    const double ch[] = {320, 640, 1280, 1280};
    double macs = 320 * 1280 + 1280 * 1280 + conv(4, 320, 3, 64), s = 64, in = 320;
    std::vector<double> skips = {320};
    for (int i = 0; i < 4; ++i) {
        for (int j = 0; j < 2; ++j) {
            macs += resnet(in, ch[i], s) + (i < 3 ? transformer(ch[i], s) : 0);
            in = ch[i];
            skips.push_back(in);
        }
        if (i < 3) macs += conv(in, in, 3, s / 2), s /= 2, skips.push_back(in);
    }
    macs += 2 * resnet(1280, 1280, s) + transformer(1280, s);
    for (int i = 0; i < 4; ++i) {
        double c = ch[3 - i];
        for (int j = 0; j < 3; ++j) {
            macs += resnet(in + skips.back(), c, s) + (i > 0 ? transformer(c, s) : 0);
            skips.pop_back();
            in = c;
        }
        if (i < 3) s *= 2, macs += conv(c, c, 3, s);
    }
    macs += conv(320, 4, 3, 64);
    EXPECT_EQ(macs, 338610585600.0);
    EXPECT_EQ(attention_products, 63026135040.0);

    ModelFeatures f = features_of("sd15_unet.json", at_image(512));
    double unet_macs = 0, unet_forward = 0;
    for (const auto& lf : f.layers)
        if (!lf.layer.frozen_component) unet_macs += lf.cost.macs * double(lf.repeat), unet_forward += lf.cost.forward_flops * double(lf.repeat);
    EXPECT_DOUBLE_EQ(unet_macs, macs);
    // Forward FLOPs: twice every product, plus the norms, activations and adds (a few percent).
    EXPECT_GT(unet_forward, 2 * (macs + attention_products));
    EXPECT_LT(unet_forward, 1.05 * 2 * (macs + attention_products));
}

TEST(DiffusersPipeline, LatentsFollowTheImageSize) {
    Model sd15 = resolve_model(fixture("sd15_unet.json"), at_image(0, 2));
    EXPECT_EQ(latent_input(sd15, "conv_in"), (Shape{2, 4, 64, 64}));  // sample_size 64: 512 px
    EXPECT_EQ(latent_input(sd15, "vae_encoder.conv_in"), (Shape{2, 3, 512, 512}));
    Model sdxl = resolve_model(fixture("sdxl_unet.json"), at_image(0));
    EXPECT_EQ(latent_input(sdxl, "conv_in"), (Shape{1, 4, 128, 128}));  // sample_size 128: 1024 px
    Model sd15_768 = resolve_model(fixture("sd15_unet.json"), at_image(768));
    EXPECT_EQ(latent_input(sd15_768, "conv_in"), (Shape{1, 4, 96, 96}));
    Model sd3 = resolve_model(fixture("sd3_medium_transformer.json"), at_image(512));
    EXPECT_EQ(latent_input(sd3, "pos_embed.proj"), (Shape{1, 16, 64, 64}));
    EXPECT_EQ(sd15.tokens_per_sample, 0);  // a sample is an image
    // The cost grows with the pixels: 2.25 times as many at 768 px, and the attention faster still, against the
    // text encoder's constant share.
    double f512 = compute_features(resolve_model(fixture("sd15_unet.json"), at_image(512)), Precision::fp32).forward_flops;
    double f768 = compute_features(sd15_768, Precision::fp32).forward_flops;
    EXPECT_GT(f768, 2.2 * f512);
}

TEST(DiffusersPipeline, NotesSayTheImageTheLatentsAndWhatIsFrozen) {
    Model m = resolve_model(fixture("sdxl_unet.json"), at_image(0));
    std::string notes;
    for (const auto& n : m.notes) notes += n + "\n";
    EXPECT_NE(notes.find("1024x1024 px"), std::string::npos) << notes;
    EXPECT_NE(notes.find("latents 4x128x128"), std::string::npos) << notes;
    EXPECT_NE(notes.find("OpenCLIP ViT-bigG/14"), std::string::npos) << notes;
    EXPECT_NE(notes.find("not costed"), std::string::npos) << notes;
}

TEST(DiffusersPipeline, FrozenEncodersRunForwardOnly) {
    for (const char* file : {"sd15_unet.json", "sdxl_unet.json", "sd3_medium_transformer.json"}) {
        ModelFeatures f = features_of(file, at_image(256));
        int frozen = 0, trained = 0;
        for (const auto& lf : f.layers) {
            if (lf.layer.frozen_component) {
                ++frozen;
                EXPECT_FALSE(lf.runs_backward) << file << " " << lf.layer.name;
                EXPECT_EQ(lf.cost.backward_input_flops + lf.cost.backward_weight_flops, 0.0) << lf.layer.name;
                EXPECT_EQ(lf.cost.saved_activation_bytes, 0.0) << lf.layer.name;
                EXPECT_EQ(lf.trainable_params, 0) << lf.layer.name;
            } else if (lf.cost.params > 0) {
                ++trained;
                EXPECT_GT(lf.cost.backward_weight_flops, 0.0) << file << " " << lf.layer.name;
            }
        }
        EXPECT_GT(frozen, 50) << file;
        EXPECT_GT(trained, 20) << file;
    }
}

// LoRA on to_q, to_k, to_v and to_out.0 of every attention (diffusers' train_text_to_image_lora and DreamBooth
// LoRA scripts). Per transformer layer of c channels at rank r: self-attention 4 x r 2c; cross-attention q and out
// r 2c, k and v r (768 + c): 14 r c + 1536 r. SD 1.5 (16 layers, c summing to 12,480), rank 4: 797,184. SDXL
// (text states of 2048: 14 r c + 4096 r; 70 layers, c summing to 83,200), rank 4: 5,806,080, as a public SDXL
// DreamBooth LoRA run logs it ("training lora parameters = 5806080"). The text encoders get none.
TEST(DiffusersLora, AdaptersOnTheDenoisersAttentionProjections) {
    FineTune ft;
    ft.mode = FineTuneMode::lora;
    ft.rank = 4;
    ft.targets = {"q", "k", "v", "o"};
    ModelFeatures sd15 = features_of("sd15_unet.json", at_image(512), ft);
    EXPECT_EQ(sd15.trainable_params, 797184);
    EXPECT_EQ(sd15.adapter_params, 797184);
    EXPECT_EQ(features_of("sdxl_unet.json", at_image(1024), ft).trainable_params, 5806080);
    for (const auto& lf : sd15.layers)
        if (lf.layer.frozen_component) EXPECT_EQ(lf.trainable_params, 0) << lf.layer.name;
}

TEST(DiffusersLora, Sd3AdaptsBothStreamsProjections) {
    // Per joint block of width d = 1536, rank r: image and text q, k, v, out 8 x r 2d; the last block has no text
    // output projection (7 x r 2d). 24 blocks at rank 4: (23 x 8 + 7) x 4 x 3072 = 2,347,008.
    FineTune ft;
    ft.mode = FineTuneMode::lora;
    ft.rank = 4;
    ft.targets = {"q", "k", "v", "o"};
    EXPECT_EQ(features_of("sd3_medium_transformer.json", at_image(512), ft).trainable_params, (23 * 8 + 7) * 4 * 3072);
}

TEST(DiffusersConfig, UnsupportedClassNamesAreListed) {
    std::string e = error_of({{"_class_name", "PixArtTransformer2DModel"}});
    EXPECT_NE(e.find("PixArtTransformer2DModel"), std::string::npos) << e;
    for (const char* supported : {"UNet2DConditionModel", "SD3Transformer2DModel", "FluxTransformer2DModel"})
        EXPECT_NE(e.find(supported), std::string::npos) << e;
}

// FLUX.1 dev: 11,901,408,320 parameters, the checkpoint's safetensors metadata (BF16 11901408320: 23,802,816,640
// bytes at 2 each). By hand, width d = 3072: embeddings 32,262,144 (timestep, guidance, pooled text), the context
// embedder 12,585,984 and x_embedder 199,680; 19 double blocks of 339,831,296 (two 6d modulations, eight biased
// d x d projections, four head norms of 128, two MLPs d -> 4d -> d); 38 single blocks of 141,591,808 (a 3d
// modulation, q, k, v, the MLP's d -> 4d, proj_out 5d -> d, two head norms); the output norm's 2d modulation
// 18,880,512 and proj_out to 64, 196,672. Frozen: CLIP-L's text tower, T5 XXL's encoder (at 512 tokens, dev's
// max_sequence_length) and the 16-channel VAE's encoder.
TEST(DiffusersFlux, DevParameterCountAndFrozenEncoders) {
    ModelFeatures f = features_of("flux_dev_transformer.json");
    EXPECT_EQ(f.trainable_params, 11901408320);
    EXPECT_EQ(split(f).frozen, 123060480.0 + 4762310656.0 + 34274208.0);
    Model m = resolve_model(fixture("flux_dev_transformer.json"), at_image(512));
    EXPECT_EQ(latent_input(m, "x_embedder"), (Shape{1, 32 * 32, 64}));  // 512 px: 64 x 64 latents packed 2 x 2
    EXPECT_EQ(latent_input(m, "context_embedder"), (Shape{1, 512, 4096}));
    json schnell = fixture("flux_dev_transformer.json");
    schnell["guidance_embeds"] = false;  // FLUX.1 schnell: no guidance embedder, T5 at 256 tokens
    ModelFeatures s = compute_features(resolve_model(schnell, at_image(512)), Precision::fp32);
    EXPECT_EQ(s.trainable_params, 11901408320 - 10229760);
    EXPECT_NE(error_of(fixture("flux_dev_transformer.json"), at_image(1000)).find("multiple of 16"), std::string::npos);
}

// LoRA on q, k, v, o: per double block eight d x d projections (r 2d each), per single block q, k, v (no output
// projection of its own): (19 x 8 + 38 x 3) x r x 2 x 3072 at rank 4 = 6,537,216.
TEST(DiffusersFlux, LoraAdaptsTheAttentionProjections) {
    FineTune ft;
    ft.mode = FineTuneMode::lora;
    ft.rank = 4;
    ft.targets = {"q", "k", "v", "o"};
    EXPECT_EQ(features_of("flux_dev_transformer.json", at_image(512), ft).trainable_params, (19 * 8 + 38 * 3) * 4 * 6144);
}

TEST(DiffusersConfig, BadUNetConfigsNameTheField) {
    auto refused = [](json config, const std::string& field) {
        std::string e = error_of(config);
        EXPECT_NE(e.find(field), std::string::npos) << field << ": " << e;
    };
    json base = fixture("sd15_unet.json");
    json c = base;
    c.erase("block_out_channels");
    refused(c, "missing field 'block_out_channels'");
    c = base, c["block_out_channels"] = {320, -640, 1280, 1280};
    refused(c, "block_out_channels");
    c = base, c["block_out_channels"] = {320, 640, 1280};
    refused(c, "one entry per block");
    c = base, c["down_block_types"][0] = "AttnDownBlock2D";
    refused(c, "down block type 'AttnDownBlock2D'");
    c = base, c["up_block_types"][1] = "KCrossAttnUpBlock2D";
    refused(c, "up block type 'KCrossAttnUpBlock2D'");
    c = base, c["attention_head_dim"] = {8, 8};
    refused(c, "attention_head_dim");
    c = base, c["attention_head_dim"] = 7;
    refused(c, "attention heads");
    c = base, c["layers_per_block"] = 0;
    refused(c, "layers_per_block");
    c = base, c["cross_attention_dim"] = "768";
    refused(c, "cross_attention_dim");
    c = base, c["class_embed_type"] = "timestep";
    refused(c, "class_embed_type");
    c = base, c["norm_num_groups"] = 48;
    refused(c, "groups");
    c = base, c["transformer_layers_per_block"] = 1.5;
    refused(c, "transformer_layers_per_block");
    c = base, c["transformer_layers_per_block"] = 200000;
    refused(c, "transformer_layers_per_block");
    c = base, c["block_out_channels"] = json(std::vector<int>(17, 320));
    refused(c, "17 levels");
    // An image whose latents the three downsamplings cannot halve evenly.
    EXPECT_NE(error_of(base, at_image(520)).find("multiple of 64"), std::string::npos);
}

TEST(DiffusersConfig, BadSd3ConfigsNameTheField) {
    json base = fixture("sd3_medium_transformer.json");
    json c = base;
    c["caption_projection_dim"] = 1000;
    EXPECT_NE(error_of(c).find("caption_projection_dim"), std::string::npos);
    c = base, c["qk_norm"] = "layer_norm";
    EXPECT_NE(error_of(c).find("qk_norm"), std::string::npos);
    c = base, c["dual_attention_layers"] = {0, 30};
    EXPECT_NE(error_of(c).find("dual_attention_layers"), std::string::npos);
    c = base, c["num_layers"] = -1;
    EXPECT_NE(error_of(c).find("num_layers"), std::string::npos);
    c = base, c["num_attention_heads"] = 2147483647, c["attention_head_dim"] = 2147483647;
    EXPECT_NE(error_of(c).find("num_attention_heads x attention_head_dim"), std::string::npos) << error_of(c);
    // 4096 px: 256 patches a side, over the position table's 192.
    EXPECT_NE(error_of(base, at_image(4096)).find("pos_embed_max_size"), std::string::npos);
}

// SD3.5 Medium's dual-attention blocks and QK-norm: each dual block adds a self-attention (4 (d^2 + d) and two
// head norms) and 3 d more modulation outputs (3 d^2 + 3 d); QK-norm adds 4 head norms of 64 per block.
TEST(DiffusersSD3, DualAttentionAndQkNormAddTheirParameters) {
    json base = fixture("sd3_medium_transformer.json");
    std::int64_t plain = compute_features(resolve_model(base, at_image(512)), Precision::fp32).trainable_params;
    json c = base;
    c["qk_norm"] = "rms_norm";
    c["dual_attention_layers"] = {0, 1, 2};
    std::int64_t d = 1536, with = compute_features(resolve_model(c, at_image(512)), Precision::fp32).trainable_params;
    EXPECT_EQ(with - plain, 24 * 4 * 64 + 3 * (4 * (d * d + d) + 2 * 64 + 3 * d * d + 3 * d));
}

// --encoders cached (train_text_to_image_sdxl's precomputed latents and text embeddings): the step is the
// denoiser's alone, its input the latents; the model still says the image it was built for.
TEST(DiffusersPipeline, CachedEncodersLeaveOnlyTheDenoiser) {
    ModelInputs in = at_image(0);
    in.cached_encoders = true;
    Model m = resolve_model(fixture("sdxl_unet.json"), in);
    ModelFeatures f = compute_features(m, Precision::fp32);
    EXPECT_EQ(f.params, 2567463684);
    EXPECT_EQ(split(f).frozen, 0.0);
    EXPECT_EQ(m.image, 1024);
    EXPECT_EQ(latent_input(m, "conv_in"), (Shape{1, 4, 128, 128}));
    EXPECT_TRUE(latent_input(m, "vae_encoder.conv_in").empty());
    ModelFeatures run = features_of("sdxl_unet.json", at_image(0));
    EXPECT_LT(f.forward_flops, 0.6 * run.forward_flops);  // the VAE encoder alone is 4.9 of 11.8 TFLOPs
    EXPECT_DOUBLE_EQ(f.backward_flops(), run.backward_flops());  // the encoders had no backward
}
